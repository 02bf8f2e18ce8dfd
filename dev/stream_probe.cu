// How fast can TMA stream a K-major FP8 weight matrix B [N, K] from HBM into shared memory, with no math at all? The
// ceiling under the decode GEMMs (M = 1 and 128) and the small masked groups, and whether the access pattern moves it
// (docs/perf/fp8_gemm.md v9: the decode kernels stream at 2.9-3.3 TB/s against the 4.26 TB/s copy rate).
//
// Each CTA owns a band of `rows` rows of B and a 1/splits share of its K (splits: as many as fill one wave of 132
// CTAs), like a split-K decode tile; one thread keeps `stages` loads in flight and only waits for them. Variants:
//   2D: one 128-byte-wide box per k-block (the GEMM's own loads), L2 promotion none / 128 / 256 bytes;
//   3D: J consecutive k-blocks of the same rows per load, in two orders (see map_3d): k-blocks outer, the GEMM stage
//       layout; rows outer, where each row's J*128 contiguous bytes are requested together;
//   2D with L2 bursts: the 2D loads, plus a TMA prefetch into L2 of the next 4 or 8 k-blocks past the ring at once;
//   2D refilled in groups: the ring's slots refilled 2 or 4 at a time, their loads back to back;
//   a plain vectorized read of the same bytes by every thread (the copy-like reference).
// Median of 15, L2 flushed by a 512 MiB memset before each run, GB/s of B bytes.
//
//   nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels dev/stream_probe.cu -lcuda -o /tmp/stream_probe
//   /tmp/stream_probe
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe_check.hpp"

#include <tessera/ptx/mbarrier.cuh>
#include <tessera/ptx/memory.cuh>
#include <tessera/ptx/tma.cuh>

namespace {

namespace ptx = tessera::ptx;

// wraps cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes (the library has only 2D loads)
__device__ void tma_load_3d(uint32_t dst, const tessera::TmaDescriptor& desc, uint32_t bar, int c0, int c1, int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
        ::"r"(dst), "l"(ptx::desc_addr(desc)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
}

// wraps cp.async.bulk.prefetch.tensor.2d.L2.global.tile: the box is fetched into L2 only (no shared memory, no barrier)
__device__ void tma_prefetch_2d(const tessera::TmaDescriptor& desc, int c0, int c1) {
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(ptx::desc_addr(desc)), "r"(c0),
                 "r"(c1)
                 : "memory");
}

constexpr int kMaxStages = 32;

// kJ == 0: the 2D map (one k-block per load); kJ >= 1: the 3D map with kJ k-blocks per load. kBurst > 0 (2D only):
// every kBurst-th load also prefetches into L2 the kBurst k-blocks that follow the ring (kStages ahead) at once, so
// each row's next kBurst * 128 bytes are requested together.
// kGroup > 1 (2D only): the ring is refilled kGroup slots at a time, each slot's load issued back to back with the
// others of its group, so the group's k-blocks of every row reach HBM together (what a 3D box does in one request).
template <int kRows, int kJ, int kStages, int kBurst = 0, int kGroup = 1>
__global__ void __launch_bounds__(128, 1) tma_stream(const __grid_constant__ tessera::TmaDescriptor map, int k_blocks,
                                                     int splits, int rows_outer) {
    static_assert(kStages <= kMaxStages);
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ __align__(8) unsigned long long bars[kStages];
    if (threadIdx.x != 0) return;
    constexpr int kPerLoad = kJ == 0 ? 1 : kJ;
    constexpr uint32_t kBytes = kRows * 128u * kPerLoad;
    const int band = blockIdx.x / splits, split = blockIdx.x % splits;
    const int loads = k_blocks / kPerLoad;
    const int begin = loads * split / splits, end = loads * (split + 1) / splits;
    const uint32_t base = ptx::smem_addr(smem);
    for (int s = 0; s < kStages; ++s) ptx::mbarrier_init(ptx::smem_addr(&bars[s]), 1);
    ptx::fence_mbarrier_init();
    ptx::prefetch_tensormap(map);
    const auto issue = [&](int i, int slot) {
        const uint32_t bar = ptx::smem_addr(&bars[slot]);
        ptx::mbarrier_arrive_expect_tx(bar, kBytes);
        if constexpr (kJ == 0) {
            ptx::tma_load_2d(base + slot * kBytes, map, bar, i * 128, band * kRows);
            if constexpr (kBurst > 0) {
                if ((i - begin) % kBurst == 0)
                    for (int j = i + kStages; j < i + kStages + kBurst && j < end; ++j)
                        tma_prefetch_2d(map, j * 128, band * kRows);
            }
        } else if (rows_outer) {
            tma_load_3d(base + slot * kBytes, map, bar, 0, i * kJ, band * kRows);
        } else {
            tma_load_3d(base + slot * kBytes, map, bar, 0, band * kRows, i * kJ);
        }
    };
    for (int i = begin; i < end && i < begin + kStages; ++i) issue(i, i - begin);
    static_assert(kGroup >= 1 && kGroup <= kStages);
    for (int i = begin; i < end; ++i) {
        const int slot = (i - begin) % kStages;
        ptx::mbarrier_wait(ptx::smem_addr(&bars[slot]), ((i - begin) / kStages) & 1);
        if ((i - begin + 1) % kGroup != 0) continue;  // a trailing partial group needs no refill: j + kStages >= end
        for (int j = i - kGroup + 1; j <= i; ++j)
            if (j + kStages < end) issue(j + kStages, (j - begin) % kStages);
    }
}

__global__ void plain_read(const uint4* data, size_t count, unsigned* sink) {
    uint32_t acc = 0;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
        uint4 v;
        asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(data + i));
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) *sink = acc;  // keeps the loads
}

