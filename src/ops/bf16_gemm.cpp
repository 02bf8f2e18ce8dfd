// bf16_gemm_nt: validate -> plan (memoized per problem) -> tensor maps -> launch.
#include "tessera/bf16_gemm.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ops/bf16_gemm_specs.hpp"
#include "ops/validate.hpp"
#include "runtime/device.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"

namespace tessera {
namespace ops {

jit::KernelSpec make_bf16_gemm_spec(const heuristics::Bf16GemmConfig& c, const heuristics::Bf16GemmProblem& p,
                                    GemmKind kind) {
    jit::KernelSpec spec(jit::Family::kBf16Gemm);
    spec.set("kBlockM", c.block_m)
        .set("kBlockN", c.block_n)
        .set("kNumStages", c.num_stages)
        .set("kNumSMs", c.num_sms)
        .set("kShapeM", 0)
        .set("kShapeN", p.n)
        .set("kShapeK", p.k)
        .set("kGroupSize", c.group_size)
        .set("kGemmKind", static_cast<int>(kind))
        .set("kMajorA", p.mn_major_a ? 1 : 0)
        .set("kMajorB", p.mn_major_b ? 1 : 0)
        .set("kOutF32", p.out_f32 ? 1 : 0)
        .set("kAccumulate", p.accumulate ? 1 : 0);
    return spec;
}

std::vector<jit::KernelSpec> bf16_catalog_specs(int num_sms) {
    std::vector<jit::KernelSpec> specs;
    const std::int64_t nk[][2] = {{2112, 7168}, {576, 7168}, {24576, 1536}, {32768, 512},
                                  {7168, 16384}, {4096, 7168}, {7168, 2048}};
    const auto add = [&](heuristics::Bf16GemmProblem p, GemmKind kind = GemmKind::kDense) {
        p.num_sms = num_sms;
        const jit::KernelSpec spec = make_bf16_gemm_spec(heuristics::choose_bf16_gemm_config(p), p, kind);
        if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
    };
    for (auto [n, k] : nk) {
        for (std::int64_t m : {1, 128, 4096}) {
            add({m, n, k});                                       // forward, BF16 out
            add({m, n, k, false, false, false, true});            // forward, BF16 out, C = D accumulated
        }
        add({4096, k, n, false, true});                           // dgrad: B MN-major
        add({n, 4096, k, true, true, true, true});                // wgrad: both MN-major, FP32 D += A·B
        add({n, 4096, k, true, true});                            // wgrad into BF16
    }
    add({4096, 256, 7168, false, false, true});                   // FP32 out
    // m-grouped (the kernel's kinds; the host ops route to them next): contiguous with B K- or MN-major at the
    // 128-row alignment, psum and masked (expected rows per group), over DeepGEMM's grouped (N, K).
    const std::int64_t grouped_nk[][2] = {{6144, 7168}, {7168, 3072}, {4096, 4096}, {4096, 2048}};
    for (auto [n, k] : grouped_nk) {
        for (bool mn_b : {false, true}) {
            heuristics::Bf16GemmProblem p{32768, n, k, false, mn_b};
            p.block_m = 128;
            add(p, GemmKind::kContiguous);
            heuristics::Bf16GemmProblem psum{4096, n, k, false, mn_b};
            psum.num_groups = 8;
            add(psum, GemmKind::kPsum);
        }
        for (auto [groups, expected] : {std::pair<int, int>{32, 192}, {6, 1024}, {32, 20}}) {
            heuristics::Bf16GemmProblem p{expected, n, k};
            p.num_groups = groups;
            add(p, GemmKind::kMasked);
        }
    }
    return specs;
}

}  // namespace ops

namespace {

constexpr const char* kOp = "bf16_gemm_nt";
using ops::ceil_div;
using ops::GemmKind;

struct Bf16PlanKey {
    std::int64_t m, n, k;
    bool mn_major_a, mn_major_b, out_f32, accumulate;
    int num_sms, device, block_n_multiple;
    bool operator==(const Bf16PlanKey&) const = default;
};
struct Bf16PlanKeyHash {
    std::size_t operator()(const Bf16PlanKey& k) const noexcept {
        std::size_t h = static_cast<std::size_t>(k.m) * 0x9e3779b97f4a7c15ULL;
        h ^= static_cast<std::size_t>(k.n) * 0xbf58476d1ce4e5b9ULL + (h << 6);
        h ^= static_cast<std::size_t>(k.k) * 0x94d049bb133111ebULL + (h >> 2);
        const std::size_t flags = (k.mn_major_a ? 1u : 0u) | (k.mn_major_b ? 2u : 0u) | (k.out_f32 ? 4u : 0u) |
                                  (k.accumulate ? 8u : 0u);
        return h ^ flags ^ (static_cast<std::size_t>(k.num_sms) << 8) ^ (static_cast<std::size_t>(k.device) << 20) ^
               (static_cast<std::size_t>(k.block_n_multiple) << 32);
    }
};
struct Bf16Plan {
    heuristics::Bf16GemmConfig config;
    const jit::Kernel* kernel = nullptr;
};

// Plans are made once per key and never erased (map nodes do not move, so references stay valid).
const Bf16Plan& bf16_plan(const Bf16PlanKey& key) {
    static std::mutex mutex;
    static std::unordered_map<Bf16PlanKey, Bf16Plan, Bf16PlanKeyHash> plans;
    {
        std::lock_guard lock(mutex);
        if (auto it = plans.find(key); it != plans.end()) return it->second;
    }
    heuristics::Bf16GemmProblem p{key.m, key.n, key.k, key.mn_major_a, key.mn_major_b, key.out_f32, key.accumulate};
    p.num_sms = key.num_sms;
    p.max_smem_bytes = runtime::device_info(key.device).max_smem_per_block;
    p.block_n_multiple = key.block_n_multiple;
    Bf16Plan plan;
    plan.config = heuristics::choose_bf16_gemm_config(p);
    runtime::make_current(key.device);  // loading the module needs the device's context current
    plan.kernel = &jit::jit().get(ops::make_bf16_gemm_spec(plan.config, p, GemmKind::kDense));
    if (options().print_configs)
        std::fprintf(stderr, "[tessera] %s m=%lld n=%lld k=%lld: %s\n", kOp, static_cast<long long>(key.m),
                     static_cast<long long>(key.n), static_cast<long long>(key.k), plan.config.describe().c_str());
    std::lock_guard lock(mutex);
    return plans.emplace(key, plan).first->second;
}

// Host mirror of Bf16GemmKernel::Params (kernels/tessera/sm90/bf16_gemm.cuh); the kernel checks the size.
struct alignas(64) Bf16GemmParams {
    ops::TmaBytes tensor_map_a, tensor_map_b, tensor_map_d;
    std::uint32_t m, n, k;
    const std::int32_t* grouped_layout;
    void* d;
    std::uint32_t ld_d;
    std::uint32_t num_groups;
    std::uint32_t alignment;
};
static_assert(sizeof(Bf16GemmParams) == 448, "must match the kernel's Params");
static_assert(offsetof(Bf16GemmParams, alignment) == 424, "must match the kernel's Params");

// An operand [rows, K]: K-major when its last stride is 1, MN-major when its first is (the transpose of a
// row-major [K, rows]). Its other stride must make 16-byte TMA rows, its base 16-byte aligned.
bool mn_major_operand(const char* name, const TensorRef& t) {
    const bool k_major = t.stride(1) == 1 || t.size(1) <= 1;
    const bool mn_major = !k_major && (t.stride(0) == 1 || t.size(0) <= 1);
    TESSERA_CHECK(k_major || mn_major, kOp, ": argument '", name,
                  "': expected K-major (stride(-1) == 1) or MN-major (stride(-2) == 1), got strides ",
                  ops::strides_string(t));
    const std::int64_t row_stride = mn_major ? t.stride(1) : t.stride(0);
    const std::int64_t rows = mn_major ? t.size(1) : t.size(0);
    TESSERA_CHECK((row_stride * 2) % 16 == 0 || rows <= 1, kOp, ": argument '", name,
                  "': expected a row stride of a multiple of 16 bytes (TMA; K % 8 == 0 for K-major, M or N % 8 == 0 "
                  "for MN-major), got ", row_stride * 2, " bytes (strides ", ops::strides_string(t), ")");
    TESSERA_CHECK(reinterpret_cast<std::uintptr_t>(t.data) % 16 == 0, kOp, ": argument '", name,
                  "': expected a 16-byte aligned data pointer (TMA), got ", t.data);
    return mn_major;
}

// The tensor map of an operand [rows, K] whose stage box covers block_rows rows and 64 K elements.
CUtensorMap operand_map(const TensorRef& t, bool mn_major, std::int64_t rows, std::int64_t k, int block_rows) {
    using runtime::TmaSwizzle;
    if (mn_major)  // [K][rows] row-major: boxes of 64 rows-elements by 64 K rows
        return runtime::encode_tma_2d(ops::map_2d(t.data, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, rows, k, t.stride(1),
                                                  64, 64, TmaSwizzle::k128B));
    return runtime::encode_tma_2d(ops::map_2d(t.data, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, k, rows, t.stride(0), 64,
                                              block_rows, TmaSwizzle::k128B));
}

}  // namespace

void bf16_gemm_nt(const TensorRef& a, const TensorRef& b, const TensorRef& d, bool accumulate, Stream stream) {
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d}}) {
        ops::check_ndim({kOp, name}, *t, {2});
        ops::check_cuda({kOp, name}, *t);
    }
    ops::check_dtype({kOp, "a"}, a, {DType::kBFloat16});
    ops::check_dtype({kOp, "b"}, b, {DType::kBFloat16});
    ops::check_dtype({kOp, "d"}, d, {DType::kBFloat16, DType::kFloat32});
    ops::check_same_device({kOp, "b"}, b, a, "a");
    ops::check_same_device({kOp, "d"}, d, a, "a");
    const auto [m, n, k] = ops::check_nt_shapes(kOp, a, b, d);
    if (m == 0 || n == 0) return;
    TESSERA_CHECK(k > 0, kOp, ": argument 'a': expected K > 0 (an empty product is the caller's: D = C or 0), got "
                  "K = 0");
    const bool out_f32 = d.dtype == DType::kFloat32;
    const bool mn_a = mn_major_operand("a", a), mn_b = mn_major_operand("b", b);
    ops::check_tma_n({kOp, "d"}, n, out_f32 ? 4 : 8);
    TESSERA_CHECK(d.stride(1) == 1 && (d.stride(0) * dtype_size(d.dtype)) % 16 == 0, kOp,
                  ": argument 'd': expected row-major with a row stride of a multiple of 16 bytes, got strides ",
                  ops::strides_string(d));
    TESSERA_CHECK(reinterpret_cast<std::uintptr_t>(d.data) % 16 == 0, kOp,
                  ": argument 'd': expected a 16-byte aligned data pointer (TMA), got ", d.data);

    const int device = a.device.index;
    const Bf16PlanKey key{m, n, k, mn_a, mn_b, out_f32, accumulate, ops::plan_num_sms(device), device,
                          options().block_n_multiple};
    const Bf16Plan& plan = bf16_plan(key);
    const heuristics::Bf16GemmConfig& c = plan.config;
    Bf16GemmParams params{};
    params.tensor_map_a = operand_map(a, mn_a, m, k, c.block_m);
    params.tensor_map_b = operand_map(b, mn_b, n, k, c.block_n);
    params.tensor_map_d = ops::d_store_map(d, c.store_box_n, c.swizzle_d_bytes);
    ops::set_gemm_dims(params, m, n, k, d);
    jit::LaunchConfig launch;
    launch.grid_x = static_cast<unsigned>(c.num_sms);
    launch.block_x = static_cast<unsigned>(c.num_threads());
    launch.smem_bytes = static_cast<unsigned>(c.smem_bytes);
    launch.stream = static_cast<CUstream>(stream);
    launch.device = device;
    plan.kernel->launch_bytes(launch, &params, sizeof(params));
}

std::string bf16_gemm_config(std::int64_t m, std::int64_t n, std::int64_t k, bool mn_major_a, bool mn_major_b,
                             bool out_f32, bool accumulate, int device) {
    TESSERA_CHECK(m > 0 && n > 0 && k > 0, "bf16_gemm_config: expected positive m, n, k, got ", m, ", ", n, ", ",
                  k);
    const Bf16PlanKey key{m, n, k, mn_major_a, mn_major_b, out_f32, accumulate, ops::plan_num_sms(device), device,
                          options().block_n_multiple};
    return bf16_plan(key).config.describe();
}

}  // namespace tessera
