#!/usr/bin/env bash
# Materializes the kernel headers of a git revision into a directory, for A/B runs against the working tree's
# kernels without rebuilding the library (kernels are JIT-compiled; the cache key includes every header's content):
#
#   dev/kernel_variant.sh exp/turn-after-wait variants/turnwait
#   python bench/sweep_fp8.py 4096 7168 16384 --variant TESSERA_KERNEL_DIR=$PWD/variants/turnwait
#
# The directory travels to the GPU machine when it is neither tracked nor ignored (or name it in the device tool's
# carry list).
set -euo pipefail
rev=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir"
git archive "$rev" kernels | tar -x -C "$dir" --strip-components=1
echo "kernels of $(git rev-parse --short "$rev") in $dir"
