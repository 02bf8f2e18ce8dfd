// What the standalone FP8 kernel probes in dev/fp8_gemm (timeline_probe.cu, tile_gap_probe.cu) share: the kernel
// entry for a plan, the operands and Params of one dense (or m-grouped contiguous) 1D2D plan (the tensor maps docs/fp8_gemm_kernel.md
// specifies), and a launch timed after the benchmark's 2 GB memset flush. Include after the kernel header (and after
// defining its hooks). Inputs are constant bytes: the probes time plans, the library's tests check them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tma_maps.hpp"

template <class C>
__global__ void __launch_bounds__(tessera::sm90::Fp8GemmKernel<C>::kNumThreads, 1)
    probe_kernel(const __grid_constant__ typename tessera::sm90::Fp8GemmKernel<C>::Params p) {
    tessera::sm90::Fp8GemmKernel<C>::run(p);
}

// One launch of plan C after a 2 GB memset flush (fill byte `fill`); its time between two events, in µs.
template <class C>
double flushed_launch_us(const typename tessera::sm90::Fp8GemmKernel<C>::Params& p, void* flush, int fill,
                         cudaEvent_t start, cudaEvent_t stop) {
    using Kernel = tessera::sm90::Fp8GemmKernel<C>;
    check(cudaMemsetAsync(flush, fill & 0xff, 2ull << 30), "cudaMemsetAsync");
    check(cudaEventRecord(start), "cudaEventRecord");
    probe_kernel<C><<<C::kNumSMs, Kernel::kNumThreads, Kernel::kSmemBytes>>>(p);
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    check(cudaGetLastError(), "launch");
    float ms = 0.f;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return ms * 1e3;
}

template <class Kernel, class C>
struct DenseOperands {
    static constexpr uint32_t n = C::kShapeN, k = C::kShapeK, kb = (k + 127) / 128, nb = (n + 127) / 128;
    uint8_t* a = nullptr;
    uint8_t* b = nullptr;
    float* sfa = nullptr;
    float* sfb = nullptr;
    void* d = nullptr;
    int32_t* layout = nullptr;  // contiguous: the expert of each row; masked: the rows of each group
    typename Kernel::Params p{};

    // groups > 1: m-grouped, B [groups * N, K]. Contiguous (masked_m = 0): rows split into `groups` equal runs
    // (m / groups rows each, a multiple of the block rows, as the contiguous layout's alignment asks). Masked
    // (masked_m > 0): A [groups, M_max = m / groups, K], every group holding masked_m rows.
    explicit DenseOperands(uint32_t m, uint32_t groups = 1, uint32_t masked_m = 0) {
        const uint32_t m4 = (m + 3) / 4 * 4;
        check(cudaMalloc(&a, size_t(m) * k), "cudaMalloc");
        check(cudaMalloc(&b, size_t(groups) * n * k), "cudaMalloc");
        check(cudaMalloc(&sfa, size_t(kb) * m4 * 4), "cudaMalloc");
        check(cudaMalloc(&sfb, size_t(groups) * nb * kb * 4), "cudaMalloc");
        check(cudaMalloc(&d, size_t(m) * n * 2), "cudaMalloc");
        check(cudaMemset(a, 0x38, size_t(m) * k), "cudaMemset");
        check(cudaMemset(b, 0x38, size_t(groups) * n * k), "cudaMemset");
        check(cudaMemset(sfa, 0, size_t(kb) * m4 * 4), "cudaMemset");
        check(cudaMemset(sfb, 0, size_t(groups) * nb * kb * 4), "cudaMemset");
        if (groups > 1) {
            std::vector<int32_t> values(masked_m > 0 ? groups : m);
            for (uint32_t r = 0; r < values.size(); ++r)
                values[r] = static_cast<int32_t>(masked_m > 0 ? masked_m : r / (m / groups));
            check(cudaMalloc(&layout, values.size() * 4), "cudaMalloc");
            check(cudaMemcpy(layout, values.data(), values.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
        }
        // Masked: SFA [groups * kb][M_max] (M_max a multiple of 4: the same bytes as dense's [kb][M]).
        const uint32_t sfa_rows = masked_m > 0 ? m / groups : m4, sfa_cols = masked_m > 0 ? groups * kb : kb;
        const auto put = [](tessera::TmaDescriptor& dst, const CUtensorMap& src) {
            std::memcpy(&dst, &src, sizeof(src));
        };
        constexpr CUtensorMapSwizzle k128B = CU_TENSOR_MAP_SWIZZLE_128B;
        put(p.tensor_map_a, make_map(CU_TENSOR_MAP_DATA_TYPE_UINT8, a, k, m, k, 128, C::kBlockM, k128B));
        put(p.tensor_map_b, make_map(CU_TENSOR_MAP_DATA_TYPE_UINT8, b, k, groups * n, k, 128, C::kBlockN, k128B));
        put(p.tensor_map_sfa, make_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, sfa, sfa_rows, sfa_cols, sfa_rows * 4,
                                       C::kBlockM, 1, CU_TENSOR_MAP_SWIZZLE_NONE));
        put(p.tensor_map_d, make_map(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, d, n, m, n * 2, Kernel::kStoreBoxN,
                                     Kernel::kStoreBoxM, swizzle_of(Kernel::kSwizzleDBytes)));
        p.sfb = sfb;
        p.m = masked_m > 0 ? m / groups : m, p.n = n, p.k = k;
        p.d = d;
        p.ld_d = n;
        p.num_groups = groups;
        p.grouped_layout = layout;
    }
    ~DenseOperands() { cudaFree(a), cudaFree(b), cudaFree(sfa), cudaFree(sfb), cudaFree(d), cudaFree(layout); }
    DenseOperands(const DenseOperands&) = delete;
    DenseOperands& operator=(const DenseOperands&) = delete;
};
