// The batched BF16 GEMMs of einsum: validate -> plan (memoized, the BF16 GEMM's plan cache) -> tensor maps -> launch.
// bf16_bmm_nt runs the kernel's batched kind over 3-D maps; bf16_bmk_bnk_mn its batch-sum kind, whose tiles
// reduce-add FP32 sums into d (or into a zeroed workspace, then rounded into a BF16 d).
#include "tessera/einsum.hpp"

#include <cstdint>
#include <limits>
#include <utility>

#include "ops/bf16_gemm_common.hpp"
#include "ops/validate.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"

namespace tessera {
namespace {

using runtime::TmaSwizzle;

constexpr int kCastThreads = 256;

// a and b 3-D, d of d_ndim dimensions, all on a's CUDA device.
void check_operands(const char* op, const TensorRef& a, const TensorRef& b, const TensorRef& d, int d_ndim) {
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d}}) {
        ops::check_ndim({op, name}, *t, {t == &d ? d_ndim : 3});
        ops::check_cuda({op, name}, *t);
        if (t != &a) ops::check_same_device({op, name}, *t, a, "a");
    }
}

// A batch stride (elements) of a 3-D operand as TMA takes it: a 16-byte multiple, unless there is one batch entry.
void check_batch_stride(const char* op, const char* name, const TensorRef& t, int element_bytes) {
    TESSERA_CHECK(t.size(0) <= 1 || (t.stride(0) * element_bytes) % 16 == 0, op, ": argument '", name,
                  "': expected a batch stride (stride(0)) of a multiple of 16 bytes (TMA), got strides ",
                  ops::strides_string(t));
}

CUtensorMap map_3d(const runtime::TmaDesc2d& desc, const TensorRef& t, int element_bytes) {
    return runtime::encode_tma_3d(desc, static_cast<std::uint64_t>(t.size(0)),
                                  static_cast<std::uint64_t>(t.stride(0) * element_bytes));
}

void launch_cast(const TensorRef& src, const TensorRef& d, Stream stream, int device) {
    const jit::KernelSpec& spec = ops::cast_fp32_to_bf16_spec();
    struct Params {
        const float* src;
        void* dst;
        std::uint32_t rows, cols, ld_dst;
    } params{static_cast<const float*>(src.data), d.data, static_cast<std::uint32_t>(d.size(0)),
             static_cast<std::uint32_t>(d.size(1)), static_cast<std::uint32_t>(d.stride(0))};
    jit::LaunchConfig launch;
    const std::int64_t pieces = d.size(0) * d.size(1) / 8;
    launch.grid_x = static_cast<unsigned>(std::min<std::int64_t>(ops::ceil_div(pieces, kCastThreads), 4096));
    launch.block_x = kCastThreads;
    launch.stream = static_cast<CUstream>(stream);
    launch.device = device;
    jit::jit().get(spec).launch(launch, params);
}

// Zeros over a contiguous tensor of FP32 or BF16 elements (an even count).
void zero_fill(const TensorRef& t, Stream stream) {
    // The driver call runs in the current context, which nothing on this path has made t's device's (the plan
    // cache makes it current only when it builds a plan; the s == 0 path builds none).
    runtime::make_current(t.device.index);
    TESSERA_CU_CHECK(runtime::driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(t.data), 0,
                                                        static_cast<std::size_t>(t.numel() * dtype_size(t.dtype) / 4),
                                                        static_cast<CUstream>(stream)));
}

}  // namespace

namespace ops {
const jit::KernelSpec& cast_fp32_to_bf16_spec() {
    static const jit::KernelSpec spec =
        jit::KernelSpec(jit::Family::kCastFp32ToBf16).set("kNumThreads", kCastThreads);
    return spec;
}
}  // namespace ops

