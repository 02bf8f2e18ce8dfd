#!/usr/bin/env bash
# One call on the GPU machine: build, GPU tests (C++ and Python), compute-sanitizer on the GPU test binary, cold
# compile times with both compilers, and a short benchmark. Full logs go to $OUT (or ./gpu-out); a compact summary
# is printed last. Needs no network. STEPS=tests or STEPS=bench runs half (each fits one 10-minute device call);
# STEPS=quick runs the Python GPU tests, memcheck on a few dense kernels, racecheck on one dense kernel, one 128x256
# kernel (two N halves), two small split-K plans, the small masked edge cases and a masked 128x256 kernel with the
# stage-unrolled loop, the host-time rows and the dense suite: 450 s on the H200 (27th session; with the M_max = 4096
# masked racecheck and the cold compiles it overran a 10-minute device call). BENCH_ARGS overrides the benchmark
# suites; SANITIZER=light skips the slow grouped racecheck of the full run (about 4 minutes).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
PY=$(command -v python3)
BUILD=build-gpu
export TESSERA_CACHE_DIR=/tmp/tessera-cache PYTHONFAULTHANDLER=1
summary=()
step() {  # step NAME LOGFILE COMMAND...: runs, records pass/fail
    local name=$1 log=$2; shift 2
    local start=$SECONDS
    if "$@" >"$OUT/$log" 2>&1; then summary+=("$name: ok ($((SECONDS - start)) s)"); return 0
    else summary+=("$name: FAILED ($((SECONDS - start)) s, see $log)"); return 1; fi
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$OUT/gpu.txt" 2>&1
step configure build.log cmake -S . -B $BUILD -G Ninja -DTESSERA_WERROR=ON -DPython_EXECUTABLE="$PY" &&
step build build.log ninja -C $BUILD
if [ -x $BUILD/tessera ] && [ "${STEPS:-all}" = quick ]; then
    export PYTHONPATH=$BUILD/python
    step python-gpu pytest_gpu.log $PY -m pytest -q -p no:cacheprovider tests/python/test_fp8_gemm_gpu.py \
        tests/python/test_fp8_grouped_gpu.py tests/python/test_layout_gpu.py tests/python/test_binding_gpu.py
    cp "$OUT/pytest_gpu.log" "$OUT/ctest_gpu.log"  # the summary reads the test counts from there
    step sanitizer-fp8 sanitizer_fp8.log bash -c "compute-sanitizer --tool memcheck --error-exitcode 1 $PY -m pytest -q \
        -p no:cacheprovider tests/python/test_fp8_gemm_gpu.py -k 'test_odd_shapes and (33-136 or 129-4096)' && \
        compute-sanitizer --tool racecheck --error-exitcode 1 $PY -m pytest -q -p no:cacheprovider \
        tests/python/test_fp8_gemm_gpu.py -k 'test_odd_shapes and 33-136' && \
        compute-sanitizer --tool racecheck --error-exitcode 1 $PY -m pytest -q -p no:cacheprovider \
        tests/python/test_fp8_gemm_gpu.py -k 'test_forced_configs and 128x256-1000-4000' && \
        compute-sanitizer --tool memcheck --error-exitcode 1 $PY -m pytest -q -p no:cacheprovider \
        tests/python/test_fp8_gemm_gpu.py -k 'test_deepgemm_dense_shapes and (7168-16384-1 or 32768-512-1 or \
        2112-7168-128 or 7168-2048-1)' && \
        compute-sanitizer --tool racecheck --error-exitcode 1 $PY -m pytest -q -p no:cacheprovider \
        tests/python/test_fp8_gemm_gpu.py -k 'test_split_k_decode_shapes and (1-2112-3216 or 100-2112-7296)' && \
        compute-sanitizer --tool racecheck --error-exitcode 1 $PY -m pytest -q -p no:cacheprovider \
        tests/python/test_fp8_grouped_gpu.py -k '(test_masked_edges and not mmax4096) or \
        (test_masked_forced_configs and (128x256-3072 or 128x256-2048-1152))'"
    step bench bench.log bash -c "$BUILD/tessera bench && $PY bench/python_overhead.py && \
        $PY bench/run.py ${BENCH_ARGS:---suite deepgemm-dense} --json $OUT/bench.jsonl"
elif [ -x $BUILD/tessera ]; then
    step info info.log $BUILD/tessera info
  if [ "${STEPS:-all}" != bench ]; then
    step ctest-cpu ctest_cpu.log ctest --test-dir $BUILD -L cpu -j8 --output-on-failure
    step ctest-gpu ctest_gpu.log ctest --test-dir $BUILD -L gpu -V
    step sanitizer sanitizer.log bash -c "compute-sanitizer --tool memcheck --error-exitcode 1 $BUILD/tests/tessera_gpu_tests && \
        compute-sanitizer --tool racecheck --error-exitcode 1 $BUILD/tests/tessera_gpu_tests"
    step sanitizer-fp8 sanitizer_fp8.log bash -c "export PYTHONPATH=$BUILD/python; \
        compute-sanitizer --tool memcheck --error-exitcode 1 $PY -m pytest -q -p no:cacheprovider \
          tests/python/test_fp8_gemm_gpu.py -k 'test_odd_shapes and (33-136 or 129-4096)' && \
        compute-sanitizer --tool racecheck --error-exitcode 1 $PY -m pytest -q -p no:cacheprovider \
          tests/python/test_fp8_gemm_gpu.py -k 'test_odd_shapes and 33-136' && \
        compute-sanitizer --tool memcheck --error-exitcode 1 $PY -m pytest -q -p no:cacheprovider \
          tests/python/test_fp8_gemm_gpu.py -k 'split_k and (1-2112-3216 or 100-4096 or strided)' && \
        compute-sanitizer --tool racecheck --error-exitcode 1 $PY -m pytest -q -p no:cacheprovider \
          tests/python/test_fp8_gemm_gpu.py -k 'split_k and (1-2112-3216 or 100-4096)' && \
        compute-sanitizer --tool memcheck --error-exitcode 1 $PY -m pytest -q -p no:cacheprovider \
          tests/python/test_fp8_grouped_gpu.py -k 'edges or 256_groups or all_empty' && \
        { [ \"${SANITIZER:-full}\" = light ] || compute-sanitizer --tool racecheck --error-exitcode 1 $PY -m pytest -q \
          -p no:cacheprovider tests/python/test_fp8_grouped_gpu.py -k 'test_masked_edges or test_k_grouped_edges'; }"
    rm -rf /tmp/tessera-cold && step cold-compile compile.log env TESSERA_CACHE_DIR=/tmp/tessera-cold \
        $BUILD/tessera compile --compiler both
  fi
  if [ "${STEPS:-all}" != tests ]; then
    step bench bench.log bash -c "$BUILD/tessera bench && PYTHONPATH=$BUILD/python $PY bench/python_overhead.py && \
        PYTHONPATH=$BUILD/python $PY bench/run.py ${BENCH_ARGS:---suite deepgemm-dense --suite deepgemm-grouped-contiguous --suite deepgemm-grouped-psum \
        --suite deepgemm-masked --suite deepgemm-kgrouped} --json $OUT/bench.jsonl --plot $OUT/bench.png"
  fi
fi
{
    echo "== gpu"; cat "$OUT/gpu.txt"
    echo "== tests"; grep -E "tests passed|tests failed|Failed|\*\*\*|passed|FAILED" "$OUT/ctest_gpu.log" 2>/dev/null | tail -25
    echo "== sanitizer"; grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" "$OUT/sanitizer.log" "$OUT/sanitizer_fp8.log" 2>/dev/null | tail -8
    echo "== compile"; grep -E "compiled|FAILED|failed" "$OUT/compile.log" 2>/dev/null | tail -12
    echo "== bench"; grep -vE "^\{" "$OUT/bench.log" 2>/dev/null | tail -12; grep -E "^\{" "$OUT/bench.log" 2>/dev/null | tail -6
} | tee "$OUT/summary.txt"
printf '%s\n' "${summary[@]}" | tee -a "$OUT/summary.txt"
# The device tool returns at most 8 files: the secondary logs travel as one archive.
(cd "$OUT" && tar czf logs.tgz gpu.txt build.log info.log ctest_cpu.log sanitizer.log compile.log 2>/dev/null &&
    rm -f gpu.txt build.log info.log ctest_cpu.log sanitizer.log compile.log)
echo "SUMMARY: $(printf '%s; ' "${summary[@]}")"
