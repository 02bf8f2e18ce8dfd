#!/usr/bin/env bash
# Correctness of kernel variant directories (made with dev/kernel_variant.sh) on the GPU machine, one device call,
# after a build into build-gpu: the dense and grouped FP8 GPU tests under each variant's kernels (every kernel is
# JIT-compiled again: about 90 s per variant, so four fit one call), and with SANITIZE=1 also memcheck + racecheck
# on two small kernels. Build first: dev/build_gpu.sh.
#
#   dev/verify_variants.sh variants/a variants/b ...     (logs under $OUT; a summary line per variant at the end)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
summary=()
for dir in "$@"; do
    name=$(basename "$dir")
    export TESSERA_KERNEL_DIR
    TESSERA_KERNEL_DIR=$(cd "$dir" && pwd)
    log="$OUT/verify_$name.log"
    timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_fp8_gemm_gpu.py \
        tests/python/test_fp8_grouped_gpu.py >"$log" 2>&1
    summary+=("$name: $(tail -1 "$log")")
    if [ -n "${SANITIZE:-}" ]; then
        for tool in memcheck racecheck; do
            verdict=clean
            timeout 200 compute-sanitizer --tool $tool --error-exitcode 1 python3 -m pytest -q -p no:cacheprovider \
                tests/python/test_fp8_gemm_gpu.py -k 'test_odd_shapes and 33-136' >>"$log" 2>&1 || verdict=FAILED
            timeout 200 compute-sanitizer --tool $tool --error-exitcode 1 python3 -m pytest -q -p no:cacheprovider \
                tests/python/test_fp8_grouped_gpu.py -k 'test_masked_edges' >>"$log" 2>&1 || verdict=FAILED
            summary+=("$name $tool: $verdict")
        done
    fi
    unset TESSERA_KERNEL_DIR
done
printf '%s\n' "${summary[@]}" | tee "$OUT/verify_summary.txt"
