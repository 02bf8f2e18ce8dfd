#!/usr/bin/env bash
# Device calls for the two experiments prepared in the 12th session (docs/perf/fp8_grouped.md v8), after
# dev/build_gpu.sh. Make the variants locally first (the device copy's .git may be stale) and carry them:
#   dev/kernel_variant.sh exp/d-prefetch variants/dpf                 (lead 4 k-blocks)
#   dev/kernel_variant.sh exp/d-prefetch-lead8 variants/dpf8          (lead 8)
#   dev/kernel_variant.sh exp/d-prefetch-evict-last variants/dpfel    (lead 4, evict_last L2 policy)
#   dev/kernel_variant.sh exp/masked-128x192 variants/masked192
#   device: dev/build_gpu.sh && PART=dprefetch dev/ab_d_prefetch_masked192.sh   (carry: ["variants"]; ~6 min)
#           dev/build_gpu.sh && PART=masked dev/ab_d_prefetch_masked192.sh      (~4 min)
# 1. exp/d-prefetch*: 1D1D tiles prefetch D into L2 before the TMA reduce-add. Correctness of the first (1D1D,
#    k-grouped GPU tests, memcheck on one), then the k-grouped suite and two wgrad rows, main against each.
# 2. exp/masked-128x192: masked 128x192 run whole (8 B of spill, so the spill check is off for it). Correctness
#    (masked GPU tests forced to 128x192), then the masked suite: main's picks against forced 128x192.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python} TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-/tmp/tessera-cache}
dpf=$PWD/variants/dpf m192=$PWD/variants/masked192
part=${PART:-dprefetch masked}
suite() { timeout 150 python3 bench/run.py "$@" 2>&1 | grep -E "^ *g[0-9]|geomean|WARN"; }
{
  if [[ $part == *dprefetch* ]]; then
    echo "=== d-prefetch: tests"
    TESSERA_KERNEL_DIR=$dpf timeout 120 python3 -m pytest -q -p no:cacheprovider tests/python/test_fp8_gemm_gpu.py \
        tests/python/test_fp8_grouped_gpu.py -k "1d1d or k_grouped" 2>&1 | tail -2
    TESSERA_KERNEL_DIR=$dpf timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 python3 -m pytest -q \
        -p no:cacheprovider tests/python/test_fp8_grouped_gpu.py -k "k_grouped_edges and 16-small" 2>&1 | tail -2
    echo "=== k-grouped: main"; suite --suite deepgemm-kgrouped
    for v in dpf dpf8 dpfel; do
        echo "=== k-grouped: $v"; TESSERA_KERNEL_DIR=$PWD/variants/$v suite --suite deepgemm-kgrouped
    done
    for s in "7168 4096 2048" "24576 4096 1536"; do
        # shellcheck disable=SC2086
        timeout 120 python3 bench/sweep_fp8.py $s --1d1d --reps 20 --variant TESSERA_KERNEL_DIR=$dpf \
            --variant TESSERA_KERNEL_DIR=$PWD/variants/dpf8 --variant TESSERA_KERNEL_DIR=$PWD/variants/dpfel |
            grep -A5 "^=="
    done
  fi
  if [[ $part == *masked* ]]; then
    echo "=== masked 128x192 whole: tests"
    TESSERA_KERNEL_DIR=$m192 TESSERA_JIT_CHECK_SPILLS=0 TESSERA_FP8_CONFIG=128x192 timeout 120 python3 -m pytest -q \
        -p no:cacheprovider tests/python/test_fp8_grouped_gpu.py -k "masked" 2>&1 | tail -2
    echo "=== masked: main"; suite --suite deepgemm-masked
    echo "=== masked: 128x192 whole"
    TESSERA_KERNEL_DIR=$m192 TESSERA_JIT_CHECK_SPILLS=0 TESSERA_FP8_CONFIG=128x192 suite --suite deepgemm-masked
    echo "=== masked: 128x192 as two N halves (main kernels)"; TESSERA_FP8_CONFIG=128x192 suite --suite deepgemm-masked
  fi
} >"$OUT/ab.log" 2>&1
cat "$OUT/ab.log"
