// fp8_gemm_nt: validate -> plan (memoized per shape) -> tensor maps -> launch.
#include "tessera/fp8_gemm.hpp"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "heuristics/fp8_gemm_sm90.hpp"
#include "jit/jit.hpp"
#include "ops/fp8_gemm_specs.hpp"
#include "ops/validate.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"
#include "tessera/runtime.hpp"

namespace tessera {
namespace {

using heuristics::Fp8GemmMode;
constexpr const char* kOp = "fp8_gemm_nt";

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t align_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// Host mirror of Fp8GemmKernel::Params (kernels/tessera/sm90/fp8_gemm.cuh); the launch checks its size.
// The device side aligns descriptors to 64 bytes; CUDA 13's CUtensorMap is 128-aligned, so the bytes are copied into
// a 64-aligned holder to keep the two layouts identical.
struct alignas(64) TmaBytes {
    unsigned char bytes[128];
    TmaBytes& operator=(const CUtensorMap& map) {
        static_assert(sizeof(CUtensorMap) == sizeof(bytes));
        std::memcpy(bytes, &map, sizeof(bytes));
        return *this;
    }
};
struct alignas(64) Fp8GemmParams {
    TmaBytes tensor_map_a, tensor_map_b, tensor_map_sfa, tensor_map_sfb, tensor_map_d;
    const float* sfb;
    std::uint32_t m, n, k;
};
static_assert(sizeof(Fp8GemmParams) == 704, "must match the kernel's Params");

struct PlanKey {
    std::int64_t m, n, k;
    int mode, num_sms, device;
    bool operator==(const PlanKey&) const = default;
};
struct PlanKeyHash {
    std::size_t operator()(const PlanKey& k) const noexcept {
        std::size_t h = static_cast<std::size_t>(k.m) * 0x9e3779b97f4a7c15ULL;
        h ^= static_cast<std::size_t>(k.n) * 0xbf58476d1ce4e5b9ULL + (h << 6);
        h ^= static_cast<std::size_t>(k.k) * 0x94d049bb133111ebULL + (h >> 2);
        return h ^ (static_cast<std::size_t>(k.mode) << 1) ^ (static_cast<std::size_t>(k.num_sms) << 8) ^
               (static_cast<std::size_t>(k.device) << 20);
    }
};
struct Plan {
    heuristics::Fp8GemmConfig config;
    const jit::Kernel* kernel = nullptr;
};

jit::KernelSpec make_spec(const heuristics::Fp8GemmConfig& c, Fp8GemmMode mode, std::int64_t n, std::int64_t k) {
    jit::KernelSpec spec(jit::Family::kFp8Gemm);
    spec.set("kMode", static_cast<int>(mode))
        .set("kBlockM", c.block_m)
        .set("kBlockN", c.block_n)
        .set("kBlockK", c.block_k)
        .set("kNumStages", c.num_stages)
        .set("kNumMathWarpgroups", c.num_math_warpgroups)
        .set("kClusterM", c.cluster_m)
        .set("kClusterN", c.cluster_n)
        .set("kNumSMs", c.num_sms)
        .set("kShapeM", 0)
        .set("kShapeN", n)
        .set("kShapeK", k)
        .set("kGroupSize", c.group_size);
    return spec;
}

const Plan& plan_for(const PlanKey& key) {
    static std::mutex mutex;
    static std::unordered_map<PlanKey, Plan, PlanKeyHash> plans;
    {
        std::lock_guard lock(mutex);
        if (auto it = plans.find(key); it != plans.end()) [[likely]] return it->second;
    }
    heuristics::Fp8GemmProblem problem;
    problem.m = key.m;
    problem.n = key.n;
    problem.k = key.k;
    problem.mode = static_cast<Fp8GemmMode>(key.mode);
    problem.num_sms = key.num_sms;
    problem.max_smem_bytes = runtime::device_info(key.device).max_smem_per_block;
    Plan plan;
    plan.config = heuristics::choose_fp8_gemm_config(problem);
    plan.kernel = &jit::jit().get(make_spec(plan.config, problem.mode, key.n, key.k));
    if (options().print_configs)
        std::fprintf(stderr, "[tessera] fp8_gemm_nt m=%lld n=%lld k=%lld %s: %s\n", static_cast<long long>(key.m),
                     static_cast<long long>(key.n), static_cast<long long>(key.k),
                     key.mode == 0 ? "1D2D" : "1D1D", plan.config.describe().c_str());
    std::lock_guard lock(mutex);
    return plans.emplace(key, plan).first->second;
}

void check_tma_operand(ops::Arg arg, const TensorRef& t) {
    TESSERA_CHECK(t.stride(-1) == 1 || t.size(-1) <= 1, kOp, ": argument '", arg.name,
                  "': expected K-major (stride(-1) == 1; MN-major FP8 operands are not supported on SM90), got strides ",
                  ops::strides_string(t));
    TESSERA_CHECK((t.stride(0) * dtype_size(t.dtype)) % 16 == 0 || t.size(0) <= 1, kOp, ": argument '", arg.name,
                  "': expected a row stride that is a multiple of 16 bytes (TMA), got ", t.stride(0) * dtype_size(t.dtype),
                  " bytes");
    TESSERA_CHECK(reinterpret_cast<std::uintptr_t>(t.data) % 16 == 0, kOp, ": argument '", arg.name,
                  "': expected a 16-byte aligned data pointer (TMA), got ", t.data);
}

bool sf_mn_major_aligned(const TensorRef& sf, std::int64_t mn, std::int64_t sf_k) {
    return sf.ndim == 2 && sf.size(0) == mn && sf.size(1) == sf_k && is_mn_major_tma_aligned(sf) &&
           reinterpret_cast<std::uintptr_t>(sf.data) % 16 == 0;
}

runtime::TmaDesc2d map_2d(const void* base, CUtensorMapDataType type, int bytes, std::int64_t inner,
                          std::int64_t outer, std::int64_t stride_elems, int box_inner, int box_outer,
                          runtime::TmaSwizzle swizzle) {
    runtime::TmaDesc2d m;
    m.base = base;
    m.dtype = type;
    m.element_bytes = bytes;
    m.inner = static_cast<std::uint64_t>(inner);
    m.outer = static_cast<std::uint64_t>(outer);
    m.outer_stride_bytes = static_cast<std::uint64_t>(stride_elems * bytes);
    m.box_inner = static_cast<std::uint32_t>(box_inner);
    m.box_outer = static_cast<std::uint32_t>(box_outer);
    m.swizzle = swizzle;
    return m;
}

}  // namespace

namespace ops {

std::vector<jit::KernelSpec> fp8_gemm_suite_specs(int num_sms, int max_smem_bytes) {
    std::vector<jit::KernelSpec> specs;
    const std::int64_t nk[][2] = {{2112, 7168}, {576, 7168}, {24576, 1536}, {32768, 512},
                                  {7168, 16384}, {4096, 7168}, {7168, 2048}};
    auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k, Fp8GemmMode mode) {
        heuristics::Fp8GemmProblem p{m, n, k, mode, num_sms, max_smem_bytes};
        const jit::KernelSpec spec = make_spec(heuristics::choose_fp8_gemm_config(p), mode, n, k);
        for (const jit::KernelSpec& s : specs)
            if (s == spec) return;
        specs.push_back(spec);
    };
    for (auto [n, k] : nk) {
        for (std::int64_t m : {1, 128, 4096}) add(m, n, k, Fp8GemmMode::k1D2D);
        add(n, 4096, k, Fp8GemmMode::k1D1D);  // the wgrad shape of the pair
    }
    return specs;
}

}  // namespace ops

