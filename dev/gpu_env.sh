# Sourced by the dev scripts that run on the GPU machine: strict mode without -e (one failed step should not stop the
# others), the repository root as working directory, $OUT (the device tool's output folder, else gpu-out) and the
# Python path of dev/build_gpu.sh's build.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
