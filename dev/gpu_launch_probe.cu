// GPU-side cost of starting a kernel, by its dynamic shared memory: does a 200+ KB kernel (the FP8 GEMM's decode
// plans) wait longer to start its CTAs after a memset than a small one? (docs/perf/fp8_gemm.md v10: under ncu our
// 1x7168x2048 kernel spends ~0.9 us more than cuBLASLt's outside its SMs' active cycles.)
//
// Every time comes from %globaltimer inside the kernels, so host launch cost is not in it:
//   after memset:  2 GB memset, a 1-thread stamp kernel, then the probe (132 CTAs x 384 threads, S bytes of dynamic
//                  shared memory, each thread touches its share): stamp -> first probe CTA start, first start -> last
//                  CTA end.
//   back to back:  the probe twice; first probe's last end -> second probe's first start.
// Median of 50 repeats, microseconds.
//
//   nvcc -std=c++20 -O2 -gencode arch=compute_90a,code=sm_90a dev/gpu_launch_probe.cu -o /tmp/gpu_launch_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "probe_check.hpp"

namespace {

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void stamp(unsigned long long* t) { *t = now_ns(); }

// slot[0] = earliest CTA start, slot[1] = latest CTA end (reset to ~0 / 0 before each launch).
__global__ void probe(unsigned long long* slot, int smem_bytes) {
    extern __shared__ unsigned char smem[];
    const unsigned long long start = now_ns();
    for (int i = threadIdx.x * 16; i < smem_bytes; i += blockDim.x * 16)
        *reinterpret_cast<int4*>(smem + i) = make_int4(i, 0, 0, 0);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicMin(&slot[0], start);
        atomicMax(&slot[1], now_ns());
    }
}

__global__ void reset(unsigned long long* slots, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) slots[i] = i % 2 == 0 ? ~0ull : 0ull;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main() {
    constexpr int kReps = 50, kCtas = 132, kThreads = 384;
    void* flush = nullptr;
    check(cudaMalloc(&flush, 2ull << 30), "cudaMalloc");
    unsigned long long* t = nullptr;  // [0] stamp, [2..3] probe 1, [4..5] probe 2
    check(cudaMalloc(&t, 8 * sizeof(unsigned long long)), "cudaMalloc");
    check(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024),
          "cudaFuncSetAttribute");
    std::printf("%-10s %22s %22s %22s\n", "smem", "after memset: gap", "CTAs start->end", "back to back: gap");
    for (int smem : {0, 48 << 10, 100 << 10, 160 << 10, 216 << 10, 227 << 10}) {
        std::vector<double> gap, span, b2b;
        for (int rep = 0; rep < kReps; ++rep) {
            reset<<<1, 32>>>(t, 8);
            check(cudaMemsetAsync(flush, rep & 0xff, 2ull << 30), "cudaMemsetAsync");
            stamp<<<1, 1>>>(t);
            probe<<<kCtas, kThreads, smem>>>(t + 2, smem);
            probe<<<kCtas, kThreads, smem>>>(t + 4, smem);
            check(cudaGetLastError(), "cudaGetLastError");
            unsigned long long h[8];
            check(cudaMemcpy(h, t, sizeof(h), cudaMemcpyDeviceToHost), "cudaMemcpy");
            gap.push_back((h[2] - h[0]) * 1e-3);
            span.push_back((h[3] - h[2]) * 1e-3);
            b2b.push_back((static_cast<double>(h[4]) - static_cast<double>(h[3])) * 1e-3);
        }
        std::printf("%6d KB %19.2f us %19.2f us %19.2f us\n", smem >> 10, median(gap), median(span), median(b2b));
    }
    return 0;
}
