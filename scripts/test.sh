#!/usr/bin/env bash
# Builds everything and runs the whole test suite (ctest: cpu, gpu and python labels). Without a GPU the GPU tests
# are reported as skipped, and the kernel compile checks still run through NVRTC and NVCC.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
export PATH=/usr/local/cuda/bin:$PATH
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-$(mktemp -d /tmp/tessera-test-cache-XXXXXX)}
cmake -S . -B build -G Ninja -DTESSERA_WERROR=ON -DPython_EXECUTABLE="$(command -v ${PYTHON:-python3})"
cmake --build build -j"$(nproc)"
ctest --test-dir build -j"$(nproc)" --output-on-failure
