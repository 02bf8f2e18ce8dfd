#!/usr/bin/env bash
# Compile-checks kernels/tessera/sm90/fp8_gemm.cuh for sm_90a over a set of configs, rendering exactly the JIT's
# translation unit. Prints registers / spills / stack from ptxas -v, the QGMMA count of the SASS and the time of each
# compile, and fails if any config spills, uses a stack frame or has no QGMMA.
# Usage: dev/fp8_gemm/check.sh [--nvrtc]   (run from anywhere; needs nvcc, cuobjdump; --nvrtc also needs g++)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${TMPDIR:-/tmp}/tessera_fp8_check"
mkdir -p "$OUT"
NVCC="${NVCC:-nvcc}"
# cuobjdump: $CUOBJDUMP, else on PATH, else next to nvcc (some toolkit installs ship without it).
CUOBJDUMP="${CUOBJDUMP:-$(command -v cuobjdump || echo "$(dirname "$(command -v "$NVCC")")/cuobjdump")}"
[[ -x "$CUOBJDUMP" ]] || { echo "cuobjdump not found: set CUOBJDUMP=/path/to/cuobjdump"; exit 2; }
fail=0

render() {  # name BM BN stages WGs clusterM clusterN shapeN shapeK mode
    cat > "$OUT/$1.cu" <<TU
#include <tessera/sm90/fp8_gemm.cuh>
namespace {
struct Config {
    static constexpr int kBlockM = $2, kBlockN = $3, kBlockK = 128, kNumStages = $4, kNumMathWarpgroups = $5,
        kClusterM = $6, kClusterN = $7, kNumSMs = 132,
        kShapeN = $8, kShapeK = $9, kShapeM = 0, kGroupSize = 8;
    static constexpr int kMode = ${10};
};
}
using TesseraKernel = tessera::sm90::Fp8GemmKernel<Config>;
extern "C" __global__ void __launch_bounds__(TesseraKernel::kNumThreads, 1)
tessera_sm90_fp8_gemm(const __grid_constant__ TesseraKernel::Params params) { TesseraKernel::run(params); }
TU
}

check() {
    local name=$1
    render "$@"
    local t0 t1 log
    t0=$(date +%s.%N)
    log=$("$NVCC" -std=c++20 -gencode=arch=compute_90a,code=sm_90a -cubin -O3 -I"$ROOT/kernels" -Xptxas=-v \
        -o "$OUT/$name.cubin" "$OUT/$name.cu" 2>&1) || { echo "$name: COMPILE FAILED"; echo "$log"; fail=1; return; }
    t1=$(date +%s.%N)
    local regs spill_st spill_ld stack qgmma
    regs=$(echo "$log" | grep -o 'Used [0-9]* registers' | grep -o '[0-9]*' | head -1)
    spill_st=$(echo "$log" | grep -o '[0-9]* bytes spill stores' | grep -o '^[0-9]*' | head -1)
    spill_ld=$(echo "$log" | grep -o '[0-9]* bytes spill loads' | grep -o '^[0-9]*' | head -1)
    stack=$(echo "$log" | grep -o '[0-9]* bytes stack frame' | grep -o '^[0-9]*' | head -1)
    qgmma=$("$CUOBJDUMP" -sass "$OUT/$name.cubin" | grep -c QGMMA || true)
    printf '%-28s regs %3s  spill st/ld %s/%s  stack %s  QGMMA %3s  %.2fs\n' "$name" "$regs" "$spill_st" "$spill_ld" \
        "$stack" "$qgmma" "$(echo "$t1 - $t0" | bc)"
    if [[ "$spill_st" != 0 || "$spill_ld" != 0 || "$stack" != 0 || "$qgmma" == 0 ]]; then
        echo "  ^ FAIL"; fail=1
    fi
}

