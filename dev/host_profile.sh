#!/usr/bin/env bash
# Host path of the C++ entry points without a GPU: builds dev/host_stub/libcuda_stub.cpp as libcuda.so.1 (every
# driver call returns at once; kernels are still JIT-compiled for real) and runs `tessera bench` against it, so the
# host rows time tessera's own code with a zero-cost launch. With CALLGRIND=1 it also writes a callgrind profile of
# the same run (callgrind_annotate <file> for the breakdown). Needs a build in build/ (cmake -B build && ninja -C build).
#
#   dev/host_profile.sh                 (prints the bench rows; on the H200 the same rows include the driver's launch)
#   CALLGRIND=1 dev/host_profile.sh     (profile in /tmp/tessera-host-stub/callgrind.out)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=/tmp/tessera-host-stub
mkdir -p "$dir"
g++ -std=c++20 -O2 -fPIC -shared -I"${CUDA_HOME:-/usr/local/cuda}/include" dev/host_stub/libcuda_stub.cpp \
    -o "$dir/libcuda.so.1"
export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-$dir/cache}
./build/tessera bench
if [ -n "${CALLGRIND:-}" ]; then
    valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" ./build/tessera bench >/dev/null 2>&1
    callgrind_annotate "$dir/callgrind.out" 2>/dev/null | head -40
fi
