// GPU smoke test of kernels/tessera/sm90/fp8_gemm.cuh (scratch, not the project test suite): builds the tensor maps
// exactly as docs/fp8_gemm_kernel.md says, launches several configs on odd shapes with a small persistent grid (many
// tiles per CTA), and compares against a CPU reference computed from the dequantized inputs. D is poisoned with NaN
// first (1D2D), so unwritten elements fail.
// Build: nvcc -std=c++20 -gencode=arch=compute_90a,code=sm_90a -O2 -Ikernels -o dev/fp8_gemm/gpu_smoke.bin \
//          dev/fp8_gemm/gpu_smoke.cu -L/usr/local/cuda/lib64/stubs -lcuda   (then run it on an H100/H200)
#include <cuda.h>
#include <cuda_runtime.h>

#include <tessera/sm90/fp8_gemm.cuh>

#include "tma_maps.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#define CHECK_CUDA(x)                                                                         \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

template <int BM, int BN, int S, int WG, int CM, int CN, int MODE, int SMS = 16>
struct Cfg {
    static constexpr int kBlockM = BM, kBlockN = BN, kBlockK = 128, kNumStages = S, kNumMathWarpgroups = WG,
                         kClusterM = CM, kClusterN = CN, kNumSMs = SMS, kShapeN = 0, kShapeK = 0, kShapeM = 0,
                         kGroupSize = 8, kMode = MODE;
};

template <class C>
__global__ void __launch_bounds__(tessera::sm90::Fp8GemmKernel<C>::kNumThreads, 1)
    smoke_kernel(const __grid_constant__ typename tessera::sm90::Fp8GemmKernel<C>::Params p) {
    tessera::sm90::Fp8GemmKernel<C>::run(p);
}

