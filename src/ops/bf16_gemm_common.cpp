#include "ops/plan_cache.hpp"
#include "ops/bf16_gemm_common.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "ops/validate.hpp"
#include "runtime/device.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"

namespace tessera::ops {
namespace {

struct Bf16PlanKeyHash {
    std::size_t operator()(const Bf16PlanKey& k) const noexcept {
        return hash_fields({k.m, k.n, k.k, k.mn_major_a, k.mn_major_b, k.out_f32, k.accumulate,
                            static_cast<int>(k.kind), k.num_groups, k.block_m, k.num_sms, k.device, k.block_n_multiple,
                            static_cast<int>(k.family)});
    }
};

}  // namespace

jit::KernelSpec make_bf16_gemm_spec(const heuristics::Bf16GemmConfig& c, const heuristics::Bf16GemmProblem& p,
                                    GemmKind kind, jit::Family family) {
    jit::KernelSpec spec(kind == GemmKind::kBatchSum ? jit::Family::kBf16BatchSumGemm : family);
    spec.set("kBlockM", c.block_m)
        .set("kBlockN", c.block_n)
        .set("kNumStages", c.num_stages)
        .set("kNumSMs", c.num_sms)
        .set("kShapeM", 0)
        .set("kShapeN", p.n)
        .set("kShapeK", kind == GemmKind::kKGrouped ? 0 : p.k)  // k-grouped: K per group, from the parameters
        .set("kGroupSize", c.group_size)
        .set("kGemmKind", static_cast<int>(kind))
        .set("kNumGroups", kind == GemmKind::kKGrouped ? p.num_groups : 1)
        .set("kMajorA", p.mn_major_a ? 1 : 0)
        .set("kMajorB", p.mn_major_b ? 1 : 0)
        .set("kOutF32", p.out_f32 ? 1 : 0)
        .set("kAccumulate", p.accumulate ? 1 : 0);
    if (c.split_k > 1) spec.set("kSplitK", c.split_k);  // (absent: 1, so unsplit kernels keep their keys)
    if (c.a_rows > 0 && c.a_rows < c.block_m) spec.set("kLoadRowsA", c.a_rows);  // (likewise)
    return spec;
}

heuristics::Bf16GemmProblem bf16_planner_problem(const Bf16PlanKey& key, int max_smem_bytes) {
    heuristics::Bf16GemmProblem p{key.m, key.n, key.k, key.mn_major_a, key.mn_major_b, key.out_f32, key.accumulate};
    p.num_sms = key.num_sms;
    p.max_smem_bytes = max_smem_bytes;
    p.num_groups = key.num_groups;
    p.block_m = key.block_m;
    p.block_n_multiple = key.block_n_multiple;
    p.dense = key.kind == GemmKind::kDense;
    return p;
}

std::int64_t bf16_grouped_plan_rows(GemmKind kind, std::int64_t m, std::int64_t groups, std::int64_t expected_m) {
    if (kind == GemmKind::kPsum) return std::max<std::int64_t>(1, expected_m > 0 ? expected_m : m / groups);
    if (kind == GemmKind::kMasked) return std::min(expected_m > 0 ? expected_m : m, m);
    return m;
}

const Bf16Plan& bf16_plan(const Bf16PlanKey& key, const char* op) {
    static PlanCache<Bf16PlanKey, Bf16Plan, Bf16PlanKeyHash> plans;
    return plans.get(key, [&] {
        heuristics::Bf16GemmProblem p = bf16_planner_problem(key, runtime::device_info(key.device).max_smem_per_block);
        Bf16Plan plan;
        runtime::make_current(key.device);  // loading the module needs the device's context current
        for (int attempt = 0;; ++attempt) {
            plan.config = key.kind == GemmKind::kBatchSum ? heuristics::choose_bf16_batch_sum_config(p)
                                                          : heuristics::choose_bf16_gemm_config(p);
            plan.kernel = &jit::jit().get(make_bf16_gemm_spec(plan.config, p, key.kind, key.family));
            const int split = plan.config.split_k;
            if (split == 1 || attempt > 0) break;
            // A split-K plan assumes all its clusters are resident at once; where the driver says fewer fit, plan
            // again with the driver's capacity (correct either way: surplus clusters would wait for a free GPC).
            const int resident = split * plan.kernel->max_active_clusters(bf16_launch_config(plan.config, nullptr, key.device));
            if (resident >= plan.config.num_sms) break;
            p.split_capacity[split == 2 ? 0 : split == 4 ? 1 : 2] = resident > 0 ? resident : -1;
        }
        if (options().print_configs)
            std::fprintf(stderr, "[tessera] %s m=%lld n=%lld k=%lld groups=%d: %s\n", op, static_cast<long long>(key.m),
                         static_cast<long long>(key.n), static_cast<long long>(key.k), key.num_groups,
                         plan.config.describe().c_str());
        return plan;
    });
}

bool mn_major_operand(const char* op, const char* name, const TensorRef& t, bool through_tma) {
    const bool k_major = t.stride(-1) == 1 || t.size(-1) <= 1;
    const bool mn_major = !k_major && (t.stride(-2) == 1 || t.size(-2) <= 1);
    TESSERA_CHECK(k_major || mn_major, op, ": argument '", name,
                  "': expected K-major (stride(-1) == 1) or MN-major (stride(-2) == 1), got strides ",
                  strides_string(t));
    if (!through_tma) return mn_major;
    const std::int64_t row_stride = mn_major ? t.stride(-1) : t.stride(-2);
    const std::int64_t rows = mn_major ? t.size(-1) : t.size(-2);
    TESSERA_CHECK((row_stride * 2) % 16 == 0 || rows <= 1, op, ": argument '", name,
                  "': expected a row stride of a multiple of 16 bytes (TMA; K % 8 == 0 for K-major, M or N % 8 == 0 "
                  "for MN-major), got ", row_stride * 2, " bytes (strides ", strides_string(t), ")");
    TESSERA_CHECK(reinterpret_cast<std::uintptr_t>(t.data) % 16 == 0, op, ": argument '", name,
                  "': expected a 16-byte aligned data pointer (TMA), got ", t.data);
    return mn_major;
}

CUtensorMap bf16_operand_map(const void* data, bool mn_major, std::int64_t rows, std::int64_t k,
                             std::int64_t row_stride, int block_rows) {
    using runtime::TmaSwizzle;
    if (mn_major)  // [K][rows] row-major: boxes of 64 row-elements by 64 K rows
        return runtime::encode_tma_2d(
            map_2d(data, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, rows, k, row_stride, 64, 64, TmaSwizzle::k128B));
    return runtime::encode_tma_2d(
        map_2d(data, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, k, rows, row_stride, 64, block_rows, TmaSwizzle::k128B));
}

void check_bf16_output(const char* op, const TensorRef& d, std::int64_t n) {
    check_tma_n({op, "d"}, n, d.dtype == DType::kFloat32 ? 4 : 8);
    TESSERA_CHECK(d.stride(-1) == 1 && (d.stride(-2) * dtype_size(d.dtype)) % 16 == 0, op,
                  ": argument 'd': expected row-major with a row stride of a multiple of 16 bytes, got strides ",
                  strides_string(d));
    TESSERA_CHECK(reinterpret_cast<std::uintptr_t>(d.data) % 16 == 0, op,
                  ": argument 'd': expected a 16-byte aligned data pointer (TMA), got ", d.data);
}

jit::LaunchConfig bf16_launch_config(const heuristics::Bf16GemmConfig& c, Stream stream, int device) {
    jit::LaunchConfig launch;
    launch.grid_x = static_cast<unsigned>(c.num_sms);
    launch.block_x = static_cast<unsigned>(c.num_threads());
    launch.smem_bytes = static_cast<unsigned>(c.smem_bytes);
    launch.cluster_x = static_cast<unsigned>(c.split_k);
    launch.stream = static_cast<CUstream>(stream);
    launch.device = device;
    return launch;
}

void launch_bf16_gemm(const Bf16Plan& plan, const void* params, std::size_t bytes, Stream stream, int device) {
    plan.kernel->launch_bytes(bf16_launch_config(plan.config, stream, device), params, bytes);
}

}  // namespace tessera::ops
