#!/usr/bin/env bash
# Builds everything and runs the whole test suite (ctest: cpu, gpu and python labels) with the virtual environment
# scripts/setup.sh makes. Without a GPU the GPU tests are reported as skipped, and the kernel compile checks still run
# through NVRTC and NVCC. The kernel cache is a temporary directory, removed at the end, unless TESSERA_CACHE_DIR
# names one.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
export PATH=/usr/local/cuda/bin:$PATH
if [ -z "${TESSERA_CACHE_DIR:-}" ]; then
    TESSERA_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tessera-test-cache-XXXXXX")
    trap 'rm -rf "$TESSERA_CACHE_DIR"' EXIT
    export TESSERA_CACHE_DIR
fi
cmake -S . -B build -G Ninja -DTESSERA_WERROR=ON -DPython_EXECUTABLE="$PYTHON"
cmake --build build -j"$(nproc)"
ctest --test-dir build -j"$(nproc)" --output-on-failure
