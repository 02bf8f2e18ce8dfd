// Does CUDA-core work of one warpgroup overlap the other warpgroup's wgmma? The question behind the FP8 GEMM's
// M = 4096 gap (docs/perf/fp8_gemm.md v4-v5), asked without TMA, barriers, scheduling or epilogue.
//
// One CTA per SM, two warpgroups, operands resident in shared memory. Each warpgroup loops: 4 x wgmma m64nNk32 (e4m3,
// one 128-K block) into a temporary, commit, wait_group 0, then F FFMAs folding the temporary into a main accumulator
// (the FP8 GEMM's scale promotion). Cycles per iteration are compared with the tensor-core time of the two batches
// (2 x 4 x N/2 cycles at 8192 FP8 FLOP/cycle/SM) and with F = 0. Issue order of the two warpgroups:
//   0  free (both issue as soon as their previous batch is promoted)
//   1  turns, passed after the issue (the shipped kernel's kOrderedMath)
//   2  turns, passed after the batch completed (branch exp/turn-after-wait)
// Measured on the H200 (2026-11-30, docs/perf/fp8_gemm.md v6), cycles per iteration against the floor:
//   order 1: N 128 F 64 -> 512.0 (exactly the floor), N 128 F 128 -> 744, N 256 F 128 -> 1024.0 (the floor)
//   order 0: 688 / 816 / 1296;  order 2: 848 / 976 / 1488
// So with turns passed after the issue the promotion of one warpgroup hides completely behind the other's batch as
// long as it fits in it; FFMAs run at about half rate while the tensor cores are busy (F 128 at N 128 does not fit).
// Rows with F = 0 or FFMAs that do not read tmp are NOT valid measurements: ptxas removes the wgmma batches whose
// results are never read (they ran "faster" than the tensor-core floor).
//
// Build and run on the GPU machine (from the repository root):
//   nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels dev/fp8_gemm/overlap_probe.cu -o /tmp/overlap_probe && /tmp/overlap_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <tessera/prims/smem_desc.cuh>
#include <tessera/ptx/memory.cuh>
#include <tessera/ptx/sync.cuh>
#include <tessera/ptx/wgmma.cuh>
#include <tessera/ptx/wgmma_e4m3.cuh>

namespace {

constexpr int kIters = 4096;
constexpr int kRowsA = 128;  // two warpgroups x 64 rows

template <int kOrder, int kFfma, int kN, bool kReadTmp = true>
__global__ void __launch_bounds__(256, 1) probe(long long* cycles, float* sink, float scale_seed) {
    extern __shared__ __align__(1024) unsigned char smem[];
    unsigned char* a = smem;                   // [128][128 B], 128B-swizzled layout (contents are arbitrary bytes)
    unsigned char* b = smem + kRowsA * 128;    // [kN][128 B]
    const unsigned wg = threadIdx.x / 128;
    // Finite e4m3 values only (exponent field below 15): no NaN in the products.
    for (int i = threadIdx.x; i < (kRowsA + kN) * 128; i += blockDim.x) {
        const unsigned h = (i * 2654435761u) ^ (blockIdx.x * 40503u);
        smem[i] = static_cast<unsigned char>((h >> 7) & 0xb7);
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // generic writes -> visible to wgmma (async proxy)
    __syncthreads();

    const std::uint64_t desc_a = tessera::prims::make_desc_kmajor_sw128(tessera::ptx::smem_addr(a + wg * 64 * 128));
    const std::uint64_t desc_b = tessera::prims::make_desc_kmajor_sw128(tessera::ptx::smem_addr(b));
    constexpr int kAcc = kN / 2 < 64 ? kN / 2 : 64;  // the main accumulator (N = 256 would not fit beside tmp)
    float tmp[kN / 2];
    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) tmp[i] = 0.f;
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
    float s = scale_seed + threadIdx.x * 1e-7f;
    if (kOrder != 0 && wg == 1) tessera::ptx::named_barrier_arrive(3, 256);  // warpgroup 0 takes the first turn

    const long long start = clock64();
    for (int it = 0; it < kIters; ++it) {
        if constexpr (kOrder != 0) tessera::ptx::named_barrier_sync(3 + wg, 256);
        tessera::ptx::wgmma_fence();
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) tessera::ptx::fence_operand(tmp[i]);
#pragma unroll
        for (int k = 0; k < 4; ++k)
            tessera::ptx::wgmma_m64k32_e4m3(tmp, tessera::prims::advance_desc(desc_a, k * 32),
                                            tessera::prims::advance_desc(desc_b, k * 32), k);
        tessera::ptx::wgmma_commit_group();
        if constexpr (kOrder == 1) tessera::ptx::named_barrier_arrive(3 + (wg ^ 1u), 256);
        tessera::ptx::wgmma_wait_group<0>();
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) tessera::ptx::fence_operand(tmp[i]);
        if constexpr (kOrder == 2) tessera::ptx::named_barrier_arrive(3 + (wg ^ 1u), 256);
#pragma unroll
        for (int i = 0; i < kFfma; ++i) {
            // kReadTmp = false: the same number of FFMAs, none reading the wgmma result (is it the register traffic
            // on freshly written accumulators, or any CUDA-core issue, that stalls the tensor cores?)
            if constexpr (kReadTmp) acc[i % kAcc] += s * tmp[i % (kN / 2)];
            else acc[i % kAcc] = fmaf(acc[i % kAcc], s, acc[(i + 1) % kAcc]);
        }
        s *= 1.0000001f;
    }
    const long long stop = clock64();
    if (kOrder != 0 && wg == 0) tessera::ptx::named_barrier_sync(3, 256);  // the surplus turn, so none is left open
    float total = 0.f;
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) total += tmp[i];
#pragma unroll
    for (int i = 0; i < kAcc; ++i) total += acc[i];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = total;
    if (threadIdx.x == 0) cycles[blockIdx.x] = stop - start;
}

