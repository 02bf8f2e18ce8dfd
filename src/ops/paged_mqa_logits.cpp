// Paged MQA logits: validate -> plan (memoized per shape) -> tensor maps -> launch. The schedule kernel and the
// logits kernel live in kernels/tessera/sm90/paged_mqa_logits.cuh.
#include "tessera/paged_mqa_logits.hpp"

#include <cstddef>
#include <cstdio>
#include <limits>
#include <utility>
#include <mutex>
#include <unordered_map>

#include "jit/jit.hpp"
#include "ops/plan_cache.hpp"
#include "ops/gemm_common.hpp"
#include "ops/paged_mqa_logits_specs.hpp"
#include "ops/validate.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"

namespace tessera {
namespace ops {

constexpr int kPagedHeadDim = 128;
// Three pages in the math at once, each warpgroup's wgmma under the others' head reductions: with n = next_n * H = 128
// a warpgroup's page (wgmma, then 64 accumulators reduced) takes longer than two pages' worth of HBM time, and four
// warpgroups' 104 registers spill the 64 accumulators and 32 weights.
constexpr int kPagedMathWarpgroups = 3;
constexpr int kPagedQStages = 3;         // sequences whose queries are loaded ahead of the pages that use them
constexpr int kPagedMaxStages = 24;      // ~200 KB of pages in flight per SM, several times the HBM latency's worth

int paged_mqa_logits_smem_bytes(int next_n, int num_heads, int num_stages, int num_q_stages) {
    const int n = next_n * num_heads;
    const int raw = num_stages * (64 * kPagedHeadDim + 64 * 4 + 32 + 16) +  // page, scales, task record, barriers
                    num_q_stages * (n * kPagedHeadDim + n * 4 + 16);         // queries, weights, barriers
    return static_cast<int>(align_up(raw, 1024));
}

jit::KernelSpec paged_mqa_logits_spec(int next_n, int num_heads, bool out_bf16, bool clean_logits, int max_smem_bytes) {
    int stages = kPagedMaxStages;
    while (stages > kPagedMathWarpgroups &&
           paged_mqa_logits_smem_bytes(next_n, num_heads, stages, kPagedQStages) > max_smem_bytes)
        stages -= kPagedMathWarpgroups;
    TESSERA_ASSERT(paged_mqa_logits_smem_bytes(next_n, num_heads, stages, kPagedQStages) <= max_smem_bytes);
    jit::KernelSpec spec(jit::Family::kPagedMqaLogits);
    spec.set("kNextN", next_n)
        .set("kNumHeads", num_heads)
        .set("kHeadDim", kPagedHeadDim)
        .set("kOutBf16", out_bf16 ? 1 : 0)
        .set("kClean", clean_logits ? 1 : 0)
        .set("kNumStages", stages)
        .set("kNumQStages", kPagedQStages)
        .set("kNumMathWarpgroups", kPagedMathWarpgroups);
    return spec;
}

int paged_mqa_logits_threads(const jit::KernelSpec& spec) {
    return 128 * (static_cast<int>(spec.get("kNumMathWarpgroups")) + 1);
}

const jit::KernelSpec& paged_mqa_metadata_spec() {
    static const jit::KernelSpec spec =
        jit::KernelSpec(jit::Family::kPagedMqaMetadata).set("kNumThreads", kPagedMqaMetadataThreads);
    return spec;
}

}  // namespace ops

namespace {

using ops::Arg;

constexpr const char* kMetadataOp = "get_paged_mqa_logits_metadata";
constexpr const char* kOp = "fp8_paged_mqa_logits";

// Host mirrors of the kernels' Params (Kernel::launch checks their sizes against the compiled entries).
struct MetadataParams {
    const std::int32_t* context_lens;
    std::int32_t* schedule;
    std::uint32_t batch, next_n, num_sms;
};
struct alignas(64) LogitsParams {
    ops::TmaBytes kv_map, sf_map, q_map, w_map;
    const std::int32_t* context_lens;
    const std::int32_t* block_table;
    const std::int32_t* schedule;
    void* logits;
    std::uint64_t block_table_ld, logits_ld;
    std::uint32_t batch, max_blocks, max_context_len;
};
static_assert(sizeof(LogitsParams) == 576, "must match the kernel's Params");
static_assert(offsetof(LogitsParams, batch) == 560, "must match the kernel's Params");

struct PlanKey {
    int next_n, num_heads;
    bool out_bf16, clean;
    int device;
    bool operator==(const PlanKey&) const = default;
};
struct PlanKeyHash {
    std::size_t operator()(const PlanKey& k) const noexcept {
        return ops::hash_fields({k.next_n, k.num_heads, k.out_bf16, k.clean, k.device});
    }
};
struct Plan {
    const jit::Kernel* kernel = nullptr;
    unsigned threads = 0, smem_bytes = 0;
};

const Plan& plan_for(const PlanKey& key) {
    static ops::PlanCache<PlanKey, Plan, PlanKeyHash> plans;
    return plans.get(key, [&] {
        const jit::KernelSpec spec = ops::paged_mqa_logits_spec(key.next_n, key.num_heads, key.out_bf16, key.clean,
                                                                runtime::device_info(key.device).max_smem_per_block);
        Plan plan;
        plan.threads = static_cast<unsigned>(ops::paged_mqa_logits_threads(spec));
        plan.smem_bytes = static_cast<unsigned>(
            ops::paged_mqa_logits_smem_bytes(key.next_n, key.num_heads, static_cast<int>(spec.get("kNumStages")),
                                             static_cast<int>(spec.get("kNumQStages"))));
        runtime::make_current(key.device);  // loading the module needs the device's context current
        plan.kernel = &jit::jit().get(spec);
        if (options().print_configs) std::fprintf(stderr, "[tessera] %s: %s\n", kOp, spec.describe().c_str());
        return plan;
    });
}

// The cache pages' tokens: a 3-D uint8 map (D, 64 tokens, blocks), one page per box, 128-byte swizzle (what the
// wgmma descriptors read).
CUtensorMap kv_page_map(const void* base, std::uint64_t num_blocks, std::uint64_t page_stride) {
    return runtime::encode_tma_3d(ops::map_2d(base, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, ops::kPagedHeadDim, 64,
                                              ops::kPagedHeadDim, ops::kPagedHeadDim, 64, runtime::TmaSwizzle::k128B),
                                  num_blocks, page_stride);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

void check_context_lens(const char* op, const TensorRef& context_lens) {
    const Arg arg{op, "context_lens"};
    ops::check_dtype(arg, context_lens, {DType::kInt32});
    TESSERA_CHECK(context_lens.ndim == 2, op, ": argument 'context_lens': expected 2 dimensions [batch, next_n] "
                  "(context_lens.dim() == 2), got shape ", ops::shape_string(context_lens));
    ops::check_contiguous(arg, context_lens);
    TESSERA_CHECK(context_lens.size(1) >= 1, op, ": argument 'context_lens': expected next_n >= 1 columns, got shape ",
                  ops::shape_string(context_lens));
}

}  // namespace

std::int64_t paged_mqa_logits_row_stride(std::int64_t max_context_len, DType logits_dtype) {
    TESSERA_CHECK(logits_dtype == DType::kFloat32 || logits_dtype == DType::kBFloat16,
                  "paged_mqa_logits_row_stride: argument 'logits_dtype': expected float32 or bfloat16, got ",
                  dtype_name(logits_dtype));
    TESSERA_CHECK(max_context_len >= 0, "paged_mqa_logits_row_stride: argument 'max_context_len': expected >= 0, got ",
                  max_context_len);
    return ops::align_up(ops::align_up(max_context_len, 256), 1024 / dtype_size(logits_dtype));
}

void get_paged_mqa_logits_metadata(const TensorRef& context_lens, int block_kv, int num_sms, const TensorRef& schedule,
                                   Stream stream) {
    check_context_lens(kMetadataOp, context_lens);
    if (block_kv == 32)
        throw Unsupported(detail::str_cat(kMetadataOp, ": argument 'block_kv': 32 is SM100-only; SM90 takes 64"));
    TESSERA_CHECK(block_kv == 64, kMetadataOp, ": argument 'block_kv': expected 64, got ", block_kv);
    TESSERA_CHECK(num_sms >= 1, kMetadataOp, ": argument 'num_sms': expected >= 1, got ", num_sms);
    const Arg out{kMetadataOp, "schedule"};
    ops::check_dtype(out, schedule, {DType::kInt32});
    TESSERA_CHECK(schedule.ndim == 2 && schedule.size(0) == num_sms + 1 && schedule.size(1) == 2, kMetadataOp,
                  ": argument 'schedule': expected shape [", num_sms + 1, ", 2], got ", ops::shape_string(schedule));
    ops::check_contiguous(out, schedule);
    ops::check_cuda({kMetadataOp, "context_lens"}, context_lens);
    ops::check_same_device(out, schedule, context_lens, "context_lens");
    const std::int64_t batch = context_lens.size(0);
    TESSERA_CHECK(batch < (1LL << 30), kMetadataOp, ": argument 'context_lens': expected fewer than 2^30 sequences, "
                  "got ", batch);
    MetadataParams params{static_cast<const std::int32_t*>(context_lens.data),
                          static_cast<std::int32_t*>(schedule.data), static_cast<std::uint32_t>(batch), static_cast<std::uint32_t>(context_lens.size(1)),
                          static_cast<std::uint32_t>(num_sms)};
    const int device = context_lens.device.index;
    runtime::make_current(device);
    jit::LaunchConfig c;
    c.block_x = ops::kPagedMqaMetadataThreads;
    c.stream = static_cast<CUstream>(stream);
    c.device = device;
    jit::jit().get(ops::paged_mqa_metadata_spec()).launch(c, params);
}

void fp8_paged_mqa_logits(const TensorRef& q, const TensorRef& kv_cache, const TensorRef& weights,
                          const TensorRef& context_lens, const TensorRef& block_table, const TensorRef& schedule,
                          std::int64_t max_context_len, bool clean_logits, const TensorRef& logits, Stream stream) {
    // Shapes and dtypes first (nothing here needs a device), then devices, then what the device decides.
    ops::check_dtype({kOp, "q"}, q, {DType::kFloat8E4M3});
    ops::check_ndim({kOp, "q"}, q, {4});
    const std::int64_t batch = q.size(0), next_n = q.size(1), heads = q.size(2), dim = q.size(3);
    if (next_n > 2)
        throw Unsupported(detail::str_cat(kOp, ": argument 'q': next_n = ", next_n, " needs SM100; SM90 takes 1 or 2"));
    TESSERA_CHECK(next_n >= 1, kOp, ": argument 'q': expected next_n (dim 1) >= 1, got shape ", ops::shape_string(q));
    if (heads != 32 && heads != 64)
        throw Unsupported(detail::str_cat(kOp, ": argument 'q': ", heads, " heads; SM90 takes 32 or 64"));
    if (dim != ops::kPagedHeadDim)
        throw Unsupported(detail::str_cat(kOp, ": argument 'q': head dim ", dim, "; this kernel takes 128"));
    ops::check_contiguous({kOp, "q"}, q);
    const std::int64_t rows = batch * next_n, n = next_n * heads;
    // The kernel addresses Q's rows (sequence b starts at row b * next_n * heads) with int32 TMA coordinates.
    TESSERA_CHECK(rows * heads <= std::numeric_limits<std::int32_t>::max(), kOp, ": argument 'q': expected batch * "
                  "next_n * heads below 2^31 (TMA row coordinates), got shape ", ops::shape_string(q));

    const Arg kv{kOp, "kv_cache"};
    ops::check_dtype(kv, kv_cache, {DType::kUInt8});
    ops::check_ndim(kv, kv_cache, {4});
    if (kv_cache.size(1) == 32)
        throw Unsupported(detail::str_cat(kOp, ": argument 'kv_cache': block_kv 32 is SM100-only; SM90 takes 64"));
    TESSERA_CHECK(kv_cache.size(1) == 64 && kv_cache.size(2) == 1 && kv_cache.size(3) == dim + 4, kOp,
                  ": argument 'kv_cache': expected shape [num_blocks, 64, 1, ", dim + 4, "], got ",
                  ops::shape_string(kv_cache));
    const std::int64_t page_stride = kv_cache.stride(0), num_blocks = kv_cache.size(0);
    TESSERA_CHECK(kv_cache.stride(3) == 1 && kv_cache.stride(1) == dim + 4, kOp, ": argument 'kv_cache': expected "
                  "strides (.., ", dim + 4, ", .., 1) (64 tokens then 64 scales per block), got ",
                  ops::strides_string(kv_cache));
    TESSERA_CHECK(num_blocks <= 1 || (page_stride % 16 == 0 && page_stride >= 64 * (dim + 4)), kOp,
                  ": argument 'kv_cache': expected a block stride (stride(0)) of at least ", 64 * (dim + 4),
                  " bytes and a multiple of 16 (the pages are loaded by TMA), got ", page_stride);

    ops::check_dtype({kOp, "weights"}, weights, {DType::kFloat32});
    TESSERA_CHECK(weights.ndim == 2 && weights.size(0) == rows && weights.size(1) == heads, kOp,
                  ": argument 'weights': expected shape [", rows, ", ", heads, "] (batch * next_n, heads), got ",
                  ops::shape_string(weights));
    ops::check_contiguous({kOp, "weights"}, weights);

    check_context_lens(kOp, context_lens);
    TESSERA_CHECK(context_lens.size(0) == batch && context_lens.size(1) == next_n, kOp,
                  ": argument 'context_lens': expected shape [", batch, ", ", next_n, "] (batch, next_n of q), got ",
                  ops::shape_string(context_lens));

    const Arg table{kOp, "block_table"};
    ops::check_dtype(table, block_table, {DType::kInt32});
    ops::check_ndim(table, block_table, {2});
    TESSERA_CHECK(block_table.size(0) == batch, kOp, ": argument 'block_table': expected ", batch, " rows, got shape ",
                  ops::shape_string(block_table));
    TESSERA_CHECK(block_table.stride(1) == 1 || block_table.size(1) <= 1, kOp,
                  ": argument 'block_table': expected stride(1) == 1, got strides ", ops::strides_string(block_table));

    const Arg sched{kOp, "schedule_meta"};
    ops::check_dtype(sched, schedule, {DType::kInt32});
    TESSERA_CHECK(schedule.ndim == 2 && schedule.size(1) == 2 && schedule.size(0) >= 2, kOp,
                  ": argument 'schedule_meta': expected shape [num_sms + 1, 2], got ", ops::shape_string(schedule));
    ops::check_contiguous(sched, schedule);

    TESSERA_CHECK(max_context_len >= 0 && max_context_len < (1LL << 31) - 64, kOp,
                  ": argument 'max_context_len': expected 0 <= max_context_len < 2^31 - 64, got ", max_context_len);
    const Arg out{kOp, "logits"};
    ops::check_dtype(out, logits, {DType::kFloat32, DType::kBFloat16});
    TESSERA_CHECK(logits.ndim == 2 && logits.size(0) == rows && logits.size(1) == max_context_len, kOp,
                  ": argument 'logits': expected shape [", rows, ", ", max_context_len, "], got ",
                  ops::shape_string(logits));
    const std::int64_t elem = dtype_size(logits.dtype);
    TESSERA_CHECK(max_context_len == 0 || rows == 0 ||
                      ((logits.stride(1) == 1 || max_context_len <= 1) &&
                       (rows <= 1 || (logits.stride(0) >= max_context_len && (logits.stride(0) * elem) % 16 == 0))),
                  kOp, ": argument 'logits': expected unit column stride and a row stride of at least max_context_len "
                  "elements, a multiple of 16 bytes, got strides ", ops::strides_string(logits));

    ops::check_cuda({kOp, "q"}, q);
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"kv_cache", &kv_cache}, {"weights", &weights},
                           {"context_lens", &context_lens}, {"block_table", &block_table},
                           {"schedule_meta", &schedule}, {"logits", &logits}})
        ops::check_same_device({kOp, name}, *t, q, "q");
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"q", &q}, {"kv_cache", &kv_cache},
                           {"weights", &weights}, {"logits", &logits}})
        TESSERA_CHECK(aligned16(t->data), kOp, ": argument '", name, "': expected a 16-byte aligned data pointer, got ",
                      t->data);
    if (rows == 0 || max_context_len == 0) return;

    const int device = q.device.index;
    const int num_sms = ops::plan_num_sms(device);
    TESSERA_CHECK(schedule.size(0) == num_sms + 1, kOp, ": argument 'schedule_meta': expected ", num_sms + 1,
                  " rows (get_num_sms() + 1; make it with get_paged_mqa_logits_metadata(..., num_sms=get_num_sms())), "
                  "got ", schedule.size(0));
    TESSERA_CHECK(num_blocks >= 1, kOp, ": argument 'kv_cache': expected at least one block, got shape ",
                  ops::shape_string(kv_cache));

    const PlanKey key{static_cast<int>(next_n), static_cast<int>(heads), logits.dtype == DType::kBFloat16, clean_logits,
                      device};
    const Plan& plan = plan_for(key);
    using runtime::TmaSwizzle;
    LogitsParams params{};
    params.kv_map = kv_page_map(kv_cache.data, static_cast<std::uint64_t>(num_blocks),
                                static_cast<std::uint64_t>(num_blocks > 1 ? page_stride : 64 * (dim + 4)));
    params.sf_map = runtime::encode_tma_2d(
        ops::map_2d(static_cast<const std::uint8_t*>(kv_cache.data) + 64 * dim, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, 64,
                    num_blocks, num_blocks > 1 ? page_stride / 4 : 64 * (dim + 4) / 4, 64, 1, TmaSwizzle::kNone));
    params.q_map = runtime::encode_tma_2d(
        ops::map_2d(q.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, dim, rows * heads, dim, static_cast<int>(dim),
                    static_cast<int>(n), TmaSwizzle::k128B));
    params.w_map = runtime::encode_tma_2d(ops::map_2d(weights.data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, n, batch, n,
                                                      static_cast<int>(n), 1, TmaSwizzle::kNone));
    params.context_lens = static_cast<const std::int32_t*>(context_lens.data);
    params.block_table = static_cast<const std::int32_t*>(block_table.data);
    params.schedule = static_cast<const std::int32_t*>(schedule.data);
    params.logits = logits.data;
    params.block_table_ld = static_cast<std::uint64_t>(block_table.stride(0));
    params.logits_ld = static_cast<std::uint64_t>(rows <= 1 ? max_context_len : logits.stride(0));
    params.batch = static_cast<std::uint32_t>(batch);
    params.max_blocks = static_cast<std::uint32_t>(block_table.size(1));
    params.max_context_len = static_cast<std::uint32_t>(max_context_len);

    jit::LaunchConfig c;
    c.grid_x = static_cast<unsigned>(num_sms);
    c.block_x = plan.threads;
    c.smem_bytes = plan.smem_bytes;
    c.stream = static_cast<CUstream>(stream);
    c.device = device;
    plan.kernel->launch(c, params);
}

}  // namespace tessera
