#!/usr/bin/env bash
# Configure (if needed) and build into build-gpu on the GPU machine, quietly: a fresh machine has no build tree, so
# every device call that uses dev/*.sh starts with this. Log in $OUT/build.log; prints the last lines on failure.
#
#   dev/build_gpu.sh && dev/verify_variants.sh variants/a ...
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
if { cmake -S . -B build-gpu -G Ninja -DPython_EXECUTABLE="$(command -v python3)" && ninja -C build-gpu; } \
        >"$OUT/build.log" 2>&1; then
    echo "build-gpu: ok"
else
    tail -20 "$OUT/build.log"
    exit 1
fi
