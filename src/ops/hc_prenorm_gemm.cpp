// tf32_hc_prenorm_gemm: validate -> plan (memoized per problem) -> tensor maps -> launch.
#include "ops/plan_cache.hpp"
#include "ops/hc_prenorm_gemm.hpp"

#include <cstddef>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "jit/jit.hpp"
#include "ops/gemm_common.hpp"
#include "ops/validate.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "tessera/error.hpp"
#include "tessera/hc_prenorm_gemm.hpp"
#include "tessera/options.hpp"

namespace tessera {
namespace ops {

jit::KernelSpec make_hc_prenorm_spec(const heuristics::HcPrenormConfig& c) {
    jit::KernelSpec spec(jit::Family::kHcPrenormGemm);
    spec.set("kShapeN", c.block_n)
        .set("kNumStages", c.num_stages)
        .set("kReduce", c.reduce ? 1 : 0)
        .set("kNumAccumulators", c.num_accumulators);
    if (c.cluster > 1) spec.set("kClusterSize", c.cluster);  // (absent: 1, so the other kernels keep their keys)
    return spec;
}

}  // namespace ops

namespace {

constexpr const char* kOp = "tf32_hc_prenorm_gemm";

// Host mirror of HcPrenormGemmKernel::Params (kernels/tessera/sm90/hc_prenorm_gemm.cuh).
struct alignas(64) HcPrenormParams {
    ops::TmaBytes tensor_map_a, tensor_map_b;
    float* d;
    float* sqr_sum;
    float* workspace;
    std::uint32_t* counters;
    std::uint64_t d_split_stride;
    std::uint32_t m, num_k_blocks, num_splits, ld_d, sqr_split_stride;
};
static_assert(sizeof(HcPrenormParams) == 320, "must match the kernel's Params");
static_assert(offsetof(HcPrenormParams, d_split_stride) == 288 && offsetof(HcPrenormParams, sqr_split_stride) == 312,
              "must match the kernel's Params");

struct PlanKey {
    std::int64_t m, n, k;
    int num_splits, num_sms, device;
    bool operator==(const PlanKey&) const = default;
};
struct PlanKeyHash {
    std::size_t operator()(const PlanKey& k) const noexcept {
        return ops::hash_fields({k.m, k.n, k.k, k.num_splits, k.num_sms, k.device});
    }
};
struct Plan {
    heuristics::HcPrenormConfig config;
    const jit::Kernel* kernel = nullptr;
};

jit::LaunchConfig launch_config(const heuristics::HcPrenormConfig& c, Stream stream, int device) {
    jit::LaunchConfig launch;
    launch.grid_x = static_cast<unsigned>(c.grid());
    launch.block_x = static_cast<unsigned>(heuristics::HcPrenormConfig::num_threads());
    launch.smem_bytes = static_cast<unsigned>(c.smem_bytes);
    launch.cluster_x = static_cast<unsigned>(c.cluster);
    launch.stream = static_cast<CUstream>(stream);
    launch.device = device;
    return launch;
}

const Plan& plan_for(const PlanKey& key, const char* op) {
    static ops::PlanCache<PlanKey, Plan, PlanKeyHash> plans;
    return plans.get(key, [&] {
        heuristics::HcPrenormProblem p{key.m, key.n, key.k, key.num_splits, key.num_sms,
                                       runtime::device_info(key.device).max_smem_per_block};
        Plan plan;
        runtime::make_current(key.device);  // loading the module needs the device's context current
        while (true) {
            plan.config = heuristics::choose_hc_prenorm_config(p);
            plan.kernel = &jit::jit().get(ops::make_hc_prenorm_spec(plan.config));
            const int cluster = plan.config.cluster;
            if (cluster == 1) break;
            // A cluster plan counts on every m-block's cluster running at once: where the device keeps fewer
            // resident (clusters of 16 need 16 free SMs of one GPC), plan again with narrower clusters.
            int resident = 0;
            try {
                resident = plan.kernel->max_active_clusters(launch_config(plan.config, nullptr, key.device));
            } catch (const Error&) {
                // A driver that refuses a non-portable width (above 8): narrower ones. Portable widths always have an
                // answer, so an error there is the device's and goes to the caller.
                if (cluster <= 8) throw;
                resident = 0;
            }
            if (resident >= plan.config.num_m_blocks) break;
            p.max_cluster = cluster / 2;
        }
        if (options().print_configs)
            std::fprintf(stderr, "[tessera] %s m=%lld n=%lld k=%lld num_splits=%d: %s\n", op,
                         static_cast<long long>(key.m), static_cast<long long>(key.n), static_cast<long long>(key.k),
                         key.num_splits, plan.config.describe().c_str());
        return plan;
    });
}

// The workspace of the summed splits that are not one cluster: partial tiles and one arrival counter per m block, in
// slots of the largest plan (the planner keeps m blocks x splits <= the SMs). Each stream that uses it gets a slot of
// its own, so launches on different streams never share one (launches on one stream are ordered). A device's slots
// are made at its first such call, outside any graph capture: allocated, their counters zeroed on the calling stream,
// which is then synchronized once; every launch leaves its counters at zero again. While none can be had (the first
// call is being captured, or more streams than slots), the call runs unsplit (one CTA per m block): slower, the same
// product up to FP32 summation order. A captured graph keeps its capture stream's slot: its replays must not overlap
// each other or eager calls on that stream. Cluster plans need none of this.
constexpr int kWorkspaceSlots = 8;
struct Workspace {
    float* partials = nullptr;
    std::uint32_t* counters = nullptr;
};
bool capturing(Stream stream) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    // A query that fails (the legacy stream while another thread captures) counts as capturing.
    return runtime::driver().cuStreamIsCapturing(static_cast<CUstream>(stream), &status) != CUDA_SUCCESS ||
           status != CU_STREAM_CAPTURE_STATUS_NONE;
}
bool workspace_for(int device, Stream stream, Workspace& out) {
    struct Pool {
        CUdeviceptr base = 0;
        std::size_t slot_bytes = 0, counters_offset = 0;
        std::map<Stream, int> slot_of;
    };
    static std::mutex mutex;
    static std::map<int, Pool> pools;
    std::lock_guard lock(mutex);
    Pool& pool = pools[device];
    if (pool.base == 0) {
        if (capturing(stream)) return false;
        const std::size_t num_sms = static_cast<std::size_t>(runtime::device_info(device).num_sms);
        pool.counters_offset = num_sms * (heuristics::kHcBlockM * 32 + heuristics::kHcBlockM) * sizeof(float);
        // Slots start 256-byte aligned: the partials are written as float4.
        pool.slot_bytes = (pool.counters_offset + num_sms * sizeof(std::uint32_t) + 255) / 256 * 256;
        runtime::make_current(device);
        CUdeviceptr base = 0;
        TESSERA_CU_CHECK(runtime::driver().cuMemAlloc(&base, kWorkspaceSlots * pool.slot_bytes));
        // Zero everything (the counters are what matters), then wait, so any stream may use any slot afterwards.
        TESSERA_CU_CHECK(runtime::driver().cuMemsetD32Async(base, 0, kWorkspaceSlots * pool.slot_bytes / 4,
                                                           static_cast<CUstream>(stream)));
        TESSERA_CU_CHECK(runtime::driver().cuStreamSynchronize(static_cast<CUstream>(stream)));
        pool.base = base;
    }
    auto it = pool.slot_of.find(stream);
    if (it == pool.slot_of.end()) {
        if (pool.slot_of.size() == kWorkspaceSlots) return false;
        it = pool.slot_of.emplace(stream, static_cast<int>(pool.slot_of.size())).first;
    }
    const CUdeviceptr slot = pool.base + it->second * pool.slot_bytes;
    out.partials = reinterpret_cast<float*>(slot);
    out.counters = reinterpret_cast<std::uint32_t*>(slot + pool.counters_offset);
    return true;
}

bool aligned(const void* p, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

// a [M, K] BF16 or b [N, K] FP32: K-major with TMA rows (16-byte row stride and base).
void check_k_major(const char* name, const TensorRef& t) {
    TESSERA_CHECK(t.stride(-1) == 1, kOp, ": argument '", name, "': expected K-major (stride(-1) == 1), got strides ",
                  ops::strides_string(t));
    TESSERA_CHECK((t.stride(0) * dtype_size(t.dtype)) % 16 == 0 || t.size(0) <= 1, kOp, ": argument '", name,
                  "': expected a row stride of a multiple of 16 bytes (TMA), got strides ", ops::strides_string(t));
    TESSERA_CHECK(aligned(t.data, 16), kOp, ": argument '", name, "': expected a 16-byte aligned data pointer (TMA), "
                  "got ", t.data);
}

}  // namespace

void tf32_hc_prenorm_gemm(const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef& sqr_sum,
                          int num_splits, Stream stream) {
    TESSERA_CHECK(num_splits >= 0, kOp, ": argument 'num_splits': expected 0 (None) or >= 1, got ", num_splits);
    const bool split = num_splits > 0;
    ops::check_ndim({kOp, "a"}, a, {2});
    ops::check_ndim({kOp, "b"}, b, {2});
    ops::check_ndim({kOp, "d"}, d, {split ? 3 : 2});
    ops::check_ndim({kOp, "sqr_sum"}, sqr_sum, {split ? 2 : 1});
    ops::check_dtype({kOp, "a"}, a, {DType::kBFloat16});
    ops::check_dtype({kOp, "b"}, b, {DType::kFloat32});
    ops::check_dtype({kOp, "d"}, d, {DType::kFloat32});
    ops::check_dtype({kOp, "sqr_sum"}, sqr_sum, {DType::kFloat32});
    const std::int64_t m = a.size(0), k = a.size(1), n = b.size(0);
    TESSERA_CHECK(b.size(1) == k, kOp, ": argument 'b': expected [N, K] with K = ", k, " (from a), got shape ",
                  ops::shape_string(b));
    const int d0 = split ? 1 : 0;
    TESSERA_CHECK((!split || d.size(0) == num_splits) && d.size(d0) == m && d.size(d0 + 1) == n, kOp,
                  ": argument 'd': expected shape ", split ? detail::str_cat("[", num_splits, ", ") : std::string("["),
                  m, ", ", n, "], got ", ops::shape_string(d));
    TESSERA_CHECK((!split || sqr_sum.size(0) == num_splits) && sqr_sum.size(d0) == m, kOp,
                  ": argument 'sqr_sum': expected shape ",
                  split ? detail::str_cat("[", num_splits, ", ") : std::string("["), m, "], got ",
                  ops::shape_string(sqr_sum));
    TESSERA_CHECK(n > 0, kOp, ": argument 'b': expected N > 0, got shape ", ops::shape_string(b));
    TESSERA_CHECK(k > 0, kOp, ": argument 'a': expected K > 0, got shape ", ops::shape_string(a));
    // An empty problem has nothing to lay out (and empty tensors carry arbitrary strides).
    if (m == 0) return;
    check_k_major("a", a);
    check_k_major("b", b);
    TESSERA_CHECK(d.stride(-1) == 1, kOp, ": argument 'd': expected row-major (stride(-1) == 1), got strides ",
                  ops::strides_string(d));
    ops::check_contiguous({kOp, "sqr_sum"}, sqr_sum);

    TESSERA_CHECK(n <= 32 && n % 8 == 0, kOp, ": argument 'b': expected N <= 32 and a multiple of 8 (SM90), got N = ",
                  n);
    TESSERA_CHECK(k % heuristics::kHcBlockK == 0, kOp,
                  ": argument 'a': expected K a multiple of 64 (SM90), got K = ", k);
    // Two-float stores: rows and slices of d 8-byte aligned; the kernel takes the row stride as 32 bits.
    TESSERA_CHECK(d.stride(-2) % 2 == 0 && d.stride(-2) <= std::numeric_limits<std::uint32_t>::max() &&
                      (!split || d.stride(0) % 2 == 0) && aligned(d.data, 8),
                  kOp,
                  ": argument 'd': expected rows and slices starting on 8-byte boundaries (even strides, 8-byte "
                  "aligned data) and a row stride below 2^32, got strides ", ops::strides_string(d), " at ", d.data);
    // Both are int32 TMA coordinates in the kernel (row m-block * 64, column k-block * 64).
    TESSERA_CHECK(m <= std::numeric_limits<std::int32_t>::max() && k <= std::numeric_limits<std::int32_t>::max(),
                  kOp, ": argument 'a': expected M and K below 2^31, got shape ", ops::shape_string(a));
    const std::int64_t grid = ops::ceil_div(m, heuristics::kHcBlockM) * std::max(num_splits, 1);
    TESSERA_CHECK(grid <= std::numeric_limits<std::int32_t>::max(), kOp,
                  ": argument 'num_splits': expected ceil(M / 64) * num_splits below 2^31, got ", grid);
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d},
                           {"sqr_sum", &sqr_sum}}) {
        ops::check_cuda({kOp, name}, *t);
        if (t != &a) ops::check_same_device({kOp, name}, *t, a, "a");
    }

    const int device = a.device.index;
    const int num_sms = ops::plan_num_sms(device);
    const Plan* plan = &plan_for({m, n, k, num_splits, num_sms, device}, kOp);
    Workspace workspace;
    if (plan->config.uses_workspace() && !workspace_for(device, stream, workspace))
        plan = &plan_for({m, n, k, 1, num_sms, device}, kOp);  // unsplit: one split's D is the whole product
    const heuristics::HcPrenormConfig& cfg = plan->config;
    using runtime::TmaSwizzle;
    HcPrenormParams params{};
    // A single row's stride is never used and check_k_major accepts any: map it as packed (K % 64 == 0 keeps the
    // 16-byte stride the tensor-map encoder requires).
    params.tensor_map_a = runtime::encode_tma_2d(
        ops::map_2d(a.data, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, k, m, m > 1 ? a.stride(0) : k, heuristics::kHcBlockK,
                    heuristics::kHcBlockM, TmaSwizzle::k128B));
    // B as TF32, DeepGEMM's choice for the same operand: 32 FP32 per 128-byte swizzle row, all N rows per box.
    params.tensor_map_b = runtime::encode_tma_2d(ops::map_2d(b.data, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, 4, k, n,
                                                             b.stride(0), 32, static_cast<int>(n), TmaSwizzle::k128B));
    params.d = static_cast<float*>(d.data);
    params.sqr_sum = static_cast<float*>(sqr_sum.data);
    params.d_split_stride = split ? static_cast<std::uint64_t>(d.stride(0)) : 0;
    params.m = static_cast<std::uint32_t>(m);
    params.num_k_blocks = static_cast<std::uint32_t>(k / heuristics::kHcBlockK);
    params.num_splits = static_cast<std::uint32_t>(cfg.num_splits);
    params.ld_d = static_cast<std::uint32_t>(d.stride(-2));
    params.sqr_split_stride = split ? static_cast<std::uint32_t>(m) : 0;
    params.workspace = workspace.partials;
    params.counters = workspace.counters;
    plan->kernel->launch(launch_config(cfg, stream, device), params);
}

std::string tf32_hc_prenorm_gemm_config(std::int64_t m, std::int64_t n, std::int64_t k, int num_splits, int device) {
    TESSERA_CHECK(m > 0 && n > 0 && k > 0 && num_splits >= 0, "tf32_hc_prenorm_gemm_config: expected positive m, n, "
                  "k and num_splits >= 0, got ", m, ", ", n, ", ", k, ", ", num_splits);
    return plan_for({m, n, k, num_splits, ops::plan_num_sms(device), device}, "tf32_hc_prenorm_gemm_config")
        .config.describe();
}

}  // namespace tessera
