// `tessera bench`: host time per cached call of the C++ entry points (the scale-factor transpose 4096x56 and the FP8
// GEMM 128x2112x7168), each batch of calls queued behind a ~1 ms fill so that the host path, not the GPU, is what is
// timed. Kernel times and the GEMM suites are bench/run.py's; the Python entry points' overhead is
// bench/python_overhead.py's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "tessera/error.hpp"
#include "tessera/fp8_gemm.hpp"
#include "tessera/layout.hpp"
#include "tessera/runtime.hpp"

namespace tessera::apps {
namespace {

constexpr std::uint32_t kOneF32 = 0x3f800000u;  // 1.0f
constexpr int kBatch = 100, kRepeats = 7;

// Median host microseconds per call of `call` over kRepeats batches of kBatch, each queued behind a fill of `busy`
// (~1 ms of GPU work: longer than a batch takes to issue, and few enough launches that the queue never fills).
template <class Call>
double host_us_per_call(Call&& call, const DeviceBuffer& busy) {
    call();  // compile or load, outside the timing
    synchronize(nullptr);
    std::vector<double> us;
    for (int rep = 0; rep < kRepeats; ++rep) {
        busy.fill_async(kOneF32, nullptr);
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kBatch; ++i) call();
        const auto t1 = std::chrono::steady_clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kBatch);
        synchronize(nullptr);
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
}

struct Row {
    const char* call;
    std::string shape;
    double host_us;
};

int bench(const Args& args) {
    const SystemInfo info = system_info();
    if (info.devices.empty())
        throw Unsupported("needs a GPU; the driver reports " +
                          (info.driver_loaded ? std::string("no device") : info.driver_error));
    const std::string json_path = args.get("--json", "");
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> json(nullptr, std::fclose);
    if (!json_path.empty()) {
        json.reset(std::fopen(json_path.c_str(), "w"));
        if (!json) throw InvalidArgument("--json: cannot write '" + json_path + "'");
    }
    const std::string& device = info.devices.front();
    std::printf("device 0: %s\n", device.c_str());
    const Device cuda{DeviceKind::kCuda, 0};
    const DeviceBuffer busy(0, std::size_t{1} << 32);  // 4 GiB: a fill takes ~1 ms
    std::vector<Row> rows;

    // The SFA of a typical prefill GEMM: 4096 rows x 56 K-blocks (K = 7168), into the MN-major TMA-aligned layout.
    const std::int64_t mn = 4096, sfk = 56, aligned = get_tma_aligned_size(mn, 4);
    const DeviceBuffer in(0, mn * sfk * 4), out(0, aligned * sfk * 4);
    const TensorRef sf = make_tensor_ref(in.data(), DType::kFloat32, {mn, sfk}, cuda);
    const TensorRef dst = make_tensor_ref(out.data(), DType::kFloat32, {mn, sfk}, cuda, {1, aligned});
    rows.push_back({"transpose_sf_to_mn_major", "4096x56",
                    host_us_per_call([&] { transpose_sf_to_mn_major(sf, dst, nullptr); }, busy)});

    // A decode-size layer (the row bench/python_overhead.py times from Python). The operands hold 1.0 so that the
    // kernel reads finite numbers; their values do not matter for host time.
    const std::int64_t m = 128, n = 2112, k = 7168, sf_k = k / 128, sfb_rows = (n + 127) / 128;
    const DeviceBuffer a(0, m * k), b(0, n * k), sfa(0, sf_k * m * 4), sfb(0, sfb_rows * sf_k * 4), d(0, m * n * 2);
    for (const DeviceBuffer* operand : {&a, &b}) operand->fill_async(0x38383838u, nullptr);  // e4m3 1.0
    for (const DeviceBuffer* scales : {&sfa, &sfb}) scales->fill_async(kOneF32, nullptr);
    const TensorRef ra = make_tensor_ref(a.data(), DType::kFloat8E4M3, {m, k}, cuda);
    const TensorRef rb = make_tensor_ref(b.data(), DType::kFloat8E4M3, {n, k}, cuda);
    const TensorRef rsa = make_tensor_ref(sfa.data(), DType::kFloat32, {m, sf_k}, cuda, {1, m});
    const TensorRef rsb = make_tensor_ref(sfb.data(), DType::kFloat32, {sfb_rows, sf_k}, cuda);
    const TensorRef rd = make_tensor_ref(d.data(), DType::kBFloat16, {m, n}, cuda);
    rows.push_back({"fp8_gemm_nt", "128x2112x7168", host_us_per_call([&] {
                        if (fp8_gemm_nt(ra, rsa, rb, rsb, rd, Fp8Recipe::k1D2D, nullptr) != Fp8GemmStatus::kLaunched)
                            throw Error("fp8_gemm_nt: expected a launch, got a scale layout request");
                    }, busy)});

    std::printf("%-26s %-14s %14s\n", "call", "shape", "host_us/call");
    for (const Row& r : rows) {
        std::printf("%-26s %-14s %14.2f\n", r.call, r.shape.c_str(), r.host_us);
        if (json)
            std::fprintf(json.get(), "{\"command\":\"bench\",\"device\":\"%s\",\"call\":\"%s\",\"shape\":\"%s\","
                               "\"host_us_per_call\":%.3f}\n",
                         device.c_str(), r.call, r.shape.c_str(), r.host_us);
    }
    if (json && std::fclose(json.release()) != 0) throw Error("--json: cannot write '" + json_path + "'");
    return 0;
}

}  // namespace

const Command& bench_command() {
    static const Command command{
        "bench", "tessera bench [--json FILE]",
        "Host time per cached call of the C++ entry points on GPU 0 (microseconds the calling thread spends in the\n"
        "call, once its kernel is compiled and loaded): transpose_sf_to_mn_major 4096x56 and fp8_gemm_nt\n"
        "128x2112x7168. Each batch of 100 calls is queued behind ~1 ms of GPU work so that the host path is what is\n"
        "timed; the median of 7 batches is reported. Needs a GPU. Kernel times and the GEMM suites: bench/run.py.\n"
        "\n"
        "  --json FILE   also write one JSON object per call to FILE\n",
        {{"--json", true, false}},
        bench};
    return command;
}

}  // namespace tessera::apps