void bf16_bmm_nt(const TensorRef& a, const TensorRef& b, const TensorRef& d, Stream stream) {
    constexpr const char* op = "einsum";
    check_operands(op, a, b, d, 3);
    ops::check_dtype({op, "a"}, a, {DType::kBFloat16});
    ops::check_dtype({op, "b"}, b, {DType::kBFloat16});
    ops::check_dtype({op, "d"}, d, {DType::kBFloat16, DType::kFloat32});
    const auto [groups, m, n, k] = ops::check_bmm_shapes(op, a, b, d);
    if (groups == 0 || m == 0 || n == 0) return;
    TESSERA_CHECK(!ops::mn_major_operand(op, "a", a), op, ": argument 'a': expected K-major (stride(-1) == 1), got "
                  "strides ", ops::strides_string(a));
    const bool mn_b = ops::mn_major_operand(op, "b", b);
    const bool out_f32 = d.dtype == DType::kFloat32;
    const int d_bytes = out_f32 ? 4 : 2;
    ops::check_bf16_output(op, d, n);
    check_batch_stride(op, "a", a, 2);
    check_batch_stride(op, "b", b, 2);
    check_batch_stride(op, "d", d, d_bytes);
    TESSERA_CHECK(groups <= std::numeric_limits<std::int32_t>::max(), op, ": argument 'a': expected a batch below 2^31, "
                  "got ", groups);

    const int device = a.device.index;
    const ops::Bf16PlanKey key{m,     n,    k, false, mn_b, out_f32, false, ops::GemmKind::kBatched,
                               static_cast<int>(groups), 0, ops::plan_num_sms(device), device,
                               options().block_n_multiple};
    const ops::Bf16Plan& plan = ops::bf16_plan(key, op);
    const heuristics::Bf16GemmConfig& cfg = plan.config;
    constexpr auto kBf16 = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    ops::Bf16GemmParams params{};
    params.tensor_map_a =
        map_3d(ops::map_2d(a.data, kBf16, 2, k, m, a.stride(1), 64, cfg.block_m, TmaSwizzle::k128B), a, 2);
    params.tensor_map_b =
        mn_b ? map_3d(ops::map_2d(b.data, kBf16, 2, n, k, b.stride(2), 64, 64, TmaSwizzle::k128B), b, 2)
             : map_3d(ops::map_2d(b.data, kBf16, 2, k, n, b.stride(1), 64, cfg.block_n, TmaSwizzle::k128B), b, 2);
    params.tensor_map_d =
        map_3d(ops::map_2d(d.data, out_f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : kBf16, d_bytes, n, m, d.stride(1),
                           cfg.store_box_n, 64, static_cast<TmaSwizzle>(cfg.swizzle_d_bytes)),
               d, d_bytes);
    ops::set_gemm_dims(params, m, n, k, d);
    params.num_groups = static_cast<std::uint32_t>(groups);
    ops::launch_bf16_gemm(plan, params, stream, device);
}

