// `tessera bench`: kernel time of the layout transpose (CUDA events) and host time per cached call of the C++ entry
// points (layout transpose, FP8 GEMM 128x2112x7168), each batch of calls queued behind a ~1 ms memset so that the
// host path, not the GPU, is what is timed. The Python entry points: bench/python_overhead.py.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "apps/commands.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "tessera/fp8_gemm.hpp"
#include "tessera/layout.hpp"

namespace tessera::apps {
namespace {

struct DeviceBuffer {
    CUdeviceptr ptr = 0;
    explicit DeviceBuffer(std::size_t bytes) { TESSERA_CU_CHECK(runtime::driver().cuMemAlloc(&ptr, bytes)); }
    ~DeviceBuffer() { runtime::driver().cuMemFree(ptr); }
    void* get() const { return reinterpret_cast<void*>(ptr); }
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median host microseconds per call of `call`, in batches of 100 queued behind a memset of `busy` (~1 ms of GPU
// work, longer than the batch takes to issue, and few enough launches that the queue never fills).
template <class Call>
double host_us_per_call(Call&& call, const DeviceBuffer& busy, std::size_t busy_words, CUstream stream) {
    const runtime::Driver& d = runtime::driver();
    call();
    TESSERA_CU_CHECK(d.cuStreamSynchronize(stream));
    std::vector<double> us;
    for (int rep = 0; rep < 7; ++rep) {
        TESSERA_CU_CHECK(d.cuMemsetD32Async(busy.ptr, 0x3f800000u, busy_words, stream));
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 100; ++i) call();
        const auto t1 = std::chrono::steady_clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 100);
        TESSERA_CU_CHECK(d.cuStreamSynchronize(stream));
    }
    return median(us);
}

}  // namespace

int bench(const std::vector<std::string>& args) {
    const std::string suite = flag_value(args, "--suite", "layout");
    const runtime::Driver& d = runtime::driver();
    runtime::make_current(0);
    const runtime::DeviceInfo& dev = runtime::device_info(0);
    std::printf("device: %s, %d SMs\n", dev.name.c_str(), dev.num_sms);

    // MN = 4096 rows x 56 K-blocks (K = 7168): the SFA of a typical prefill GEMM.
    const std::int64_t mn = 4096, sfk = 56, aligned = get_tma_aligned_size(mn, 4);
    DeviceBuffer in(mn * sfk * 4), out(aligned * sfk * 4);
    const Device cuda{DeviceKind::kCuda, 0};
    const TensorRef sf = make_tensor_ref(in.get(), DType::kFloat32, {mn, sfk}, cuda);
    const TensorRef dst = make_tensor_ref(out.get(), DType::kFloat32, {mn, sfk}, cuda, {1, aligned});
    CUstream stream = nullptr;
    TESSERA_CU_CHECK(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    transpose_sf_to_mn_major(sf, dst, stream);  // compile + load
    TESSERA_CU_CHECK(d.cuStreamSynchronize(stream));

    // Kernel time: events around each call, median of 50.
    CUevent start = nullptr, stop = nullptr;
    TESSERA_CU_CHECK(d.cuEventCreate(&start, CU_EVENT_DEFAULT));
    TESSERA_CU_CHECK(d.cuEventCreate(&stop, CU_EVENT_DEFAULT));
    std::vector<double> kernel_us;
    for (int i = 0; i < 50; ++i) {
        TESSERA_CU_CHECK(d.cuEventRecord(start, stream));
        transpose_sf_to_mn_major(sf, dst, stream);
        TESSERA_CU_CHECK(d.cuEventRecord(stop, stream));
        TESSERA_CU_CHECK(d.cuEventSynchronize(stop));
        float ms = 0;
        TESSERA_CU_CHECK(d.cuEventElapsedTime(&ms, start, stop));
        kernel_us.push_back(ms * 1e3);
    }
    // Host time per cached call.
    const std::size_t busy_words = std::size_t{1} << 30;  // 4 GiB
    DeviceBuffer busy(busy_words * 4);
    const double transpose_host_us =
        host_us_per_call([&] { transpose_sf_to_mn_major(sf, dst, stream); }, busy, busy_words, stream);
    // FP8 GEMM 128x2112x7168 (a decode-size layer; the row bench/python_overhead.py times from Python). The operands'
    // contents do not matter for host time; they are filled so the kernel reads finite numbers.
    const std::int64_t m = 128, n = 2112, k = 7168, sf_k = k / 128;
    DeviceBuffer a(m * k), b(n * k), sfa(sf_k * m * 4), sfb(((n + 127) / 128) * sf_k * 4), dd(m * n * 2);
    TESSERA_CU_CHECK(d.cuMemsetD8Async(a.ptr, 0x38, m * k, stream));  // e4m3 1.0
    TESSERA_CU_CHECK(d.cuMemsetD8Async(b.ptr, 0x38, n * k, stream));
    TESSERA_CU_CHECK(d.cuMemsetD32Async(sfa.ptr, 0x3f800000u, sf_k * m, stream));  // fp32 1.0
    TESSERA_CU_CHECK(d.cuMemsetD32Async(sfb.ptr, 0x3f800000u, ((n + 127) / 128) * sf_k, stream));
    const TensorRef ra = make_tensor_ref(a.get(), DType::kFloat8E4M3, {m, k}, cuda);
    const TensorRef rb = make_tensor_ref(b.get(), DType::kFloat8E4M3, {n, k}, cuda);
    const TensorRef rsa = make_tensor_ref(sfa.get(), DType::kFloat32, {m, sf_k}, cuda, {1, m});
    const TensorRef rsb = make_tensor_ref(sfb.get(), DType::kFloat32, {(n + 127) / 128, sf_k}, cuda);
    const TensorRef rd = make_tensor_ref(dd.get(), DType::kBFloat16, {m, n}, cuda);
    const double fp8_host_us = host_us_per_call(
        [&] { fp8_gemm_nt(ra, rsa, rb, rsb, rd, Fp8Recipe::k1D2D, stream); }, busy, busy_words, stream);
    const double bytes = static_cast<double>(mn * sfk * 4 + aligned * sfk * 4);
    const double k_us = median(kernel_us);
    std::printf("suite %s\n%-34s %10s %10s %12s\n", suite.c_str(), "kernel", "time_us", "GB/s", "host_us/call");
    std::printf("%-34s %10.2f %10.1f %12.2f\n", "transpose_fp32 4096x56", k_us, bytes / (k_us * 1e3), transpose_host_us);
    std::printf("%-34s %10s %10s %12.2f\n", "fp8_gemm_nt 128x2112x7168 (C++)", "-", "-", fp8_host_us);
    std::printf("{\"suite\":\"%s\",\"kernel\":\"transpose_fp32\",\"mn\":%lld,\"sf_k\":%lld,\"time_us\":%.3f,"
                "\"host_us_per_call\":%.3f}\n",
                suite.c_str(), static_cast<long long>(mn), static_cast<long long>(sfk), k_us, transpose_host_us);
    std::printf("{\"suite\":\"%s\",\"kernel\":\"fp8_gemm_nt\",\"m\":128,\"n\":2112,\"k\":7168,"
                "\"host_us_per_call\":%.3f}\n",
                suite.c_str(), fp8_host_us);
    d.cuEventDestroy(start);
    d.cuEventDestroy(stop);
    d.cuStreamDestroy(stream);
    return 0;
}

}  // namespace tessera::apps
