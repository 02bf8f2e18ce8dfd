#!/usr/bin/env bash
# A/B of whole-tree variants (dev/tree_variant.sh) against the working tree on the GPU machine, after
# dev/build_gpu.sh: builds each tree into its own build-gpu, runs the given bench/run.py suites ROUNDS times
# (default 2), alternating main and each tree so drift shows, and runs each tree's own Python GPU tests selected by
# TESTS (a pytest -k expression; default none).
#
#   dev/ab_trees.sh variants/tree-kg32 variants/tree-psum -- --suite deepgemm-kgrouped
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
trees=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do trees+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-/tmp/tessera-cache}
suite() {  # suite PYTHONPATH: the rows and geomeans of bench/run.py "$@"
    local pp=$1; shift
    PYTHONPATH=$pp timeout 300 python3 bench/run.py "$@" 2>&1 | grep -E "^ *(g[0-9]|1d).*block|geomean|WARN|rror|calibration"
}
{
  for t in "${trees[@]}"; do
      echo "=== build $t"
      { cmake -S "$t" -B "$t/build-gpu" -G Ninja -DPython_EXECUTABLE="$(command -v python3)" &&
        ninja -C "$t/build-gpu"; } >"$OUT/build-$(basename "$t").log" 2>&1 || { echo "build failed"; continue; }
      if [ -n "${TESTS:-}" ]; then
          (cd "$t" && PYTHONPATH=$PWD/build-gpu/python timeout 200 python3 -m pytest -q -p no:cacheprovider \
              tests/python/test_fp8_grouped_gpu.py tests/python/test_fp8_gemm_gpu.py -k "$TESTS" 2>&1 | tail -1)
      fi
  done
  for round in $(seq "${ROUNDS:-2}"); do
      echo "=== round $round: main"; suite "$PWD/build-gpu/python" "$@"
      for t in "${trees[@]}"; do
          echo "=== round $round: $t"; suite "$PWD/$t/build-gpu/python" "$@"
      done
  done
} 2>&1 | tee "$OUT/ab_trees.log"
