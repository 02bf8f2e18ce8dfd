// fp8_mqa_logits and clean_logits: validate -> plan (memoized per problem) -> tensor maps -> zero the work counter
// -> launch the main kernel, then the clean kernel (kernels/tessera/sm90/{mqa_logits,clean_logits}.cuh).
#include "tessera/mqa_logits.hpp"

#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "jit/jit.hpp"
#include "ops/plan_cache.hpp"
#include "ops/gemm_common.hpp"
#include "ops/mqa_logits_specs.hpp"
#include "ops/validate.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"

namespace tessera {
namespace {

constexpr const char* kOp = "fp8_mqa_logits";
constexpr const char* kCleanOp = "clean_logits";

// Host mirrors of the kernels' Params; Kernel::launch checks their sizes against the compiled entries.
struct alignas(64) MqaLogitsParams {
    ops::TmaBytes tensor_map_q, tensor_map_kv, tensor_map_kv_scales, tensor_map_weights;
    void* logits;
    std::int64_t logits_stride;
    const std::int32_t* ks;
    const std::int32_t* ke;
    std::uint32_t* unit_counter;
    std::uint32_t seq_len, seq_len_kv;
    std::uint32_t max_seqlen_k;
    std::uint32_t num_units;
    std::uint32_t num_kv_splits, split_len;
};
static_assert(sizeof(MqaLogitsParams) == 576, "must match MqaLogitsKernel::Params");
static_assert(offsetof(MqaLogitsParams, seq_len) == 552, "must match MqaLogitsKernel::Params");

struct CleanLogitsParams {
    void* logits;
    std::int64_t stride;
    const std::int32_t* ks;
    const std::int32_t* ke;
    std::uint32_t rows, cols;
    std::uint32_t rows_per_block;
    std::uint32_t pad;
};
static_assert(sizeof(CleanLogitsParams) == 48, "must match CleanLogitsKernel::Params");

struct PlanKey {
    std::int64_t seq_len, seq_len_kv;
    int num_heads, head_dim;
    bool bf16_logits;
    int num_sms, device;
    bool operator==(const PlanKey&) const = default;
};
struct PlanKeyHash {
    std::size_t operator()(const PlanKey& k) const noexcept {
        return ops::hash_fields({k.seq_len, k.seq_len_kv, k.num_heads, k.head_dim, k.bf16_logits, k.num_sms, k.device});
    }
};
struct Plan {
    heuristics::MqaLogitsConfig config;
    const jit::Kernel* kernel = nullptr;
};

const Plan& plan_for(const PlanKey& key, const char* op) {
    static ops::PlanCache<PlanKey, Plan, PlanKeyHash> plans;
    return plans.get(key, [&] {
        heuristics::MqaLogitsProblem p{key.seq_len, key.seq_len_kv, key.num_heads, key.head_dim, key.bf16_logits,
                                       key.num_sms, runtime::device_info(key.device).max_smem_per_block};
        Plan plan;
        plan.config = heuristics::choose_mqa_logits_config(p);
        runtime::make_current(key.device);  // loading the module needs the device's context current
        plan.kernel = &jit::jit().get(ops::mqa_logits_spec(plan.config));
        if (options().print_configs)
            std::fprintf(stderr, "[tessera] %s S=%lld S_kv=%lld: %s\n", op, static_cast<long long>(key.seq_len),
                         static_cast<long long>(key.seq_len_kv), plan.config.describe().c_str());
        return plan;
    });
}

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

void check_aligned(ops::Arg arg, const TensorRef& t) {
    TESSERA_CHECK(address(t.data) % 16 == 0 || t.numel() == 0, arg.op, ": argument '", arg.name,
                  "': expected a 16-byte aligned data pointer (TMA), got ", t.data);
}

// Q [S, H, D] viewed as [i = H/2][query][e = 2][D] (head 2i + e): the box (D, 2, queries, H/2) lands in shared memory
// as the kernel's B tile with its heads permuted (see mqa_logits.cuh). Strides are in bytes.
CUtensorMap q_map(const TensorRef& q, int group_q) {
    const std::int64_t s = q.size(0), h = q.size(1), d = q.size(2);
    const cuuint64_t dims[4] = {static_cast<cuuint64_t>(d), 2, static_cast<cuuint64_t>(s),
                                static_cast<cuuint64_t>(h / 2)};
    const std::int64_t token_stride = s > 1 ? q.stride(0) : h * d;  // one query: any stride is as good
    const cuuint64_t strides[3] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(token_stride),
                                   static_cast<cuuint64_t>(2 * d)};
    const cuuint32_t box[4] = {static_cast<cuuint32_t>(d), 2, static_cast<cuuint32_t>(group_q),
                               static_cast<cuuint32_t>(h / 2)};
    const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
    const CUtensorMapSwizzle swizzle = d == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                       : d == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                 : CU_TENSOR_MAP_SWIZZLE_32B;
    CUtensorMap map{};
    TESSERA_CU_CHECK(runtime::driver().cuTensorMapEncodeTiled(
        &map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, q.data, dims, strides, box, elem_strides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return map;
}

}  // namespace

std::int64_t mqa_logits_buffer_rows(std::int64_t seq_len, int num_heads) {
    TESSERA_CHECK(num_heads > 0 && 128 % num_heads == 0, "mqa_logits_buffer_rows: argument 'num_heads': expected a ",
                  "divisor of 128, got ", num_heads);
    const std::int64_t block = 128 / num_heads;
    return ops::align_up(seq_len, block);
}

std::int64_t mqa_logits_row_stride(std::int64_t seq_len_kv, std::int64_t max_seqlen_k, DType logits_dtype) {
    TESSERA_CHECK(logits_dtype == DType::kFloat32 || logits_dtype == DType::kBFloat16,
                  "mqa_logits_row_stride: argument 'logits_dtype': expected float32 or bfloat16, got ",
                  dtype_name(logits_dtype));
    const std::int64_t alignment = 1024 / dtype_size(logits_dtype);
    return max_seqlen_k == 0 ? ops::align_up(seq_len_kv + 256, alignment)
                             : ops::align_up(ops::align_up(max_seqlen_k, 256), alignment);
}

jit::KernelSpec ops::mqa_logits_spec(const heuristics::MqaLogitsConfig& c) {
    jit::KernelSpec spec(jit::Family::kMqaLogits);
    spec.set("kHeads", c.num_heads)
        .set("kHeadDim", c.head_dim)
        .set("kNumStages", c.num_stages)
        .set("kOutBf16", c.bf16_logits ? 1 : 0)
        .set("kQueryPieces", c.query_pieces ? 1 : 0);
    return spec;
}

jit::KernelSpec ops::clean_logits_spec(bool bf16_logits) {
    jit::KernelSpec spec(jit::Family::kCleanLogits);
    spec.set("kOutBf16", bf16_logits ? 1 : 0).set("kNumThreads", heuristics::kMqaCleanThreads);
    return spec;
}

namespace {

// logits [rows, cols] FP32/BF16 with stride(1) == 1 (checked by the caller); ks may be null.
void launch_clean(const TensorRef& logits, const std::int32_t* ks, const std::int32_t* ke, Stream stream) {
    const std::int64_t rows = logits.size(0), cols = logits.size(1);
    if (rows == 0 || cols == 0) return;
    const int device = logits.device.index;
    const bool bf16 = logits.dtype == DType::kBFloat16;
    static std::mutex mutex;
    static const jit::Kernel* kernels[2][64] = {};  // [bf16][device]
    TESSERA_CHECK(device >= 0 && device < 64, kCleanOp, ": argument 'logits': device index ", device,
                  " out of range");
    const jit::Kernel* kernel;
    {
        std::lock_guard lock(mutex);
        kernel = kernels[bf16][device];
        if (kernel == nullptr) {
            runtime::make_current(device);
            kernel = kernels[bf16][device] = &jit::jit().get(ops::clean_logits_spec(bf16));
        }
    }
    const int num_sms = ops::plan_num_sms(device);
    const int rows_per_block = heuristics::clean_logits_rows_per_block(rows, num_sms);
    CleanLogitsParams params{logits.data, logits.stride(0), ks, ke, static_cast<std::uint32_t>(rows),
                             static_cast<std::uint32_t>(cols), static_cast<std::uint32_t>(rows_per_block), 0};
    jit::LaunchConfig launch;
    launch.grid_x = static_cast<unsigned>(ops::ceil_div(rows, rows_per_block));
    launch.block_x = heuristics::kMqaCleanThreads;
    launch.stream = static_cast<CUstream>(stream);
    launch.device = device;
    kernel->launch(launch, params);
}

// logits: 2-D FP32 / BF16, row-major with rows that do not overlap (its device is checked with the others).
void check_logits(const char* op, const TensorRef& logits) {
    ops::check_ndim({op, "logits"}, logits, {2});
    ops::check_dtype({op, "logits"}, logits, {DType::kFloat32, DType::kBFloat16});
    TESSERA_CHECK(logits.stride(1) == 1 || logits.size(1) <= 1, op,
                  ": argument 'logits': expected row-major (stride(1) == 1), got strides ",
                  ops::strides_string(logits));
    TESSERA_CHECK(logits.stride(0) >= logits.size(1) || logits.size(0) <= 1, op,
                  ": argument 'logits': expected rows that do not overlap (stride(0) >= ", logits.size(1),
                  "), got strides ", ops::strides_string(logits));
}

}  // namespace

void fp8_mqa_logits(const TensorRef& q, const TensorRef& kv, const TensorRef& kv_sf, const TensorRef& weights,
                    const TensorRef& cu_seq_len_k_start, const TensorRef& cu_seq_len_k_end, const TensorRef& logits,
                    const TensorRef& workspace, bool clean_logits, std::int64_t max_seqlen_k, Stream stream) {
    // Shapes, dtypes and layouts first, then devices and alignment.
    // q: FP8 only on SM90; packed FP4 (bytes) is an SM100 format.
    if (q.dtype == DType::kPackedFp4 || q.dtype == DType::kInt8 || q.dtype == DType::kUInt8)
        throw Unsupported(detail::str_cat(kOp, ": argument 'q': FP4 (packed ", dtype_name(q.dtype),
                                          ") query and KV are SM100-only; SM90 takes float8_e4m3fn"));
    ops::check_ndim({kOp, "q"}, q, {3});
    ops::check_dtype({kOp, "q"}, q, {DType::kFloat8E4M3});
    const std::int64_t s = q.size(0), h = q.size(1), d = q.size(2);
    if (h == 8 || h == 16)
        throw Unsupported(detail::str_cat(kOp, ": argument 'q': ", h, " heads are SM100-only; SM90 takes 32 or 64"));
    TESSERA_CHECK(h == 32 || h == 64, kOp, ": argument 'q': expected 32 or 64 heads, got shape ", ops::shape_string(q));
    TESSERA_CHECK(d == 32 || d == 64 || d == 128, kOp,
                  ": argument 'q': expected a head dim of 32, 64 or 128, got shape ", ops::shape_string(q));
    TESSERA_CHECK(q.stride(2) == 1 && q.stride(1) == d && (q.stride(0) % 16 == 0 || s <= 1), kOp,
                  ": argument 'q': expected [S, H, D] with D and H packed (strides [*, ", d, ", 1]) and a row stride "
                  "of a multiple of 16 bytes, got strides ", ops::strides_string(q));

    ops::check_ndim({kOp, "kv"}, kv, {2});
    ops::check_dtype({kOp, "kv"}, kv, {DType::kFloat8E4M3});
    const std::int64_t s_kv = kv.size(0);
    TESSERA_CHECK(kv.size(1) == d, kOp, ": argument 'kv': expected [S_kv, ", d, "] (D from q), got shape ",
                  ops::shape_string(kv));
    TESSERA_CHECK(kv.stride(1) == 1 && (kv.stride(0) % 16 == 0 || s_kv <= 1), kOp,
                  ": argument 'kv': expected row-major with a row stride of a multiple of 16 bytes, got strides ",
                  ops::strides_string(kv));
    ops::check_ndim({kOp, "kv_sf"}, kv_sf, {1});
    ops::check_dtype({kOp, "kv_sf"}, kv_sf, {DType::kFloat32});
    TESSERA_CHECK(kv_sf.size(0) == s_kv && kv_sf.is_contiguous(), kOp, ": argument 'kv_sf': expected a contiguous [",
                  s_kv, "] (S_kv from kv), got shape ", ops::shape_string(kv_sf), " strides ",
                  ops::strides_string(kv_sf));

    ops::check_ndim({kOp, "weights"}, weights, {2});
    if (weights.dtype == DType::kBFloat16)
        throw Unsupported(
            detail::str_cat(kOp, ": argument 'weights': BF16 weights are SM100-only; SM90 takes float32"));
    ops::check_dtype({kOp, "weights"}, weights, {DType::kFloat32});
    TESSERA_CHECK(weights.size(0) == s && weights.size(1) == h, kOp, ": argument 'weights': expected shape [", s, ", ",
                  h, "] (S, H from q), got ", ops::shape_string(weights));
    TESSERA_CHECK(weights.stride(1) == 1 && ((weights.stride(0) * 4) % 16 == 0 || s <= 1), kOp,
                  ": argument 'weights': expected stride(1) == 1 and a row stride of a multiple of 16 bytes, got "
                  "strides ", ops::strides_string(weights));

    ops::check_int32_vector(kOp, "cu_seq_len_k_start", cu_seq_len_k_start, s, "each query's first KV row");
    ops::check_int32_vector(kOp, "cu_seq_len_k_end", cu_seq_len_k_end, s, "each query's KV end row");

    TESSERA_CHECK(max_seqlen_k >= 0 && max_seqlen_k < (std::int64_t{1} << 31), kOp,
                  ": argument 'max_seqlen_k': expected 0 (normal layout) or a positive width below 2^31, got ",
                  max_seqlen_k);
    TESSERA_CHECK(!(clean_logits && max_seqlen_k > 0), kOp,
                  ": argument 'clean_logits': expected False with the compressed layout (max_seqlen_k = ",
                  max_seqlen_k, " > 0), got True");
    check_logits(kOp, logits);
    const std::int64_t cols = max_seqlen_k > 0 ? max_seqlen_k : s_kv;
    TESSERA_CHECK(logits.size(0) == s && logits.size(1) == cols, kOp, ": argument 'logits': expected shape [", s, ", ",
                  cols, "] (", max_seqlen_k > 0 ? "S, max_seqlen_k" : "S, S_kv", "), got ",
                  ops::shape_string(logits));
    TESSERA_CHECK(s < (std::int64_t{1} << 31) && s_kv < (std::int64_t{1} << 31), kOp,
                  ": expected S and S_kv below 2^31, got ", s, " and ", s_kv);
    ops::check_dtype({kOp, "workspace"}, workspace, {DType::kInt32});
    TESSERA_CHECK(workspace.numel() >= kMqaLogitsWorkspaceInts && workspace.is_contiguous(), kOp,
                  ": argument 'workspace': expected a contiguous int32 tensor of at least ", kMqaLogitsWorkspaceInts,
                  " elements, got shape ", ops::shape_string(workspace));

    ops::check_cuda({kOp, "q"}, q);
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"kv", &kv}, {"kv_sf", &kv_sf},
                           {"weights", &weights}, {"cu_seq_len_k_start", &cu_seq_len_k_start},
                           {"cu_seq_len_k_end", &cu_seq_len_k_end}, {"logits", &logits}, {"workspace", &workspace}})
        ops::check_same_device({kOp, name}, *t, q, "q");
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"q", &q}, {"kv", &kv}, {"kv_sf", &kv_sf},
                           {"weights", &weights}})
        check_aligned({kOp, name}, *t);
    if (s == 0 || s_kv == 0 || cols == 0) return;  // no entry to write (TMA maps need non-empty tensors)

    const int device = q.device.index;
    const bool bf16 = logits.dtype == DType::kBFloat16;
    const PlanKey key{s, s_kv, static_cast<int>(h), static_cast<int>(d), bf16, ops::plan_num_sms(device), device};
    const Plan& plan = plan_for(key, kOp);
    const heuristics::MqaLogitsConfig& c = plan.config;
    const runtime::TmaSwizzle swizzle = static_cast<runtime::TmaSwizzle>(d);
    MqaLogitsParams params{};
    params.tensor_map_q = q_map(q, c.block_q / 2);
    // A single row's stride is free in torch; the maps take a 16-byte multiple then.
    using runtime::encode_tma_2d;
    constexpr int kBlockKv = heuristics::kMqaBlockKv;
    const std::int64_t kv_stride = s_kv > 1 ? kv.stride(0) : d, w_stride = s > 1 ? weights.stride(0) : h;
    params.tensor_map_kv = encode_tma_2d(ops::map_2d(kv.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, d, s_kv, kv_stride,
                                                     static_cast<int>(d), kBlockKv, swizzle));
    params.tensor_map_kv_scales = encode_tma_2d(ops::map_2d(kv_sf.data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, s_kv, 1,
                                                            ops::align_up(s_kv, 4), kBlockKv, 1,
                                                            runtime::TmaSwizzle::kNone));
    params.tensor_map_weights = encode_tma_2d(ops::map_2d(weights.data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, h, s,
                                                          w_stride, static_cast<int>(h), c.block_q,
                                                          runtime::TmaSwizzle::kNone));
    params.logits = logits.data;
    params.logits_stride = logits.stride(0);
    params.ks = static_cast<const std::int32_t*>(cu_seq_len_k_start.data);
    params.ke = static_cast<const std::int32_t*>(cu_seq_len_k_end.data);
    params.unit_counter = static_cast<std::uint32_t*>(workspace.data);
    params.seq_len = static_cast<std::uint32_t>(s);
    params.seq_len_kv = static_cast<std::uint32_t>(s_kv);
    params.max_seqlen_k = static_cast<std::uint32_t>(max_seqlen_k);
    params.num_units = static_cast<std::uint32_t>(c.num_units);
    params.num_kv_splits = static_cast<std::uint32_t>(c.num_kv_splits);
    params.split_len = static_cast<std::uint32_t>(c.split_len);

    // The kernel hands out units after each CTA's first from this counter: zero it on the stream.
    runtime::make_current(device);
    TESSERA_CU_CHECK(runtime::driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(workspace.data), 0, 1,
                                                        static_cast<CUstream>(stream)));
    jit::LaunchConfig launch;
    launch.grid_x = static_cast<unsigned>(c.grid);
    launch.block_x = static_cast<unsigned>(c.num_threads());
    launch.smem_bytes = static_cast<unsigned>(c.smem_bytes);
    launch.stream = static_cast<CUstream>(stream);
    launch.device = device;
    plan.kernel->launch(launch, params);
    if (clean_logits) launch_clean(logits, params.ks, params.ke, stream);
}

