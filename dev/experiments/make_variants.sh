#!/usr/bin/env bash
# Materializes each prepared patch of dev/experiments as variants/<patch name> (HEAD's kernels with the patch's
# kernel hunks), here, where git is: the GPU machine has none, so name the directories in the device tool's carry.
#
#   dev/experiments/make_variants.sh            (then a device script of the session runs them, with the directories in carry)
set -euo pipefail
shopt -s nullglob  # no patch waiting: nothing to do
cd "$(dirname "$0")/../.."
for patch in dev/experiments/*.patch; do
    name=$(basename "$patch" .patch)
    if grep -q '^diff --git a/src/' "$patch"; then
        # Host code changes too: its kernels alone would not match main's host (e.g. TMA box sizes).
        echo "skipped $patch: it changes host code, so it runs as a whole tree (see its script in dev/experiments)" >&2
        continue
    fi
    dev/kernel_variant.sh HEAD "variants/$name" >/dev/null
    sed '/^diff --git a\/tests/,$d' "$patch" | patch -s -p2 -d "variants/$name"
    echo "variants/$name"
done
