#!/usr/bin/env bash
# Builds the benchmark's live peer, DeepGEMM, in place from a checkout in the git-ignored folder peer/DeepGEMM (or
# $1): its Python extension next to its sources, so that bench/run.py imports it from there. The checkout must hold
# its pinned submodules (third-party/cutlass, third-party/fmt); the GPU machine has no network, so the checkout
# travels with the tree. About 70-90 s on 16 cores.
#
#   bench/peer/build.sh [CHECKOUT]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dg=$(cd "${1:-$root/peer/DeepGEMM}" && pwd)
for sub in third-party/cutlass/include/cute third-party/fmt/include deep_gemm/include/deep_gemm setup.py; do
    [ -e "$dg/$sub" ] || { echo "bench/peer/build.sh: $dg has no $sub (a DeepGEMM checkout with submodules?)" >&2; exit 2; }
done
cd "$dg"
ln -sfn "$dg/third-party/cutlass/include/cutlass" deep_gemm/include/cutlass
ln -sfn "$dg/third-party/cutlass/include/cute" deep_gemm/include/cute
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} MAX_JOBS=${MAX_JOBS:-$(nproc)} DG_USE_LOCAL_VERSION=0
start=$SECONDS
python3 setup.py build_ext --inplace >"${TMPDIR:-/tmp}/deep_gemm_build.log" 2>&1 || {
    tail -30 "${TMPDIR:-/tmp}/deep_gemm_build.log" >&2; echo "bench/peer/build.sh: build failed" >&2; exit 1; }
ls deep_gemm/_C*.so >/dev/null
echo "DeepGEMM built in $dg in $((SECONDS - start)) s"