Fp8GemmStatus fp8_gemm_nt(const TensorRef& a, const TensorRef& sfa, const TensorRef& b, const TensorRef& sfb,
                          const TensorRef& d, Fp8Recipe recipe, Stream stream) {
    const bool fp32_out = recipe == Fp8Recipe::k1D1D;
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d}}) {
        ops::check_ndim({kOp, name}, *t, {2});
        ops::check_cuda({kOp, name}, *t);
    }
    ops::check_dtype({kOp, "a"}, a, {DType::kFloat8E4M3});
    ops::check_dtype({kOp, "b"}, b, {DType::kFloat8E4M3});
    ops::check_dtype({kOp, "d"}, d, {fp32_out ? DType::kFloat32 : DType::kBFloat16});
    ops::check_same_device({kOp, "b"}, b, a, "a");
    ops::check_same_device({kOp, "d"}, d, a, "a");
    ops::check_same_device({kOp, "sfa"}, sfa, a, "a");
    ops::check_same_device({kOp, "sfb"}, sfb, a, "a");
    const std::int64_t m = a.size(0), k = a.size(1), n = b.size(0);
    TESSERA_CHECK(b.size(1) == k, kOp, ": argument 'b': expected [N, K] with K = ", k, " (from a), got shape ",
                  ops::shape_string(b));
    TESSERA_CHECK(d.size(0) == m && d.size(1) == n, kOp, ": argument 'd': expected shape [", m, ", ", n,
                  "], got ", ops::shape_string(d));
    ops::check_dtype({kOp, "sfa"}, sfa, {DType::kFloat32});
    ops::check_dtype({kOp, "sfb"}, sfb, {DType::kFloat32});
    const std::int64_t sf_k = ceil_div(k, 128);
    TESSERA_CHECK(sfa.ndim == 2 && sfa.size(0) == m && sfa.size(1) == sf_k, kOp, ": argument 'sfa': expected shape [",
                  m, ", ", sf_k, "] (one scale per row and 128 K), got ", ops::shape_string(sfa));
    const std::int64_t sfb_rows = fp32_out ? n : ceil_div(n, 128);
    TESSERA_CHECK(sfb.ndim == 2 && sfb.size(0) == sfb_rows && sfb.size(1) == sf_k, kOp,
                  ": argument 'sfb': expected shape [", sfb_rows, ", ", sf_k, "] (", fp32_out ? "per row" : "per 128x128 block",
                  " of b), got ", ops::shape_string(sfb));
    if (m == 0 || n == 0) return Fp8GemmStatus::kLaunched;
    TESSERA_CHECK(k % 16 == 0 && k > 0, kOp, ": argument 'a': expected K > 0 and a multiple of 16 (TMA rows of 16 bytes), got K = ", k);
    TESSERA_CHECK(n % (fp32_out ? 4 : 8) == 0, kOp, ": argument 'd': expected N a multiple of ", fp32_out ? 4 : 8,
                  " (16-byte output rows), got N = ", n);
    check_tma_operand({kOp, "a"}, a);
    check_tma_operand({kOp, "b"}, b);
    check_tma_operand({kOp, "d"}, d);
    TESSERA_CHECK(d.stride(-1) == 1, kOp, ": argument 'd': expected row-major (stride(-1) == 1), got strides ",
                  ops::strides_string(d));
    if (!sf_mn_major_aligned(sfa, m, sf_k)) return Fp8GemmStatus::kNeedsSfaLayout;
    if (fp32_out ? !sf_mn_major_aligned(sfb, n, sf_k) : !(sfb.is_contiguous())) return Fp8GemmStatus::kNeedsSfbLayout;

    const int device = a.device.index;
    const PlanKey key{m, n, k, static_cast<int>(recipe), get_num_sms(), device};
    const Plan& plan = plan_for(key);
    const heuristics::Fp8GemmConfig& c = plan.config;
    using runtime::TmaSwizzle;
    const TmaSwizzle d_swizzle = static_cast<TmaSwizzle>(c.swizzle_d_bytes);
    Fp8GemmParams params{};
    params.tensor_map_a = runtime::encode_tma_2d(map_2d(a.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k, m, a.stride(0),
                                                        128, c.block_m, TmaSwizzle::k128B));
    params.tensor_map_b = runtime::encode_tma_2d(map_2d(b.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k, n, b.stride(0),
                                                        128, c.block_n, TmaSwizzle::k128B));
    params.tensor_map_sfa = runtime::encode_tma_2d(map_2d(sfa.data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                                                          align_up(m, 4), sf_k, align_up(m, 4), c.block_m, 1,
                                                          TmaSwizzle::kNone));
    if (fp32_out)
        params.tensor_map_sfb = runtime::encode_tma_2d(map_2d(sfb.data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                                                              align_up(n, 4), sf_k, align_up(n, 4), c.block_n, 1,
                                                              TmaSwizzle::kNone));
    else
        params.sfb = static_cast<const float*>(sfb.data);
    params.tensor_map_d = runtime::encode_tma_2d(
        map_2d(d.data, fp32_out ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
               fp32_out ? 4 : 2, n, m, d.stride(0), c.store_box_n, 64, d_swizzle));
    params.m = static_cast<std::uint32_t>(m);
    params.n = static_cast<std::uint32_t>(n);
    params.k = static_cast<std::uint32_t>(k);

    jit::LaunchConfig launch;
    launch.grid_x = static_cast<unsigned>(c.num_sms);
    launch.block_x = static_cast<unsigned>(c.num_threads());
    launch.smem_bytes = static_cast<unsigned>(c.smem_bytes);
    launch.cluster_x = static_cast<unsigned>(c.cluster_m * c.cluster_n);
    launch.stream = static_cast<CUstream>(stream);
    launch.device = device;
    plan.kernel->launch(launch, params);
    return Fp8GemmStatus::kLaunched;
}

}  // namespace tessera
