#!/usr/bin/env bash
# Materializes a whole git revision (host code and kernels) into a directory, for A/B runs of changes that a kernel
# variant (dev/kernel_variant.sh) cannot carry: a host-side planning change, say. The device machine builds it next
# to the working tree (dev/ab_trees.sh); carry the directory (device tool: carry ["variants"]).
#
#   dev/tree_variant.sh exp/kgrouped-reserve32 variants/tree-kg32
set -euo pipefail
rev=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir"
git archive "$rev" | tar -x -C "$dir"
echo "tree of $(git rev-parse --short "$rev") in $dir"