void bf16_bmk_bnk_mn(const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef* c,
                     const TensorRef* workspace, Stream stream) {
    constexpr const char* op = "einsum";
    check_operands(op, a, b, d, 2);
    ops::check_dtype({op, "a"}, a, {DType::kBFloat16});
    ops::check_dtype({op, "b"}, b, {DType::kBFloat16});
    ops::check_dtype({op, "d"}, d, {DType::kBFloat16, DType::kFloat32});
    const std::int64_t s = a.size(0), m = a.size(1), k = a.size(2), n = b.size(1);
    // 16-byte aligned bases: a and b are read through TMA maps, d through one (FP32) or the cast kernel's 16-byte
    // stores (BF16), and zeroed by 32-bit memsets.
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d}}) {
        ops::check_contiguous({op, name}, *t);
        TESSERA_CHECK(reinterpret_cast<std::uintptr_t>(t->data) % 16 == 0 || (t != &d && s == 0), op,
                      ": argument '", name, "': expected a 16-byte aligned data pointer (TMA), got ", t->data);
    }
    TESSERA_CHECK(b.size(0) == s && b.size(2) == k, op, ": argument 'b': expected [", s, ", N, ", k,
                  "] (batch and K from a), got shape ", ops::shape_string(b));
    TESSERA_CHECK(d.size(0) == m && d.size(1) == n, op, ": argument 'd': expected [", m, ", ", n, "], got shape ",
                  ops::shape_string(d));
    for (auto [name, v] : {std::pair<const char*, std::int64_t>{"M", m}, {"N", n}, {"K", k}})
        TESSERA_CHECK(v > 0 && v % 64 == 0, op, ": argument '", name[0] == 'N' ? "b" : "a", "': expected ", name,
                      " > 0 and a multiple of 64, got ", name, " = ", v);
    TESSERA_CHECK(s * std::max(m, n) <= std::numeric_limits<std::int32_t>::max(), op, ": argument 'a': expected "
                  "batch * max(M, N) <= 2^31 - 1 (TMA row coordinates), got ", s, " * ", std::max(m, n));
    const bool out_f32 = d.dtype == DType::kFloat32;
    if (out_f32) {
        if (c != nullptr) ops::check_c(op, *c, d);
    } else {
        TESSERA_CHECK(c == nullptr, op, ": argument 'c': expected None with a BF16 d (accumulation is FP32: pass an "
                      "FP32 d with c = d), got a tensor");
        TESSERA_CHECK(workspace != nullptr, op, ": argument 'workspace': expected an FP32 [", m, ", ", n,
                      "] scratch tensor for a BF16 d, got none");
        ops::check_cuda({op, "workspace"}, *workspace);
        ops::check_same_device({op, "workspace"}, *workspace, a, "a");
        ops::check_dtype({op, "workspace"}, *workspace, {DType::kFloat32});
        ops::check_contiguous({op, "workspace"}, *workspace);
        TESSERA_CHECK(workspace->numel() >= m * n, op, ": argument 'workspace': expected at least ", m * n,
                      " elements, got shape ", ops::shape_string(*workspace));
        TESSERA_CHECK(reinterpret_cast<std::uintptr_t>(workspace->data) % 16 == 0, op,
                      ": argument 'workspace': expected a 16-byte aligned data pointer (TMA, the cast's 16-byte "
                      "loads), got ", workspace->data);
    }
    if (s == 0) {  // an empty sum: d = c, or 0
        if (c != nullptr) ops::copy_c_into_d(*c, d, stream);
        else zero_fill(d, stream);  // (BF16: M * N is even, so whole 32-bit words of zeros)
        return;
    }

    const int device = a.device.index;
    const ops::Bf16PlanKey key{m,    n,     k, false, false, true, true, ops::GemmKind::kBatchSum,
                               static_cast<int>(s), 0, ops::plan_num_sms(device), device, options().block_n_multiple};
    const ops::Bf16Plan& plan = ops::bf16_plan(key, op);
    const heuristics::Bf16GemmConfig& cfg = plan.config;
    // The FP32 sum lands in d itself, or in the workspace for a BF16 d.
    TensorRef sum = out_f32 ? d : *workspace;
    if (!out_f32) {
        sum.ndim = 2;
        sum.shape[0] = m, sum.shape[1] = n;
        sum.strides[0] = n, sum.strides[1] = 1;
    }
    constexpr auto kBf16 = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    ops::Bf16GemmParams params{};
    params.tensor_map_a = runtime::encode_tma_2d(ops::map_2d(a.data, kBf16, 2, k, s * m, k, 64, cfg.block_m,
                                                             TmaSwizzle::k128B));
    params.tensor_map_b = runtime::encode_tma_2d(ops::map_2d(b.data, kBf16, 2, k, s * n, k, 64, cfg.block_n,
                                                             TmaSwizzle::k128B));
    params.tensor_map_d = ops::d_store_map(sum, cfg.store_box_n, cfg.swizzle_d_bytes);
    ops::set_gemm_dims(params, m, n, k, sum);
    params.num_groups = static_cast<std::uint32_t>(s);
    params.k_blocks_per_split = static_cast<std::uint32_t>(cfg.k_blocks_per_split);
    if (c != nullptr && c->data != d.data) ops::copy_c_into_d(*c, d, stream);
    else if (c == nullptr) zero_fill(sum, stream);
    ops::launch_bf16_gemm(plan, params, stream, device);
    if (!out_f32) launch_cast(sum, d, stream, device);
}

}  // namespace tessera
