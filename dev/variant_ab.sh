#!/usr/bin/env bash
# A/B of one kernel variant directory (made with dev/kernel_variant.sh) against the working tree's kernels on dense
# shapes, each shape timed in the order tree, variant, tree (bench/sweep_fp8.py, heuristic pick, kineto after the
# 2 GB memset flush), so that drift during the call shows as a difference between the two tree rows.
#
#   dev/build_gpu.sh && dev/variant_ab.sh variants/base                    (about 25 s per shape)
#   SHAPES="4096x32768x512 7168x4096x2048:1d1d" dev/variant_ab.sh variants/base
source "$(dirname "$0")/gpu_env.sh"
variant=$(cd "$1" && pwd)
SHAPES=${SHAPES:-"4096x32768x512 4096x24576x1536 4096x7168x2048 4096x2112x7168 4096x576x7168 4096x4096x7168 \
4096x7168x16384 24576x4096x1536:1d1d 7168x4096x2048:1d1d"}
{
  for shape in $SHAPES; do
    dims=${shape%%:*}
    extra=()
    [[ $shape == *:1d1d ]] && extra=(--1d1d)
    # shellcheck disable=SC2086
    timeout 120 python3 bench/sweep_fp8.py ${dims//x/ } "${extra[@]}" --reps 20 \
        --variant "TESSERA_KERNEL_DIR=$variant" --variant "TESSERA_KERNEL_DIR=$PWD/kernels" 2>&1 | grep -v -i warn |
        sed -n '/fastest/,$p'
  done
} 2>&1 | tee "$OUT/variant_ab.log"
