#!/usr/bin/env bash
# The mainloop-overlap experiments in one device call (after a build into build-gpu, e.g. STEPS=quick
# scripts/gpu_check.sh in the same command): the overlap probe, the ncu stall profile, and an A/B sweep of each
# kernel variant directory given (made with dev/kernel_variant.sh) against the working tree's kernels.
#
#   dev/mainloop_experiments.sh [VARIANT_DIR ...]        (logs under $OUT; about 3 minutes plus 1 per variant)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
{
    echo "== overlap probe"
    nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels dev/fp8_gemm/overlap_probe.cu \
        -o /tmp/overlap_probe && timeout 120 /tmp/overlap_probe
    echo "== ncu"
    timeout 240 dev/ncu_promotion.sh 4096 7168 16384 2>&1 | tail -30
    variants=()
    for dir in "$@"; do variants+=(--variant "TESSERA_KERNEL_DIR=$(cd "$dir" && pwd)"); done
    if [ ${#variants[@]} -gt 0 ]; then
        for shape in "4096 7168 16384" "4096 4096 7168" "4096 2112 7168"; do
            timeout 200 python3 bench/sweep_fp8.py $shape --reps 20 "${variants[@]}" 2>&1 | sed -n '/fastest/,$p'
        done
    fi
} 2>&1 | tee "$OUT/mainloop_experiments.log"