#     name                   BM  BN  S  WG CM CN shapeN shapeK mode
check 1d2d_128x128_s5        128 128 5  2  1  1  7168   16384  0
check 1d2d_128x128_s5_dyn    128 128 5  2  1  1  0      0      0
check 1d2d_64x16_s16         64  16  16 1  1  1  2112   7168   0
check 1d2d_64x32_s12         64  32  12 1  1  1  0      0      0
check 1d2d_64x64_s10         64  64  10 1  1  1  0      0      0
check 1d2d_64x96_s8          64  96  8  1  1  1  0      0      0
check 1d2d_64x112_s9         64  112 9  1  1  1  7168   2048   0
check 1d2d_128x112_s6        128 112 6  2  1  1  0      0      0
check 1d2d_128x136_s5        128 136 5  2  1  1  0      0      0
check 1d2d_128x144_s5        128 144 5  2  1  1  0      0      0
check 1d2d_128x160_s4_cm2    128 160 4  2  2  1  0      0      0
check 1d2d_128x160_s4        128 160 4  2  1  1  0      0      0
check 1d2d_128x192_s4_cm2    128 192 4  2  2  1  2112   7168   0
check 1d2d_128x256_s3        128 256 3  2  1  1  0      0      0
check 1d2d_256x128_s3_cn2    256 128 3  2  1  2  7168   16384  0
check 1d2d_128x128_s5_cn2    128 128 5  2  1  2  0      0      0
check 1d2d_64x24_s12         64  24  12 1  1  1  0      0      0
check 1d2d_64x16_s21          64  16  21 1  1  1  0      0      0
check 1d2d_128x128_1wg_s5      128 128 5  1  1  1  0      0      0
check 1d2d_256x64_s4_cm2      256 64  4  2  2  1  0      0      0
check 1d2d_128x144_s5_cn2     128 144 5  2  1  2  4096   7168   0
check 1d1d_128x152_s4_cm2    128 152 4  2  2  1  0      0      1
check 1d1d_128x128_s4        128 128 4  2  1  1  0      0      1
check 1d1d_64x120_s8         64  120 8  1  1  1  0      0      1
check 1d1d_128x160_s3        128 160 3  2  1  1  0      0      1
check 1d1d_128x24_s8         128 24  8  2  1  1  0      0      1
check 1d1d_64x256_s3         64  256 3  1  1  1  0      0      1
check 1d1d_64x152_s6_cn2     64  152 6  1  1  2  0      0      1

# Scheduler tile order (host code).
"$NVCC" -std=c++20 -arch=sm_90a -I"$ROOT/kernels" -o "$OUT/scheduler_check" "$ROOT/dev/fp8_gemm/scheduler_check.cu"
"$OUT/scheduler_check" || fail=1

# NVRTC, the JIT's default compiler: same TUs, no host headers, -default-device.
if [[ "${1:-}" == "--nvrtc" ]]; then
    CUDA_HOME="${CUDA_HOME:-$(dirname "$(dirname "$(command -v "$NVCC")")")}"
    g++ -std=c++17 -O1 -o "$OUT/nvrtc_check" "$ROOT/dev/fp8_gemm/nvrtc_check.cpp" -I"$CUDA_HOME/include" \
        -L"$CUDA_HOME/lib64" -lnvrtc -Wl,-rpath,"$CUDA_HOME/lib64"
    for tu in 1d2d_128x128_s5 1d2d_64x112_s9 1d2d_128x160_s4_cm2 1d1d_128x152_s4_cm2 1d2d_256x128_s3_cn2; do
        log=$("$OUT/nvrtc_check" "$OUT/$tu.cu" "$ROOT/kernels" "$OUT/$tu.nvrtc.cubin") || { echo "$log"; fail=1; continue; }
        printf '%-28s %s | %s | QGMMA %s\n' "$tu" "$(echo "$log" | head -1 | sed 's/.*NVRTC_SUCCESS //')" \
            "$(echo "$log" | grep -o '[0-9]* bytes spill stores, [0-9]* bytes spill loads')" \
            "$("$CUOBJDUMP" -sass "$OUT/$tu.nvrtc.cubin" | grep -c QGMMA)"
    done
fi
exit $fail
