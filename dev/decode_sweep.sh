#!/usr/bin/env bash
# Forced-config sweeps of the decode shapes whose picks are in question (docs/perf/fp8_gemm.md v5-v6), in one device
# call after a build into build-gpu. No kernel change is needed: TESSERA_FP8_CONFIG forces each plan.
#
#   dev/decode_sweep.sh              (logs under $OUT; about 3 minutes)
#
# Questions:
# - M = 128 two-row-block plans (64xBN, 1 warpgroup): every CTA reads its 64 rows of A in full from L2, 55-100 % on
#   top of its B bytes. Does A multicast across N-pairs (:1x2) make them faster? And the two row blocks read every B
#   tile twice (once from HBM, once hopefully from L2): does B multicast across the M-pair (:2x1) halve that?
# - 1x7168x2048: 64x64 (uniform B scale) against the pick 64x56, measured 8.2 vs 8.6 us twice in v5.
# - 1x32768x512: the N-split 64x256 (one wave) against 64x128 (two waves).
# - 128x2112x7168: 128x72 s4 against the pick 128x144 s8, 11.2 vs 12.6 us in v5.
# - Two CTAs per SM (:o2) for the one-wave M = 4096 shapes (not decode, but the same forced-config sweep).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
sweep() { timeout 150 python3 bench/sweep_fp8.py "$@" --reps 20 2>&1 | sed -n '/fastest/,$p'; }
{
    sweep 128 7168 16384 64x112:1x2 64x112:2x1 64x128:1x2 64x128:2x1 64x104:1x2
    sweep 128 4096 7168 64x64:1x2 64x64:2x1 64x56:1x2 64x72:1x2 64x72:2x1
    sweep 128 7168 2048 64x112:1x2 64x112:2x1 64x128:1x2
    sweep 128 24576 1536 64x192:1x2 64x192:2x1 128x192:1x2
    sweep 1 7168 2048 64x64 64x72
    sweep 1 32768 512 64x256 64x192
    sweep 128 2112 7168 128x72:s4 128x80:s4
    # One-wave M = 4096 shapes as two CTAs per SM (:o2, one consumer warpgroup each): the two CTAs' promotions can
    # overlap each other's wgmma without a shared full barrier pulling them into lockstep.
    sweep 4096 2112 7168 64x128:o2 64x144:o2 64x192:o2
    sweep 4096 576 7168 64x144:o2 64x96:o2 64x72:o2
} 2>&1 | tee "$OUT/decode_sweep.log"