static float e4m3_to_float(uint8_t b) {
    const int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
    const float v = e == 0 ? std::ldexp(m / 8.f, -6) : std::ldexp(1.f + m / 8.f, e - 7);
    return s ? -v : v;
}
static float bf16_to_float(uint16_t h) {
    uint32_t u = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

template <class C>
static bool run_case(const char* name, uint32_t m, uint32_t n, uint32_t k) {
    using K = tessera::sm90::Fp8GemmKernel<C>;
    constexpr bool k1d1d = C::kMode == 1;
    std::mt19937 rng(1234 + m + n + k);
    const uint32_t kb = (k + 127) / 128, m4 = (m + 3) / 4 * 4, n4 = (n + 3) / 4 * 4, nb = (n + 127) / 128;
    std::vector<uint8_t> a(size_t(m) * k), b(size_t(n) * k);
    auto rand_fp8 = [&] { return uint8_t(((rng() & 1) << 7) | ((5 + rng() % 4) << 3) | (rng() & 7)); };
    for (auto& x : a) x = rand_fp8();
    for (auto& x : b) x = rand_fp8();
    std::uniform_real_distribution<float> sd(0.5f, 2.f);
    std::vector<float> sfa(size_t(kb) * m4), sfb(k1d1d ? size_t(kb) * n4 : size_t(nb) * kb), c(size_t(m) * n);
    for (auto& x : sfa) x = sd(rng);
    for (auto& x : sfb) x = sd(rng);
    for (auto& x : c) x = sd(rng) - 1.25f;

    // CPU reference from the dequantized inputs.
    std::vector<float> af(a.size()), bf(b.size());
    for (size_t i = 0; i < a.size(); ++i) af[i] = e4m3_to_float(a[i]);
    for (size_t i = 0; i < b.size(); ++i) bf[i] = e4m3_to_float(b[i]);
    std::vector<double> ref(size_t(m) * n, 0.0);
    for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < n; ++j) {
            double acc = k1d1d ? c[size_t(i) * n + j] : 0.0;
            for (uint32_t q = 0; q < kb; ++q) {
                float part = 0.f;
                for (uint32_t kk = q * 128; kk < std::min(k, q * 128 + 128); ++kk)
                    part += af[size_t(i) * k + kk] * bf[size_t(j) * k + kk];
                const float sb = k1d1d ? sfb[size_t(q) * n4 + j] : sfb[size_t(j / 128) * kb + q];
                acc += double(part) * sfa[size_t(q) * m4 + i] * sb;
            }
            ref[size_t(i) * n + j] = acc;
        }

    uint8_t *da, *db;
    float *dsfa, *dsfb;
    void* dd;
    const size_t out_bytes = k1d1d ? 4 : 2;
    CHECK_CUDA(cudaMalloc(&da, a.size()));
    CHECK_CUDA(cudaMalloc(&db, b.size()));
    CHECK_CUDA(cudaMalloc(&dsfa, sfa.size() * 4));
    CHECK_CUDA(cudaMalloc(&dsfb, sfb.size() * 4));
    CHECK_CUDA(cudaMalloc(&dd, size_t(m) * n * out_bytes));
    CHECK_CUDA(cudaMemcpy(da, a.data(), a.size(), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(db, b.data(), b.size(), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dsfa, sfa.data(), sfa.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dsfb, sfb.data(), sfb.size() * 4, cudaMemcpyHostToDevice));
    if (k1d1d) CHECK_CUDA(cudaMemcpy(dd, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
    else CHECK_CUDA(cudaMemset(dd, 0xff, size_t(m) * n * 2));  // NaN poison

    typename K::Params p{};
    auto put = [](tessera::TmaDescriptor& dst, const CUtensorMap& src) { std::memcpy(&dst, &src, sizeof(src)); };
    put(p.tensor_map_a, make_map(CU_TENSOR_MAP_DATA_TYPE_UINT8, da, k, m, k, 128, C::kBlockM, CU_TENSOR_MAP_SWIZZLE_128B));
    put(p.tensor_map_b, make_map(CU_TENSOR_MAP_DATA_TYPE_UINT8, db, k, n, k, 128, C::kBlockN, CU_TENSOR_MAP_SWIZZLE_128B));
    put(p.tensor_map_sfa, make_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, dsfa, m4, kb, m4 * 4, C::kBlockM, 1,
                                   CU_TENSOR_MAP_SWIZZLE_NONE));
    if (k1d1d)
        put(p.tensor_map_sfb, make_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, dsfb, n4, kb, n4 * 4, C::kBlockN, 1,
                                       CU_TENSOR_MAP_SWIZZLE_NONE));
    put(p.tensor_map_d, make_map(k1d1d ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, dd, n, m,
                                 n * out_bytes, K::kStoreBoxN, K::kStoreBoxM, swizzle_of(K::kSwizzleDBytes)));
    p.sfb = k1d1d ? nullptr : dsfb;
    p.m = m, p.n = n, p.k = k;

    CHECK_CUDA(cudaFuncSetAttribute(smoke_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSmemBytes));
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(C::kNumSMs);
    cfg.blockDim = dim3(K::kNumThreads);
    cfg.dynamicSmemBytes = K::kSmemBytes;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = C::kClusterM * C::kClusterN, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CHECK_CUDA(cudaLaunchKernelEx(&cfg, smoke_kernel<C>, p));
    CHECK_CUDA(cudaDeviceSynchronize());

    // Errors are measured against the largest |ref|: near-zero outputs come from cancellation, and the FP8 tensor
    // core accumulates each 128-K block with reduced precision, so their relative error is meaningless.
    double max_abs = 0, max_ref = 0, xy = 0, xx_yy = 0;
    size_t bad = 0, worst = 0;
    std::vector<uint8_t> out(size_t(m) * n * out_bytes);
    CHECK_CUDA(cudaMemcpy(out.data(), dd, out.size(), cudaMemcpyDeviceToHost));
    auto value = [&](size_t i) {
        float v;
        if (k1d1d) std::memcpy(&v, &out[i * 4], 4);
        else v = bf16_to_float(reinterpret_cast<uint16_t*>(out.data())[i]);
        return double(v);
    };
    for (size_t i = 0; i < ref.size(); ++i) {
        const double v = value(i);
        if (!std::isfinite(v)) ++bad;
        if (std::fabs(v - ref[i]) > max_abs) max_abs = std::fabs(v - ref[i]), worst = i;
        max_ref = std::max(max_ref, std::fabs(ref[i]));
        xy += v * ref[i], xx_yy += v * v + ref[i] * ref[i];
    }
    const double diff = 1.0 - 2.0 * xy / xx_yy;  // DeepGEMM's calc_diff
    const double rel = max_abs / max_ref;
    const bool ok = bad == 0 && rel < (k1d1d ? 5e-4 : 5e-3) && diff < 1e-5;
    std::printf("%-30s m=%u n=%u k=%u smem=%d: max|err|/max|ref| %.1e (at %zu,%zu), diff %.1e, non-finite %zu -> %s\n",
                name, m, n, k, K::kSmemBytes, rel, worst / n, worst % n, diff, bad, ok ? "OK" : "FAIL");
    cudaFree(da), cudaFree(db), cudaFree(dsfa), cudaFree(dsfb), cudaFree(dd);
    return ok;
}

// Times one config on a large shape (inputs are constant bytes: timing only, no check).
template <class C>
static void time_case(const char* name, uint32_t m, uint32_t n, uint32_t k) {
    using K = tessera::sm90::Fp8GemmKernel<C>;
    const uint32_t kb = (k + 127) / 128, m4 = (m + 3) / 4 * 4, nb = (n + 127) / 128;
    uint8_t *da, *db;
    float *dsfa, *dsfb;
    void* dd;
    CHECK_CUDA(cudaMalloc(&da, size_t(m) * k));
    CHECK_CUDA(cudaMalloc(&db, size_t(n) * k));
    CHECK_CUDA(cudaMalloc(&dsfa, size_t(kb) * m4 * 4));
    CHECK_CUDA(cudaMalloc(&dsfb, size_t(nb) * kb * 4));
    CHECK_CUDA(cudaMalloc(&dd, size_t(m) * n * 2));
    CHECK_CUDA(cudaMemset(da, 0x38, size_t(m) * k));
    CHECK_CUDA(cudaMemset(db, 0x38, size_t(n) * k));
    CHECK_CUDA(cudaMemset(dsfa, 0, size_t(kb) * m4 * 4));
    CHECK_CUDA(cudaMemset(dsfb, 0, size_t(nb) * kb * 4));
    typename K::Params p{};
    auto put = [](tessera::TmaDescriptor& dst, const CUtensorMap& src) { std::memcpy(&dst, &src, sizeof(src)); };
    put(p.tensor_map_a, make_map(CU_TENSOR_MAP_DATA_TYPE_UINT8, da, k, m, k, 128, C::kBlockM, CU_TENSOR_MAP_SWIZZLE_128B));
    put(p.tensor_map_b, make_map(CU_TENSOR_MAP_DATA_TYPE_UINT8, db, k, n, k, 128, C::kBlockN, CU_TENSOR_MAP_SWIZZLE_128B));
    put(p.tensor_map_sfa, make_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, dsfa, m4, kb, m4 * 4, C::kBlockM, 1,
                                   CU_TENSOR_MAP_SWIZZLE_NONE));
    put(p.tensor_map_d, make_map(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, dd, n, m, n * 2, K::kStoreBoxN, K::kStoreBoxM,
                                 swizzle_of(K::kSwizzleDBytes)));
    p.sfb = dsfb;
    p.m = m, p.n = n, p.k = k;
    CHECK_CUDA(cudaFuncSetAttribute(smoke_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSmemBytes));
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(C::kNumSMs);
    cfg.blockDim = dim3(K::kNumThreads);
    cfg.dynamicSmemBytes = K::kSmemBytes;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = C::kClusterM * C::kClusterN, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    for (int i = 0; i < 3; ++i) CHECK_CUDA(cudaLaunchKernelEx(&cfg, smoke_kernel<C>, p));
    const int iters = 20;
    cudaEventRecord(e0);
    for (int i = 0; i < iters; ++i) CHECK_CUDA(cudaLaunchKernelEx(&cfg, smoke_kernel<C>, p));
    cudaEventRecord(e1);
    CHECK_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    const double us = ms * 1000 / iters;
    std::printf("%-30s %ux%ux%u: %.1f us, %.0f TFLOPS (L2 warm, no flush)\n", name, m, n, k, us,
                2.0 * m * n * k / us / 1e6);
    cudaFree(da), cudaFree(db), cudaFree(dsfa), cudaFree(dsfb), cudaFree(dd);
}