#define CHECK(x)                                                                                  \
    do {                                                                                          \
        cudaError_t e = (x);                                                                      \
        if (e != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s: %s (line %d)\n", #x, cudaGetErrorString(e), __LINE__);      \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

template <int kOrder, int kFfma, int kN, bool kReadTmp = true>
void run(int num_sms, long long* d_cycles, float* d_sink) {
    const int smem = (kRowsA + kN) * 128;
    auto kernel = probe<kOrder, kFfma, kN, kReadTmp>;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    kernel<<<num_sms, 256, smem>>>(d_cycles, d_sink, 1.0f);  // warm-up
    CHECK(cudaEventRecord(start));
    kernel<<<num_sms, 256, smem>>>(d_cycles, d_sink, 1.0f);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0.f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::vector<long long> cycles(num_sms);
    CHECK(cudaMemcpy(cycles.data(), d_cycles, num_sms * sizeof(long long), cudaMemcpyDeviceToHost));
    std::sort(cycles.begin(), cycles.end());
    const double per_iter = static_cast<double>(cycles[num_sms / 2]) / kIters;
    const double tensor = 2.0 * 4 * 64.0 * kN * 32 * 2 / 8192;  // both warpgroups' batches, cycles at peak
    std::printf("order %d  N %3d  FFMA/thread %3d%s  cycles/iter %7.1f  tensor-only floor %6.1f  ratio %.3f  "
                "GHz %.2f\n",
                kOrder, kN, kFfma, kReadTmp ? "" : " (not on tmp)", per_iter, tensor, per_iter / tensor,
                cycles[num_sms / 2] / (ms * 1e-3) / 1e9);
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
}

template <int kOrder>
void run_order(int num_sms, long long* d_cycles, float* d_sink) {
    run<kOrder, 0, 128>(num_sms, d_cycles, d_sink);
    run<kOrder, 64, 128>(num_sms, d_cycles, d_sink);
    run<kOrder, 128, 128>(num_sms, d_cycles, d_sink);
    run<kOrder, 0, 256>(num_sms, d_cycles, d_sink);
    run<kOrder, 128, 256>(num_sms, d_cycles, d_sink);
    run<kOrder, 64, 128, false>(num_sms, d_cycles, d_sink);
}

}  // namespace

int main() {
    int num_sms = 0;
    CHECK(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, 0));
    long long* d_cycles = nullptr;
    float* d_sink = nullptr;
    CHECK(cudaMalloc(&d_cycles, num_sms * sizeof(long long)));
    CHECK(cudaMalloc(&d_sink, num_sms * 256 * sizeof(float)));
    run_order<0>(num_sms, d_cycles, d_sink);
    run_order<1>(num_sms, d_cycles, d_sink);
    run_order<2>(num_sms, d_cycles, d_sink);
    CHECK(cudaFree(d_cycles));
    CHECK(cudaFree(d_sink));
    return 0;
}
