#!/usr/bin/env bash
# ctest cmake_package_consumer: installs the build into a temporary prefix (cmake --install), builds tests/consumer
# against it with find_package(tessera) outside the source and build trees, runs it there, and checks that the kernel
# headers it used, and those of the installed `tessera` command, are the prefix's copy. Cleans up after itself.
#   run.sh CMAKE BUILD_DIR CONSUMER_SOURCE_DIR GENERATOR
set -euo pipefail
cmake=$1 build=$2 source=$3 generator=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessera-consumer-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
unset TESSERA_KERNEL_DIR  # the library has to find them by itself

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
"$cmake" -S "$source" -B "$tmp/build" -G "$generator" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    >"$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
"$cmake" --build "$tmp/build" >"$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }

expect_prefix_kernels() {  # expect_prefix_kernels WHAT OUTPUT: the "kernels:" line of OUTPUT names the prefix's copy
    local dir
    dir=$(sed -n 's/^kernels: *//p' <<<"$2")
    if [ "$dir" != "$prefix/share/tessera/kernels" ]; then
        echo "FAIL: $1 reads kernel headers from '$dir', expected the installed $prefix/share/tessera/kernels"
        exit 1
    fi
}

cd "$tmp"
out=$(./build/tessera_consumer "$tmp/cache") || { echo "$out"; echo "FAIL: tessera_consumer exited non-zero"; exit 1; }
echo "$out"
expect_prefix_kernels tessera_consumer "$out"
grep -q '^kernel: sm_90a/fp8_gemm/' <<<"$out" || { echo "FAIL: no FP8 kernel compiled"; exit 1; }
[ -n "$(find "$tmp/cache" -type f)" ] || { echo "FAIL: the cache $tmp/cache is empty"; exit 1; }

if [ -x "$prefix/bin/tessera" ]; then
    out=$(TESSERA_CACHE_DIR=$tmp/cache "$prefix/bin/tessera" info)
    echo "$out"
    expect_prefix_kernels "the installed tessera command" "$out"
fi
echo "cmake_package_consumer: ok"
