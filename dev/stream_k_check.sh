#!/usr/bin/env bash
# The opt-in stream-K plans (TESSERA_FP8_STREAM_K=1, docs/perf/fp8_gemm.md v10) in one device call, after a build into
# build-gpu (dev/build_gpu.sh): their GPU test, compute-sanitizer on one small stream-K shape (memcheck; racecheck,
# which sees the shared-memory side; the cross-CTA arrivals go through global memory), then every M = 4096 row of
# the dense suite with and without stream-K (bench/sweep_fp8.py: same call, outputs checked).
#
#   dev/stream_k_check.sh        (logs under $OUT; about 5 minutes)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python} TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-/tmp/tessera-cache}
PY=$(command -v python3)
{
    echo "== test_stream_k_opt_in"
    timeout 180 "$PY" -m pytest -q -p no:cacheprovider tests/python/test_fp8_gemm_gpu.py -k test_stream_k_opt_in 2>&1 |
        tail -5
    echo "== compute-sanitizer, 1300x5000x1536 with stream-K"
    cat >/tmp/stream_k_one.py <<'PY'
import sys
sys.path.insert(0, "tests/python")
import test_fp8_gemm_gpu as t
t.check_1d2d(1300, 5000, 1536)
print("ok")
PY
    for tool in memcheck racecheck; do
        TESSERA_FP8_STREAM_K=1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 1 "$PY" /tmp/stream_k_one.py 2>&1 |
            tail -2
    done
    for nk in "2112 7168" "7168 16384" "4096 7168" "24576 1536" "7168 2048"; do
        # shellcheck disable=SC2086
        timeout 120 "$PY" bench/sweep_fp8.py 4096 $nk --reps 20 --variant TESSERA_FP8_STREAM_K=1 2>&1 | sed -n '/fastest/,$p'
    done
} 2>&1 | tee "$OUT/stream_k_check.log"
