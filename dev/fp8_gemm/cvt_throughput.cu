// How fast an SM converts FP32 pairs to packed BF16: the epilogue converts a 128x192 tile (48 pairs per consumer
// thread) and tile_gap_probe measured its convert + stmatrix step at 530-660 cycles per tile (docs/perf/fp8_gemm.md
// v23). If cvt.rn.bf16x2.f32 (F2FP) issues at a quarter of the FP32 rate, 2 consumer warps per SM sub-partition x 48
// conversions x 8 cycles = 768 cycles, and that step is conversion-bound; rounding part of the pairs with integer
// instructions (another pipe) would then shorten it. This kernel times, per SM, 4 warps per sub-partition converting
// independent registers in a loop and writing the packed pairs to shared memory 16 bytes at a time (as the epilogue's
// stmatrix does), three ways:
//   f2fp   every pair through cvt.rn.bf16x2.f32;
//   int    every pair rounded to nearest even with integer adds and a byte permute (NaN inputs not handled);
//   mixed  one pair in three through the integer path.
// Prints conversions (pairs) per clock per SM.
//
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a dev/fp8_gemm/cvt_throughput.cu -o /tmp/cvt && /tmp/cvt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

namespace {

constexpr int kPairs = 48, kIters = 256, kThreads = 512;  // 4 warps per sub-partition, <= 128 registers

__device__ __forceinline__ uint32_t pack_f2fp(float lo, float hi) {
    uint32_t r;
    asm volatile("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// Round to nearest even by integer arithmetic: add 0x7fff plus the lowest kept bit, keep the high half.
__device__ __forceinline__ uint32_t pack_int(float lo, float hi) {
    uint32_t a = __float_as_uint(lo), b = __float_as_uint(hi);
    a += 0x7fffu + ((a >> 16) & 1u);
    b += 0x7fffu + ((b >> 16) & 1u);
    return __byte_perm(a, b, 0x7632);
}

template <int kIntEvery>  // 0: all F2FP; 1: all integer; 3: one pair in three integer
__global__ void convert_loop(const float* seed, uint32_t* sink, long long* cycles) {
    __shared__ uint4 slots[3][kThreads];
    float v[2 * kPairs];
#pragma unroll
    for (int i = 0; i < 2 * kPairs; ++i) v[i] = seed[(threadIdx.x + i) % 64] * (i + 1);
    __syncthreads();
    const long long t0 = clock64();
    for (int it = 0; it < kIters; ++it) {
#pragma unroll
        for (int q = 0; q < kPairs / 4; ++q) {
            uint32_t packed[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int p = 4 * q + j;
                const bool use_int = kIntEvery == 1 || (kIntEvery > 1 && p % kIntEvery == 0);
                packed[j] = use_int ? pack_int(v[2 * p], v[2 * p + 1]) : pack_f2fp(v[2 * p], v[2 * p + 1]);
            }
            const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(&slots[q % 3][threadIdx.x]));
            asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(packed[0]), "r"(packed[1]),
                         "r"(packed[2]), "r"(packed[3])
                         : "memory");
        }
        // Change the inputs each round so no conversion is loop-invariant (FP32 adds: another pipe).
#pragma unroll
        for (int i = 0; i < 2 * kPairs; ++i) v[i] += 1.0f;
    }
    __syncthreads();
    const long long t1 = clock64();
    sink[blockIdx.x * blockDim.x + threadIdx.x] = slots[threadIdx.x % 3][threadIdx.x].x;
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

template <int kIntEvery>
void run(const char* name, const float* seed, uint32_t* sink, long long* cycles, int sms) {
    convert_loop<kIntEvery><<<sms, kThreads>>>(seed, sink, cycles);  // warm-up
    convert_loop<kIntEvery><<<sms, kThreads>>>(seed, sink, cycles);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        std::printf("%s: launch failed\n", name);
        return;
    }
    long long host[1024];
    cudaMemcpy(host, cycles, sizeof(long long) * sms, cudaMemcpyDeviceToHost);
    double sum = 0;
    for (int i = 0; i < sms; ++i) sum += static_cast<double>(host[i]);
    const double per_sm = sum / sms;
    const double pairs = static_cast<double>(kPairs) * kIters * kThreads;
    std::printf("%-6s %8.0f cycles per SM, %6.1f pairs per clock per SM (48 pairs of 2 warps per sub-partition: %.0f "
                "cycles)\n", name, per_sm, pairs / per_sm, 48.0 * 2 * 32 * 4 / (pairs / per_sm));
}

}  // namespace

int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float* seed;
    uint32_t* sink;
    long long* cycles;
    cudaMalloc(&seed, 64 * sizeof(float));
    cudaMalloc(&sink, sizeof(uint32_t) * sms * kThreads);
    cudaMalloc(&cycles, sizeof(long long) * sms);
    float host_seed[64];
    for (int i = 0; i < 64; ++i) host_seed[i] = 1.0f + 0.37f * i;
    cudaMemcpy(seed, host_seed, sizeof(host_seed), cudaMemcpyHostToDevice);
    run<0>("f2fp", seed, sink, cycles, sms);
    run<1>("int", seed, sink, cycles, sms);
    run<3>("mixed", seed, sink, cycles, sms);
    return 0;
}
