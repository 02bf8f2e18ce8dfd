#!/usr/bin/env bash
# Large-M tile questions in one device call, after dev/build_gpu.sh: forced tiles against the heuristic's pick on
# dense shapes (SHAPES, default the suite's M = 4096 rows), on the 1D1D wgrad shapes (WGRAD_CONFIGS) and on the
# contiguous suite (CONTIG_CONFIGS). v12 (docs/perf/fp8_gemm.md) asked whether 128x192 without a cluster beats
# 256x128 with A multicast and 128x192 with B multicast.
#
#   dev/large_tile_sweep.sh [CONFIG ...]        (default configs: 128x192 128x192:2x1; the pick always runs too)
#   SHAPES="8192x8192x8192 2048x7168x16384" CONTIG_CONFIGS="" WGRAD_CONFIGS="128x152 128x152:2x1" \
#       dev/large_tile_sweep.sh 256x128:1x2
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-/tmp/tessera-cache}
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(128x192 128x192:2x1)
shapes=${SHAPES-4096x7168x16384 4096x4096x7168 4096x7168x2048 4096x24576x1536 4096x32768x512 4096x2112x7168}
{
    for shape in $shapes; do
        # shellcheck disable=SC2046
        timeout 120 python3 bench/sweep_fp8.py $(tr x ' ' <<<"$shape") "${configs[@]}" --reps 20 | grep -A9 "^=="
    done
    for shape in ${WGRAD_CONFIGS:+7168x4096x16384 4096x4096x7168 7168x4096x2048}; do
        # shellcheck disable=SC2046,SC2086
        timeout 120 python3 bench/sweep_fp8.py $(tr x ' ' <<<"$shape") $WGRAD_CONFIGS --1d1d --reps 20 | grep -A9 "^=="
    done
    for forced in ${CONTIG_CONFIGS-heuristic 128x192}; do
        echo "=== contiguous $forced"
        [ "$forced" = heuristic ] && forced=""
        TESSERA_FP8_CONFIG=$forced timeout 200 python3 bench/run.py --suite deepgemm-grouped-contiguous 2>&1 |
            grep -v '^{' | grep -v -i warn
    done
} >"$OUT/large_tile_sweep.log" 2>&1
cat "$OUT/large_tile_sweep.log"
