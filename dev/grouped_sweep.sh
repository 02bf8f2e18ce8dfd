#!/usr/bin/env bash
# Grouped-GEMM tuning questions in one device call, after a build into build-gpu (dev/build_gpu.sh):
#   1. masked tiles (MASKED_TILES): the suite under each forced tile (TESSERA_FP8_CONFIG applies to every masked
#      shape) next to the heuristic's picks. The v4 sweep (docs/perf/fp8_grouped.md) answered 256x128, 128x128,
#      128x144, 128x192, 64x256 and 64x128; none runs by default.
#   2. kernel variants (dirs made with dev/kernel_variant.sh): the contiguous and masked suites under each, next to
#      the working tree's kernels in the same call.
#   3. k-grouped by default, and (PAIRS=1) with the opt-in pairs (TESSERA_FP8_KGROUPED_CLUSTER=1: 2x1 clusters, B
#      multicast; v5 measured them 1 % slower, so they no longer run unless asked).
#
#   dev/grouped_sweep.sh [VARIANT_DIR ...]             (about 1 minute per suite run; geomeans at the end)
#   MASKED_TILES="128x128 128x192" dev/grouped_sweep.sh   (the masked suite under each forced tile too)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
export TESSERA_COMMIT=${TESSERA_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
# Two files come back however many runs there are (the device tool returns a limited number of files): the tables
# in grouped_sweep.log, the JSON lines (each tagged with its run's label) in grouped_sweep.jsonl.
: >"$OUT/grouped_sweep.jsonl"
suite() {  # suite LABEL ARGS...
    local label=$1 json
    shift
    json=$(mktemp)
    echo "=== $label"
    timeout 240 python3 bench/run.py "$@" --json "$json" 2>&1 | grep -v '^{' | grep -v -i "warn"
    sed "s/^{/{\"sweep\": \"$label\", /" "$json" >>"$OUT/grouped_sweep.jsonl"
    rm -f "$json"
}
{
    suite masked-heuristic --suite deepgemm-masked
    [ $# -gt 0 ] && suite contiguous-heuristic --suite deepgemm-grouped-contiguous
    for tile in ${MASKED_TILES-}; do
        TESSERA_FP8_CONFIG=$tile suite "masked-$tile" --suite deepgemm-masked
    done
    for dir in "$@"; do
        TESSERA_KERNEL_DIR=$(cd "$dir" && pwd) suite "variant-$(basename "$dir")" \
            --suite deepgemm-grouped-contiguous --suite deepgemm-masked
    done
    suite kgrouped --suite deepgemm-kgrouped
    [ "${PAIRS:-0}" = 1 ] && TESSERA_FP8_KGROUPED_CLUSTER=1 suite kgrouped-pairs --suite deepgemm-kgrouped
} >"$OUT/grouped_sweep.log" 2>&1
grep -E "^===|geomean" "$OUT/grouped_sweep.log"