struct Bench {
    void* b = nullptr;
    void* flush = nullptr;
    size_t flush_bytes = size_t(512) << 20;
    cudaEvent_t start{}, stop{};

    template <class Launch>
    double median_us(Launch launch) {
        std::vector<float> ms;
        for (int rep = 0; rep < 16; ++rep) {
            check(cudaMemsetAsync(flush, rep, flush_bytes), "flush");
            cudaEventRecord(start);
            launch();
            cudaEventRecord(stop);
            check(cudaEventSynchronize(stop), "run");
            float t = 0;
            cudaEventElapsedTime(&t, start, stop);
            if (rep > 0) ms.push_back(t);  // the first run loads the module
        }
        std::sort(ms.begin(), ms.end());
        return 1000.0 * ms[ms.size() / 2];
    }
};

CUtensorMap map_2d(void* b, int n, int k, int rows, CUtensorMapL2promotion promo) {
    CUtensorMap map{};
    const cuuint64_t dims[2] = {cuuint64_t(k), cuuint64_t(n)};
    const cuuint64_t strides[1] = {cuuint64_t(k)};
    const cuuint32_t box[2] = {128, cuuint32_t(rows)}, elem[2] = {1, 1};
    check(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, b, dims, strides, box, elem,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, promo,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          "encode 2d");
    return map;
}

// Two orders of the same 3D view of B. k-blocks outer: dims {128 B, N rows, K/128 k-blocks}, strides {K, 128}; the
// tile lands as [J][rows][128 B], the layout a GEMM stage's wgmma reads, and TMA walks it row by row within each
// k-block (the same request order as J back-to-back 2D loads). Rows outer: dims {128 B, K/128, N}, strides {128, K};
// the tile lands as [rows][J][128 B] (no wgmma layout) and each row's J*128 bytes are requested together: the
// row-local pattern, measured for comparison. Returns false (with the driver's reason) if the map is refused.
bool map_3d(void* b, int n, int k, int rows, int j, bool rows_outer, CUtensorMap* map) {
    const cuuint64_t dims[3] = {128, cuuint64_t(rows_outer ? k / 128 : n), cuuint64_t(rows_outer ? n : k / 128)};
    const cuuint64_t strides[2] = {cuuint64_t(rows_outer ? 128 : k), cuuint64_t(rows_outer ? k : 128)};
    const cuuint32_t box[3] = {128, cuuint32_t(rows_outer ? j : rows), cuuint32_t(rows_outer ? rows : j)};
    const cuuint32_t elem[3] = {1, 1, 1};
    const CUresult r = cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, b, dims, strides, box, elem,
                                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r == CUDA_SUCCESS) return true;
    const char* msg = nullptr;
    cuGetErrorString(r, &msg);
    std::printf("  3D map (%s outer) %d rows x %d k-blocks refused by the driver: %s\n", rows_outer ? "rows" : "k-blocks",
                rows, j, msg ? msg : "?");
    return false;
}