void clean_logits(const TensorRef& logits, const TensorRef* cu_seq_len_k_start, const TensorRef& cu_seq_len_k_end,
                  Stream stream) {
    check_logits(kCleanOp, logits);
    const std::int64_t rows = logits.size(0);
    ops::check_int32_vector(kCleanOp, "cu_seq_len_k_end", cu_seq_len_k_end, rows, "each row's KV end");
    if (cu_seq_len_k_start != nullptr)
        ops::check_int32_vector(kCleanOp, "cu_seq_len_k_start", *cu_seq_len_k_start, rows, "each row's first KV row");
    ops::check_cuda({kCleanOp, "logits"}, logits);
    ops::check_same_device({kCleanOp, "cu_seq_len_k_end"}, cu_seq_len_k_end, logits, "logits");
    if (cu_seq_len_k_start != nullptr)
        ops::check_same_device({kCleanOp, "cu_seq_len_k_start"}, *cu_seq_len_k_start, logits, "logits");
    TESSERA_CHECK(rows < (std::int64_t{1} << 31) && logits.size(1) < (std::int64_t{1} << 31), kCleanOp,
                  ": argument 'logits': expected fewer than 2^31 rows and columns, got shape ",
                  ops::shape_string(logits));
    launch_clean(logits,
                 cu_seq_len_k_start != nullptr ? static_cast<const std::int32_t*>(cu_seq_len_k_start->data) : nullptr,
                 static_cast<const std::int32_t*>(cu_seq_len_k_end.data), stream);
}

std::string mqa_logits_config(std::int64_t seq_len, std::int64_t seq_len_kv, int num_heads, int head_dim,
                              bool bf16_logits, int device) {
    TESSERA_CHECK(seq_len > 0 && seq_len_kv > 0, "mqa_logits_config: expected positive seq_len and seq_len_kv, got ",
                  seq_len, ", ", seq_len_kv);
    return plan_for({seq_len, seq_len_kv, num_heads, head_dim, bf16_logits, ops::plan_num_sms(device), device},
                    "mqa_logits_config")
        .config.describe();
}

}  // namespace tessera
