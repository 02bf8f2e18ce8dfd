#!/usr/bin/env bash
# 13th session, after dev/build_gpu.sh (carry: ["variants"]): the D prefetch's lead (fp8_grouped.md v9).
# variants/dpf (lead 4), dpf8 (lead 8), dpfh (8 on tiles of >= 32 k-blocks, else 4), made with dev/kernel_variant.sh
# from exp/d-prefetch, exp/d-prefetch-lead8, exp/d-prefetch-hybrid. Tests and memcheck on dpfh, then the k-grouped
# suite twice per variant (interleaved with main), the wgrad short-K rows, and dev/masked_probe.py (main kernels).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python} TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-/tmp/tessera-cache}
V=$PWD/variants
suite() { timeout 150 python3 bench/run.py "$@" 2>&1 | grep -E "^ *g[0-9].*block|geomean|WARN"; }
{
  echo "=== dpfh: tests"
  TESSERA_KERNEL_DIR=$V/dpfh timeout 120 python3 -m pytest -q -p no:cacheprovider tests/python/test_fp8_gemm_gpu.py \
      tests/python/test_fp8_grouped_gpu.py -k "1d1d or k_grouped" 2>&1 | tail -1
  TESSERA_KERNEL_DIR=$V/dpfh timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 python3 -m pytest -q \
      -p no:cacheprovider tests/python/test_fp8_grouped_gpu.py -k "k_grouped_edges" 2>&1 | tail -2
  for round in 1 2; do
    for v in main dpf dpf8 dpfh; do
      echo "=== k-grouped round $round: $v"
      if [ $v = main ]; then suite --suite deepgemm-kgrouped; else TESSERA_KERNEL_DIR=$V/$v suite --suite deepgemm-kgrouped; fi
    done
  done
  for s in "7168 4096 2048" "24576 4096 1536" "7168 4096 16384"; do
    # shellcheck disable=SC2086
    timeout 150 python3 bench/sweep_fp8.py $s --1d1d --reps 20 --variant TESSERA_KERNEL_DIR=$V/dpf \
        --variant TESSERA_KERNEL_DIR=$V/dpf8 --variant TESSERA_KERNEL_DIR=$V/dpfh | grep -A5 "^=="
  done
  echo "=== masked probe (main kernels)"
  timeout 200 python3 dev/masked_probe.py 128x144 128x192
} >"$OUT/ab.log" 2>&1
cat "$OUT/ab.log"
