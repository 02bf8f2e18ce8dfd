#!/usr/bin/env bash
# Forced-config sweeps of the decode shapes whose picks are in question (docs/perf/fp8_gemm.md v5-v8), in one device
# call after a build into build-gpu. No kernel change is needed: TESSERA_FP8_CONFIG forces each plan.
#
#   dev/decode_sweep.sh [VARIANT_DIR ...]   (logs under $OUT; about 90 s, plus about 70 s per variant directory;
#                                            each config's output is checked once)
#
# First the TMA streaming ceiling (dev/stream_probe.cu: how fast B can reach shared memory with no math, by load
# pattern). With variant directories (dev/kernel_variant.sh), every decode shape's heuristic pick is then timed
# under each variant's kernels next to the working tree's (e.g. variants/b-l2-bursts4: B prefetched into L2 in bursts).
#
# Answered in v8 (kept out): multicast for the M = 128 two-row-block plans (slower, both directions), two CTAs per SM
# on the one-wave M = 4096 shapes (12-50 % slower), 1x7168x2048 64x64, 1x32768x512 64x256, 128x2112x7168 128x72 s4,
# 1x7168x16384 64x256 s4 (now the picks).
#
# Questions (v9): the decode plans that leave SMs idle or read B in small tiles, against legal plans that cover
# 128 SMs. (A 1D2D tile wider than 128 columns must not span three B-scale blocks: 224 is illegal.)
# - 1x4096x7168: 64x144 s4 covers 116 SMs; 64x128 s4 and 64x256 s8 cover 128.
# - 128x4096x7168: 64x64 (two row blocks, 128 tiles) against 128x128 s4, 64x128 s2, 128x256 s8 (128 CTAs each).
# - 128x7168x16384: 64x112 (two row blocks) reads B twice; 128x256 s4 reads it once on 112 CTAs.
# - 1x2112x7168: 64x144 s8 (120 CTAs) against 64x96 s6 (132).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
sweep() { timeout 150 python3 bench/sweep_fp8.py "$@" --reps 20 2>&1 | sed -n '/fastest/,$p'; }
variants=()
for dir in "$@"; do variants+=(--variant "TESSERA_KERNEL_DIR=$(cd "$dir" && pwd)"); done
{
    echo "== stream probe"
    nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels dev/stream_probe.cu -lcuda \
        -o /tmp/stream_probe && timeout 90 /tmp/stream_probe | grep -v '^{'
    sweep 1 4096 7168 64x128:s4 64x256:s8
    sweep 128 4096 7168 128x128:s4 64x128:s2 128x256:s8
    sweep 128 7168 16384 128x256:s4
    sweep 1 2112 7168 64x96:s6
    if [ ${#variants[@]} -gt 0 ]; then
        for m in 1 128; do
            for nk in "2112 7168" "576 7168" "24576 1536" "32768 512" "7168 16384" "4096 7168" "7168 2048"; do
                # shellcheck disable=SC2086
                sweep $m $nk "${variants[@]}"
            done
        done
    fi
} 2>&1 | tee "$OUT/decode_sweep.log"
