#!/usr/bin/env bash
# The grouped kinds in one device call, after dev/build_gpu.sh: Python GPU tests, memcheck and racecheck on the masked
# and k-grouped edge cases (racecheck also on masked 128x192), the masked and k-grouped suites, dev/masked_probe.py at
# 128x192 (the masked code path against dense on the same work), then the dense suite. About 4 minutes; log in
# $OUT/check.log. Made in the 13th session (docs/perf/fp8_grouped.md v9).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python} TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-/tmp/tessera-cache}
PYT="python3 -m pytest -q -p no:cacheprovider"
# the table rows, geomeans and warnings; not the JSON lines (they start with "{" and repeat the rows)
suite() { timeout 170 python3 bench/run.py "$@" 2>&1 | grep -v "^{" | grep -E "^ *(g[0-9]|1d|[0-9]).*(block|us)|geomean|WARN|calibration"; }
{
  echo "=== tests"
  timeout 200 $PYT tests/python/test_fp8_gemm_gpu.py tests/python/test_fp8_grouped_gpu.py \
      tests/python/test_layout_gpu.py tests/python/test_binding_gpu.py 2>&1 | tail -3
  echo "=== sanitizers"
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 $PYT tests/python/test_fp8_grouped_gpu.py \
      -k "test_masked_edges or test_k_grouped_edges or (test_masked and 1024)" 2>&1 | tail -2
  timeout 90 compute-sanitizer --tool racecheck --error-exitcode 1 $PYT tests/python/test_fp8_grouped_gpu.py \
      -k "(test_masked_edges and mmax77) or (test_k_grouped_edges and m200)" 2>&1 | tail -2
  TESSERA_FP8_CONFIG=128x192 timeout 90 compute-sanitizer --tool racecheck --error-exitcode 1 $PYT \
      tests/python/test_fp8_grouped_gpu.py -k "test_masked_edges and mmax200-empty" 2>&1 | tail -2
  for s in masked kgrouped grouped-contiguous; do echo "=== $s"; suite --suite deepgemm-$s; done
  echo "=== masked probe"
  timeout 100 python3 dev/masked_probe.py 128x192 2>&1 | grep -v -i "warn"
  echo "=== dense"
  suite --suite deepgemm-dense
} >"$OUT/check.log" 2>&1
cat "$OUT/check.log"
