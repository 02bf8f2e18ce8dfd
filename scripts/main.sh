#!/usr/bin/env bash
# The main job: on a GPU machine, the benchmark; without a GPU, says so and compiles every kernel into the cache
# (sm_90a, both compilers, no-spill check), which is what a machine without a GPU can do.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build -G Ninja -DPython_EXECUTABLE="$(command -v ${PYTHON:-python3})" >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
if nvidia-smi -L >/dev/null 2>&1; then
    ./build/tessera info
    ./build/tessera bench "$@"
else
    echo "No GPU on this machine: compiling the kernels for sm_90a instead of benchmarking."
    ./build/tessera info
    ./build/tessera compile --compiler both
fi
