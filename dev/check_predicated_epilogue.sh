#!/usr/bin/env bash
# 13th session, after dev/build_gpu.sh: the grouped kinds with the predicated direct-store epilogue (no R2UR in the
# k-block loop of masked, psum and k-grouped kernels) and the 1D1D D prefetch. Python GPU tests, memcheck and
# racecheck on grouped edge cases, the three grouped suites, dev/masked_probe.py, and the wgrad short-K rows.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python} TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-/tmp/tessera-cache}
PYT="python3 -m pytest -q -p no:cacheprovider"
suite() { timeout 170 python3 bench/run.py "$@" 2>&1 | grep -E "^ *g[0-9].*block|geomean|WARN"; }
{
  echo "=== tests"
  timeout 200 $PYT tests/python/test_fp8_gemm_gpu.py tests/python/test_fp8_grouped_gpu.py \
      tests/python/test_layout_gpu.py tests/python/test_binding_gpu.py 2>&1 | tail -3
  echo "=== sanitizers"
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 $PYT tests/python/test_fp8_grouped_gpu.py \
      -k "test_masked_edges or test_k_grouped_edges" 2>&1 | tail -2
  timeout 90 compute-sanitizer --tool racecheck --error-exitcode 1 $PYT tests/python/test_fp8_grouped_gpu.py \
      -k "(test_masked_edges and mmax77) or (test_k_grouped_edges and m200)" 2>&1 | tail -2
  for s in masked kgrouped grouped-contiguous; do echo "=== $s"; suite --suite deepgemm-$s; done
  echo "=== masked probe"
  timeout 150 python3 dev/masked_probe.py 128x144 128x192 2>&1 | grep -v -i "warn"
  for s in "7168 4096 2048" "24576 4096 1536"; do
    # shellcheck disable=SC2086
    timeout 90 python3 bench/sweep_fp8.py $s --1d1d --reps 20 | grep -A2 "^=="
  done
} >"$OUT/check.log" 2>&1
cat "$OUT/check.log"
