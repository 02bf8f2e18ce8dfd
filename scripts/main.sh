#!/usr/bin/env bash
# The main job. On a GPU machine: the benchmark (bench/run.py, the five FP8 suites by default; DeepGEMM measured in
# the same process when a built checkout is in peer/DeepGEMM, else its recorded figures, labelled so). Without a GPU:
# says so and compiles every kernel for sm_90a with both compilers (no-spill check), which is what such a machine
# can do. Arguments go to bench/run.py (e.g. --suite fp8-dense --quick --json out.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== set-up (scripts/setup.sh)"
source scripts/setup.sh
export PATH=/usr/local/cuda/bin:$PATH
echo "== build (build/)"
cmake -S . -B build -G Ninja -DPython_EXECUTABLE="$PYTHON" | grep -E "^-- (Build files|Configuring done)" || true
cmake --build build -j"$(nproc)"
./build/tessera info
if nvidia-smi -L >/dev/null 2>&1; then
    echo "== benchmark"
    PYTHONPATH=$PWD/build/python${PYTHONPATH:+:$PYTHONPATH} "$PYTHON" -u bench/run.py "${@:---suite=fp8}"
else
    echo "== no GPU on this machine: compiling the kernels for sm_90a instead of benchmarking"
    ./build/tessera compile --compiler both
fi
