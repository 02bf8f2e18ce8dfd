#!/usr/bin/env bash
# The mainloop-overlap experiments in one device call (after a build into build-gpu, e.g. STEPS=quick
# scripts/gpu_check.sh in the same command): the overlap probe, the ncu stall profile, and an A/B sweep of each
# kernel variant directory given (made with dev/kernel_variant.sh) against the working tree's kernels.
#
#   dev/mainloop_experiments.sh [VARIANT_DIR ...]        (logs under $OUT; about 3 minutes plus 1 per variant)
#   SKIP_PROBE=1 dev/mainloop_experiments.sh ...         (only the variant sweeps: 5 dense 1D2D + 3 1D1D shapes)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
{
  if [ -z "${SKIP_PROBE:-}" ]; then
    echo "== overlap probe"
    nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels dev/fp8_gemm/overlap_probe.cu \
        -o /tmp/overlap_probe && timeout 120 /tmp/overlap_probe
    echo "== ncu"
    timeout 240 dev/ncu_promotion.sh 4096 7168 16384 2>&1 | tail -30
  fi
    variants=()
    for dir in "$@"; do variants+=(--variant "TESSERA_KERNEL_DIR=$(cd "$dir" && pwd)"); done
    if [ ${#variants[@]} -gt 0 ]; then
        for shape in "4096 7168 16384" "4096 4096 7168" "4096 2112 7168" "4096 576 7168" "4096 7168 2048" \
                     "576 4096 7168 --1d1d" "24576 4096 1536 --1d1d" "7168 4096 16384 --1d1d"; do
            # shellcheck disable=SC2086
            timeout 200 python3 bench/sweep_fp8.py $shape --reps 20 "${variants[@]}" 2>&1 | sed -n '/fastest/,$p'
        done
    fi
} 2>&1 | tee "$OUT/mainloop_experiments.log"
