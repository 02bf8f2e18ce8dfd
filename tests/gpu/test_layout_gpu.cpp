// GPU: the JIT path end to end (compile or cache, load, launch) through the layout kernels, checked against a
// CPU reference on random data; the output is poisoned first, so unwritten elements fail.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "tessera/layout.hpp"

using namespace tessera;

namespace {

bool has_gpu() { return runtime::device_count() > 0; }

struct Buffer {
    CUdeviceptr ptr = 0;
    std::size_t bytes;
    explicit Buffer(std::size_t n) : bytes(n) { TESSERA_CU_CHECK(runtime::driver().cuMemAlloc(&ptr, n)); }
    ~Buffer() { runtime::driver().cuMemFree(ptr); }
    template <class T>
    void upload(const std::vector<T>& v) { TESSERA_CU_CHECK(runtime::driver().cuMemcpyHtoD(ptr, v.data(), v.size() * sizeof(T))); }
    template <class T>
    std::vector<T> download(std::size_t n) {
        std::vector<T> v(n);
        TESSERA_CU_CHECK(runtime::driver().cuMemcpyDtoH(v.data(), ptr, n * sizeof(T)));
        return v;
    }
};

}  // namespace

TEST(LayoutGpu, TransposeMatchesReferenceForOddShapesAndStrides) {
    if (!has_gpu()) GTEST_SKIP() << "no CUDA GPU";
    runtime::make_current(0);
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> dist(-3.f, 3.f);
    for (auto [batches, mn, sfk, k_major] : std::vector<std::tuple<int, int, int, bool>>{
             {1, 4097, 57, true}, {3, 130, 1, true}, {2, 33, 20, false}, {1, 1, 1, true}}) {
        SCOPED_TRACE(testing::Message() << batches << "x" << mn << "x" << sfk << (k_major ? " K-major" : " MN-major"));
        const std::int64_t aligned = (mn + 3) / 4 * 4;
        std::vector<float> host(static_cast<std::size_t>(batches) * mn * sfk);
        for (float& x : host) x = dist(rng);
        Buffer in(host.size() * 4), out(static_cast<std::size_t>(batches) * aligned * sfk * 4);
        in.upload(host);
        TESSERA_CU_CHECK(runtime::driver().cuMemsetD32Async(out.ptr, 0x7fc00001u, out.bytes / 4, nullptr));  // NaN
        const Device cuda{DeviceKind::kCuda, 0};
        // K-major input: strides (mn*sfk, sfk, 1); MN-major (plain, unaligned): (mn*sfk, 1, mn).
        const TensorRef sf = k_major ? make_tensor_ref(reinterpret_cast<void*>(in.ptr), DType::kFloat32,
                                                       {batches, mn, sfk}, cuda)
                                     : make_tensor_ref(reinterpret_cast<void*>(in.ptr), DType::kFloat32,
                                                       {batches, mn, sfk}, cuda,
                                                       {static_cast<std::int64_t>(mn) * sfk, 1, mn});
        const TensorRef dst = make_tensor_ref(reinterpret_cast<void*>(out.ptr), DType::kFloat32, {batches, mn, sfk},
                                              cuda, {aligned * sfk, 1, aligned});
        transpose_sf_to_mn_major(sf, dst, nullptr);
        TESSERA_CU_CHECK(runtime::driver().cuCtxSynchronize());
        const std::vector<float> got = out.download<float>(out.bytes / 4);
        std::int64_t mismatches = 0;
        for (int b = 0; b < batches; ++b)
            for (int m = 0; m < aligned; ++m)
                for (int k = 0; k < sfk; ++k) {
                    float expect = 0.f;
                    if (m < mn) expect = k_major ? host[(static_cast<std::size_t>(b) * mn + m) * sfk + k]
                                                 : host[static_cast<std::size_t>(b) * mn * sfk + k * mn + m];
                    const float g = got[static_cast<std::size_t>(b) * aligned * sfk + k * aligned + m];
                    mismatches += !(g == expect);  // NaN (unwritten) never compares equal
                }
        EXPECT_EQ(mismatches, 0);
    }
}
