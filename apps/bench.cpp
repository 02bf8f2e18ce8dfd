// `tessera bench`: until the GEMM suites land, runs the layout kernels and reports host time per cached call
// (launches queued behind a busy GPU, so the host path is what is timed) and kernel time from CUDA events.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "apps/commands.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
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
    // Host time per cached call: 2000 back-to-back calls; the queue absorbs them, so this is the host path.
    std::vector<double> host_us;
    for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 2000; ++i) transpose_sf_to_mn_major(sf, dst, stream);
        const auto t1 = std::chrono::steady_clock::now();
        host_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 2000);
        TESSERA_CU_CHECK(d.cuStreamSynchronize(stream));
    }
    const double bytes = static_cast<double>(mn * sfk * 4 + aligned * sfk * 4);
    const double k_us = median(kernel_us);
    std::printf("suite %s\n%-34s %10s %10s %12s\n", suite.c_str(), "kernel", "time_us", "GB/s", "host_us/call");
    std::printf("%-34s %10.2f %10.1f %12.2f\n", "transpose_fp32 4096x56", k_us, bytes / (k_us * 1e3), median(host_us));
    std::printf("{\"suite\":\"%s\",\"kernel\":\"transpose_fp32\",\"mn\":%lld,\"sf_k\":%lld,\"time_us\":%.3f,"
                "\"host_us_per_call\":%.3f}\n",
                suite.c_str(), static_cast<long long>(mn), static_cast<long long>(sfk), k_us, median(host_us));
    d.cuEventDestroy(start);
    d.cuEventDestroy(stop);
    d.cuStreamDestroy(stream);
    return 0;
}

}  // namespace tessera::apps
