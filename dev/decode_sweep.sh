#!/usr/bin/env bash
# Forced-config sweeps of the decode shapes whose picks are in question (docs/perf/fp8_gemm.md v5-v8), in one device
# call after a build into build-gpu. No kernel change is needed: TESSERA_FP8_CONFIG forces each plan.
#
#   dev/decode_sweep.sh [VARIANT_DIR ...]   (logs under $OUT; about 5 minutes, plus about 70 s per variant directory;
#                                            each config's output is checked once)
#
# First the timeline probe (dev/fp8_gemm/timeline_probe.cu: when the decode plans' CTAs reach each event), and with
# STREAM_PROBE=1 the TMA streaming ceiling (dev/stream_probe.cu, answered in v10: 3.0-3.13 TB/s on 117 MB under the
# memset flush). With variant directories (dev/kernel_variant.sh), every decode shape's heuristic pick is then timed
# under each variant's kernels next to the working tree's.
#
# Answered (kept out): multicast for the M = 128 two-row-block plans and two CTAs per SM at M = 4096 (v8); the v9
# SM-coverage and L2-traffic questions (v10: every pick won); L2 prefetch bursts (v10: 20-35 % slower);
# 64x128 for 128x7168xK (v10: now the pick).
#
# Questions (v10): do two CTAs per SM (:o2, each with one consumer warpgroup and half the shared memory) take the
# fixed time off the decode plans, where our CTAs stay active ~1 us longer than cuBLASLt's? One CTA's prologue, first
# round trip and store would overlap the other's streaming.
# - 1x7168x2048 (64x64, 112 CTAs): 64x32:o2 (224 tiles on 264 CTAs), 64x56:o2 (128).
# - 128x7168x2048 and 128x7168x16384 (64x128, 112 CTAs): 64x64:o2 (224), 64x56:o2 (256).
# - 128x4096x7168 (64x64, 128 CTAs): 64x32:o2 (256).
# - 128x2112x7168 (128x72 split-K 4): 64x32:o2 (132).
# - 128x24576x1536 (128x192, 128 CTAs): 64x192:o2 (256 tiles; 2 stages, the wgmma split in two).
# And: do short A boxes (TESSERA_FP8_SMALL_M_BOX=1: 16-row TMA boxes of A and SFA at M = 1 instead of 64, as
# DeepGEMM's BLOCK_M = 16) take time off the M = 1 rows? Every M = 1 shape, heuristic pick with and without.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
sweep() { timeout 150 python3 bench/sweep_fp8.py "$@" --reps 20 2>&1 | sed -n '/fastest/,$p'; }
variants=()
for dir in "$@"; do variants+=(--variant "TESSERA_KERNEL_DIR=$(cd "$dir" && pwd)"); done
{
    echo "== timeline probe"
    nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels dev/fp8_gemm/timeline_probe.cu -lcuda \
        -o /tmp/timeline_probe && timeout 60 /tmp/timeline_probe
    if [ "${STREAM_PROBE:-0}" = 1 ]; then
        echo "== stream probe"
        nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels dev/stream_probe.cu -lcuda \
            -o /tmp/stream_probe && timeout 90 /tmp/stream_probe | grep -v '^{'
    fi
    sweep 1 7168 2048 64x32:o2 64x56:o2
    sweep 128 7168 2048 64x64:o2 64x56:o2
    sweep 128 7168 16384 64x64:o2 64x56:o2
    sweep 128 4096 7168 64x32:o2
    sweep 128 2112 7168 64x32:o2
    sweep 128 24576 1536 64x192:o2
    for nk in "2112 7168" "576 7168" "24576 1536" "32768 512" "7168 16384" "4096 7168" "7168 2048"; do
        # shellcheck disable=SC2086
        sweep 1 $nk --variant TESSERA_FP8_SMALL_M_BOX=1
    done
    if [ ${#variants[@]} -gt 0 ]; then
        for m in 1 128; do
            for nk in "2112 7168" "576 7168" "24576 1536" "32768 512" "7168 16384" "4096 7168" "7168 2048"; do
                # shellcheck disable=SC2086
                sweep $m $nk "${variants[@]}"
            done
        done
    fi
} 2>&1 | tee "$OUT/decode_sweep.log"