int main() {
    bool ok = true;
    ok &= run_case<Cfg<128, 128, 5, 2, 1, 1, 0>>("1d2d 128x128", 333, 520, 1040);
    ok &= run_case<Cfg<128, 112, 6, 2, 2, 1, 0>>("1d2d 128x112 B-multicast", 700, 1000, 1040);
    ok &= run_case<Cfg<128, 160, 4, 2, 1, 2, 0>>("1d2d 128x160 A-multicast", 333, 1288, 528);
    ok &= run_case<Cfg<128, 144, 5, 2, 2, 1, 0, 14>>("1d2d 128x144 B-mc odd tiles", 333, 1160, 272);
    ok &= run_case<Cfg<256, 128, 3, 2, 1, 2, 0>>("1d2d 256x128 2 waves A-mc", 600, 776, 1040);
    ok &= run_case<Cfg<128, 256, 3, 2, 1, 1, 0>>("1d2d 128x256 N-split", 300, 1032, 656);
    ok &= run_case<Cfg<64, 24, 12, 1, 1, 1, 0>>("1d2d 64x24 no-swizzle D", 130, 200, 400);
    ok &= run_case<Cfg<64, 136, 8, 1, 1, 1, 0>>("1d2d 64x136", 100, 1096, 384);
    ok &= run_case<Cfg<128, 192, 4, 2, 2, 1, 0, 132>>("1d2d 128x192 B-mc full grid", 1000, 2112, 1024);
    ok &= run_case<Cfg<128, 152, 4, 2, 2, 1, 1>>("1d1d 128x152 B-multicast", 333, 700, 1040);
    ok &= run_case<Cfg<64, 256, 3, 1, 1, 1, 1>>("1d1d 64x256 N-split", 130, 516, 400);
    ok &= run_case<Cfg<128, 24, 8, 2, 1, 2, 1>>("1d1d 128x24 A-multicast", 333, 100, 272);
    std::printf(ok ? "ALL OK\n" : "SOME FAILED\n");
    time_case<Cfg<128, 128, 5, 2, 1, 1, 0, 132>>("1d2d 128x128 s5", 4096, 7168, 7168);
    time_case<Cfg<128, 128, 5, 2, 1, 2, 0, 132>>("1d2d 128x128 s5 A-mc", 4096, 7168, 7168);
    time_case<Cfg<256, 128, 3, 2, 1, 2, 0, 132>>("1d2d 256x128 s3 A-mc", 4096, 7168, 16384);
    time_case<Cfg<128, 192, 4, 2, 2, 1, 0, 132>>("1d2d 128x192 s4 B-mc", 4096, 2112, 7168);
    return ok ? 0 : 1;
}
