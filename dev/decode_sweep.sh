#!/usr/bin/env bash
# Forced-config sweeps of the decode shapes whose picks are in question (docs/perf/fp8_gemm.md v5-v8), in one device
# call after a build into build-gpu. No kernel change is needed: TESSERA_FP8_CONFIG forces each plan.
#
#   dev/decode_sweep.sh              (logs under $OUT; about 3 minutes)
#
# Answered in v8 (kept out): multicast for the M = 128 two-row-block plans (slower, both directions), two CTAs per SM
# on the one-wave M = 4096 shapes (12-50 % slower), 1x7168x2048 64x64, 1x32768x512 64x256, 128x2112x7168 128x72 s4,
# 1x7168x16384 64x256 s4 (now the picks).
#
# Questions:
# - M = 128 runs at ~3 TB/s (128x7168x16384: 40.3 us against a 30.0 us floor). Its two-row-block plan reads B twice
#   (once per row block) and A once per n-block: 64x112 moves ~370 MB through L2 for 151 MB of operands. Plans with
#   fewer n-blocks cut that: 128x256 split 4 (wgmma in two halves) reads B once and A 28 times (~175 MB) but pays a
#   bigger reduction; 64x256 split 2 reads B twice and A 28 times (~290 MB). Is L2 traffic what bounds M = 128?
# - The same for 128x4096x7168 and 128x24576x1536.
# - M = 1: does a wider split-K tile help 1x4096x7168 and 1x2112x7168 the way 64x256 s4 helped 1x7168x16384?
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
sweep() { timeout 150 python3 bench/sweep_fp8.py "$@" --reps 20 2>&1 | sed -n '/fastest/,$p'; }
{
    sweep 128 7168 16384 128x256:s4 64x256:s2 128x128:s2 128x112:s2
    sweep 128 4096 7168 128x256:s4 64x256:s2 64x128:s2 128x128:s4
    sweep 128 24576 1536 64x256 128x256
    sweep 1 4096 7168 64x256:s4 64x256:s8 64x192:s4
    sweep 1 2112 7168 64x256:s8 64x192:s8
} 2>&1 | tee "$OUT/decode_sweep.log"