template <int kRows, int kJ, int kStages, int kBurst = 0, int kGroup = 1>
void run_tma(Bench& bench, int n, int k, CUtensorMapL2promotion promo, const char* label, bool rows_outer = false) {
    CUtensorMap map{};
    if constexpr (kJ == 0) {
        map = map_2d(bench.b, n, k, kRows, promo);
    } else {
        if (!map_3d(bench.b, n, k, kRows, kJ, rows_outer, &map)) return;
    }
    constexpr int kSmem = kRows * 128 * (kJ == 0 ? 1 : kJ) * kStages;
    auto kernel = tma_stream<kRows, kJ, kStages, kBurst, kGroup>;
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem), "smem");
    const int bands = n / kRows, splits = std::max(1, 132 / bands);  // as many CTAs as fit one wave
    const int ctas = bands * splits;
    tessera::TmaDescriptor desc;
    static_assert(sizeof(desc) == sizeof(map));
    std::memcpy(&desc, &map, sizeof(map));
    const double us = bench.median_us([&] { kernel<<<ctas, 128, kSmem>>>(desc, k / 128, splits, rows_outer ? 1 : 0); });
    check(cudaGetLastError(), label);
    const double bytes = double(n) * k;
    std::printf("%-36s %4d CTAs (split %2d) %4d KB in flight %8.1f us %6.0f GB/s\n", label, ctas, splits,
                kSmem / 1024, us, bytes / us / 1e3);
    std::printf("{\"bench\": \"stream_probe\", \"n\": %d, \"k\": %d, \"variant\": \"%s\", \"ctas\": %d, \"us\": %.2f, "
                "\"gbps\": %.0f}\n", n, k, label, ctas, us, bytes / us / 1e3);
}

void run_plain(Bench& bench, int n, int k, unsigned* sink) {
    const size_t count = size_t(n) * k / 16;
    for (int blocks : {132, 264, 528}) {
        const double us = bench.median_us([&] {
            plain_read<<<blocks, 1024>>>(static_cast<const uint4*>(bench.b), count, sink);
        });
        check(cudaGetLastError(), "plain");
        std::printf("plain ld.global.nc.v4, %3d x 1024 threads          %8.1f us  %6.0f GB/s\n", blocks, us,
                    double(n) * k / us / 1e3);
    }
}

}  // namespace

int main() {
    check(cudaFree(nullptr), "context");
    Bench bench;
    const int k = 16384;
    check(cudaMalloc(&bench.b, size_t(7168) * k), "b");
    check(cudaMalloc(&bench.flush, bench.flush_bytes), "flush buffer");
    check(cudaMemset(bench.b, 0x3c, size_t(7168) * k), "fill");
    unsigned* sink = nullptr;
    check(cudaMalloc(&sink, 4), "sink");
    cudaEventCreate(&bench.start);
    cudaEventCreate(&bench.stop);
    constexpr auto p256 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    // 7168 x 16384 (117 MB, 1x7168x16384's B) and 3072 x 16384 (50 MB, about the g6 e20 masked weights).
    for (int n : {7168, 3072}) {
        std::printf("== B %d x %d (%.1f MB)\n", n, k, double(n) * k / 1e6);
        run_plain(bench, n, k, sink);
        run_tma<256, 0, 4>(bench, n, k, p256, "2D 256 rows, 4 stages (64x256 s4)");
        run_tma<256, 0, 4>(bench, n, k, CU_TENSOR_MAP_L2_PROMOTION_NONE, "2D 256 rows, promotion none");
        run_tma<256, 0, 4>(bench, n, k, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, "2D 256 rows, promotion 128 B");
        run_tma<256, 0, 6>(bench, n, k, p256, "2D 256 rows, 6 stages");
        run_tma<256, 0, 4, 4>(bench, n, k, p256, "2D 256 rows, 4 stages, L2 bursts of 4");
        run_tma<256, 0, 4, 8>(bench, n, k, p256, "2D 256 rows, 4 stages, L2 bursts of 8");
        run_tma<64, 0, 16, 8>(bench, n, k, p256, "2D 64 rows, 16 stages, L2 bursts of 8");
        run_tma<256, 0, 4, 0, 2>(bench, n, k, p256, "2D 256 rows, 4 stages, refilled in pairs");
        run_tma<128, 0, 8, 0, 4>(bench, n, k, p256, "2D 128 rows, 8 stages, refilled in fours");
        run_tma<128, 0, 8>(bench, n, k, p256, "2D 128 rows, 8 stages");
        run_tma<64, 0, 16>(bench, n, k, p256, "2D 64 rows, 16 stages");
        for (bool rows_outer : {false, true}) {
            std::printf("  3D boxes, %s\n", rows_outer ? "rows outer (row-local requests, not a wgmma layout)"
                                                       : "k-blocks outer (the GEMM stage layout)");
            run_tma<256, 2, 3>(bench, n, k, p256, "  3D 256 rows x 2 k-blocks, 3 stages", rows_outer);
            run_tma<128, 4, 3>(bench, n, k, p256, "  3D 128 rows x 4 k-blocks, 3 stages", rows_outer);
            run_tma<128, 2, 6>(bench, n, k, p256, "  3D 128 rows x 2 k-blocks, 6 stages", rows_outer);
            run_tma<64, 8, 3>(bench, n, k, p256, "  3D 64 rows x 8 k-blocks, 3 stages", rows_outer);
        }
    }
    return 0;
}
