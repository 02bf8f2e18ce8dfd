// Scale-factor layout ops: validate -> spec -> launch. All three kernels take run-time shapes, so each compiles once.
#include "tessera/layout.hpp"

#include "jit/jit.hpp"
#include "ops/layout_specs.hpp"
#include "ops/validate.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace {

using ops::Arg;

std::int64_t align_up(std::int64_t x, std::int64_t a) { return (x + a - 1) / a * a; }
std::int64_t ceil_div(std::int64_t x, std::int64_t a) { return (x + a - 1) / a; }

constexpr int kPackThreads = 256;
constexpr int kTransposeTile = 32;

// Host mirrors of the kernels' Params (kernels/tessera/sm90/layout.cuh); Kernel::launch checks their size against
// the compiled entry's parameter size.
struct StridedSf {
    const float* in;
    std::int64_t stride_batch, stride_mn, stride_k;
    std::uint32_t mn, sf_k, batches;
};
struct TransposeParams {
    StridedSf src;
    float* out;
};
struct PackParams {
    StridedSf src;
    std::int32_t* out;
    const std::int32_t* psum_layout;
    std::uint32_t num_groups, alignment;
    std::int32_t* error_count;
};
struct PackKGroupedParams {
    const float* in;
    std::int32_t* out;
    const std::int32_t* grouped_layout;
    std::uint32_t num_groups, mn, rows_out, gran_k, k_alignment, use_psum;
    std::int32_t* error_count;
};

StridedSf strided(const TensorRef& sf) {
    const bool batched = sf.ndim == 3;
    return {static_cast<const float*>(sf.data), batched ? sf.stride(0) : 0, sf.stride(-2), sf.stride(-1),
            static_cast<std::uint32_t>(sf.size(-2)), static_cast<std::uint32_t>(sf.size(-1)),
            static_cast<std::uint32_t>(batched ? sf.size(0) : 1)};
}

jit::LaunchConfig launch_config(const TensorRef& t, Stream stream) {
    jit::LaunchConfig c;
    c.stream = static_cast<CUstream>(stream);
    c.device = t.device.index;
    return c;
}

// Optional int32 [>=1] device counter of bad scale values.
std::int32_t* error_counter(Arg arg, const TensorRef* counter, const TensorRef& sf) {
    if (counter == nullptr) return nullptr;
    ops::check_dtype(arg, *counter, {DType::kInt32});
    ops::check_cuda(arg, *counter);
    ops::check_same_device(arg, *counter, sf, "sf");
    TESSERA_CHECK(counter->numel() >= 1, arg.op, ": argument '", arg.name, "': expected at least one element");
    return static_cast<std::int32_t*>(counter->data);
}

// Common checks of an FP32 [MN, SFK] / [G, MN, SFK] scale tensor.
void check_sf_input(Arg arg, const TensorRef& sf) {
    ops::check_dtype(arg, sf, {DType::kFloat32});
    ops::check_ndim(arg, sf, {2, 3});
    ops::check_cuda(arg, sf);
    TESSERA_CHECK(sf.size(-2) < (1LL << 31) && sf.size(-1) < (1LL << 31) && sf.size(-2) >= 0, arg.op,
                  ": argument '", arg.name, "': expected dimensions below 2^31, got shape ", ops::shape_string(sf));
}

// Checks that out has sf's leading shape, `last` columns, dtype, and MN-major TMA-aligned strides.
void check_mn_major_output(Arg arg, const TensorRef& sf, const TensorRef& out, DType dtype, std::int64_t last) {
    ops::check_dtype(arg, out, {dtype});
    ops::check_cuda(arg, out);
    ops::check_same_device(arg, out, sf, "sf");
    TESSERA_CHECK(out.ndim == sf.ndim, arg.op, ": argument '", arg.name, "': expected ", sf.ndim, " dimensions, got ",
                  out.ndim);
    const std::int64_t mn = sf.size(-2), aligned = align_up(mn, 4);
    const bool shape_ok = out.size(-2) == mn && out.size(-1) == last && (sf.ndim == 2 || out.size(0) == sf.size(0));
    const bool strides_ok = (mn <= 1 || out.stride(-2) == 1) && (last <= 1 || out.stride(-1) == aligned) &&
                            (sf.ndim == 2 || sf.size(0) <= 1 || out.stride(0) == aligned * last);
    TESSERA_CHECK(shape_ok && strides_ok, arg.op, ": argument '", arg.name, "': expected shape [..., ", mn, ", ", last,
                  "] with strides (..., 1, ", aligned, "), got shape ", ops::shape_string(out), " with strides ",
                  ops::strides_string(out));
}

}  // namespace

namespace ops {

const jit::KernelSpec& transpose_fp32_spec() {
    static const jit::KernelSpec spec = jit::KernelSpec(jit::Family::kTransposeFp32).set("kTile", kTransposeTile);
    return spec;
}
const jit::KernelSpec& pack_ue8m0_spec() {
    static const jit::KernelSpec spec = jit::KernelSpec(jit::Family::kPackUe8m0).set("kNumThreads", kPackThreads);
    return spec;
}
const jit::KernelSpec& pack_ue8m0_k_grouped_spec() {
    static const jit::KernelSpec spec =
        jit::KernelSpec(jit::Family::kPackUe8m0KGrouped).set("kNumThreads", kPackThreads);
    return spec;
}
std::vector<jit::KernelSpec> layout_specs() {
    return {transpose_fp32_spec(), pack_ue8m0_spec(), pack_ue8m0_k_grouped_spec()};
}

}  // namespace ops

std::int64_t get_tma_aligned_size(std::int64_t x, std::int64_t element_size) {
    TESSERA_CHECK(element_size > 0 && 16 % element_size == 0,
                  "get_tma_aligned_size: argument 'element_size': expected a divisor of 16, got ", element_size);
    TESSERA_CHECK(x >= 0, "get_tma_aligned_size: argument 'x': expected >= 0, got ", x);
    return align_up(x, 16 / element_size);
}

bool is_mn_major_tma_aligned(const TensorRef& sf) {
    if (sf.dtype != DType::kFloat32 || (sf.ndim != 2 && sf.ndim != 3)) return false;
    const std::int64_t mn = sf.size(-2), k = sf.size(-1), aligned = align_up(mn, 4);
    if (mn > 1 && sf.stride(-2) != 1) return false;
    if (k > 1 && sf.stride(-1) != aligned) return false;
    return sf.ndim == 2 || sf.size(0) <= 1 || sf.stride(0) == aligned * k;
}

}  // namespace tessera

namespace tessera {

void transpose_sf_to_mn_major(const TensorRef& sf, const TensorRef& out, Stream stream) {
    constexpr const char* op = "get_mn_major_tma_aligned_tensor";
    check_sf_input({op, "sf"}, sf);
    check_mn_major_output({op, "out"}, sf, out, DType::kFloat32, sf.size(-1));
    const std::int64_t batches = sf.ndim == 3 ? sf.size(0) : 1;
    if (sf.numel() == 0) return;
    TransposeParams params{strided(sf), static_cast<float*>(out.data)};
    const jit::KernelSpec& spec = ops::transpose_fp32_spec();
    jit::LaunchConfig c = launch_config(sf, stream);
    c.grid_x = static_cast<unsigned>(ceil_div(align_up(sf.size(-2), 4), kTransposeTile));
    c.grid_y = static_cast<unsigned>(ceil_div(sf.size(-1), kTransposeTile));
    c.grid_z = static_cast<unsigned>(batches);
    c.block_x = kTransposeTile * 8;
    jit::jit().get(spec).launch(c, params);
}

void pack_sf_to_ue8m0(const TensorRef& sf, const TensorRef& out, const TensorRef* psum_layout, int alignment,
                      const TensorRef* error_count, Stream stream) {
    constexpr const char* op = "get_mn_major_tma_aligned_packed_ue8m0_tensor";
    check_sf_input({op, "sf"}, sf);
    check_mn_major_output({op, "out"}, sf, out, DType::kInt32, ceil_div(sf.size(-1), 4));
    PackParams params{strided(sf), static_cast<std::int32_t*>(out.data), nullptr, 0,
                      static_cast<std::uint32_t>(alignment), error_counter({op, "error_count"}, error_count, sf)};
    if (psum_layout != nullptr) {
        const Arg arg{op, "psum_layout"};
        ops::check_dtype(arg, *psum_layout, {DType::kInt32});
        ops::check_ndim(arg, *psum_layout, {1});
        ops::check_cuda(arg, *psum_layout);
        ops::check_same_device(arg, *psum_layout, sf, "sf");
        ops::check_contiguous(arg, *psum_layout);
        TESSERA_CHECK(psum_layout->numel() > 0, op, ": argument 'psum_layout': expected at least one group, got 0");
        TESSERA_CHECK(sf.ndim == 2, op, ": argument 'sf': with psum_layout expected a 2-D tensor, got shape ",
                      ops::shape_string(sf));
        TESSERA_CHECK(alignment > 0, op, ": argument 'alignment': expected > 0, got ", alignment);
        params.psum_layout = static_cast<const std::int32_t*>(psum_layout->data);
        params.num_groups = static_cast<std::uint32_t>(psum_layout->numel());
    }
    const std::int64_t words = align_up(sf.size(-2), 4) * ceil_div(sf.size(-1), 4);
    if (words == 0 || (sf.ndim == 3 && sf.size(0) == 0)) return;
    const jit::KernelSpec& spec = ops::pack_ue8m0_spec();
    jit::LaunchConfig c = launch_config(sf, stream);
    c.grid_x = static_cast<unsigned>(ceil_div(words, kPackThreads));
    c.grid_y = static_cast<unsigned>(sf.ndim == 3 ? sf.size(0) : 1);
    c.block_x = kPackThreads;
    jit::jit().get(spec).launch(c, params);
}

std::int64_t k_grouped_packed_rows(std::int64_t sf_rows, std::span<const std::int64_t> ks, std::int64_t num_groups,
                                   std::int64_t gran_k) {
    if (ks.empty()) return (sf_rows + 3 * num_groups) / 4;
    std::int64_t rows = 0;
    for (std::int64_t k : ks) rows += ceil_div(k, 4 * gran_k);
    return rows;
}

void pack_sf_to_ue8m0_k_grouped(const TensorRef& sf, const TensorRef& out, const TensorRef& grouped_layout,
                                std::span<const std::int64_t> ks, int gran_k, int k_alignment, bool use_psum,
                                const TensorRef* error_count, Stream stream) {
    constexpr const char* op = "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor";
    const Arg sf_arg{op, "sf"}, layout_arg{op, "grouped_layout"}, out_arg{op, "out"};
    ops::check_dtype(sf_arg, sf, {DType::kFloat32});
    ops::check_ndim(sf_arg, sf, {2});
    ops::check_cuda(sf_arg, sf);
    ops::check_contiguous(sf_arg, sf);
    TESSERA_CHECK(gran_k == 32 || gran_k == 128, op, ": argument 'gran_k': expected 32 or 128, got ", gran_k);
    TESSERA_CHECK(k_alignment > 0 && k_alignment % 32 == 0, op,
                  ": argument 'k_alignment': expected a positive multiple of 32, got ", k_alignment);
    const std::int64_t mn = sf.size(1);
    TESSERA_CHECK(mn % 4 == 0, op, ": argument 'sf': expected MN (dim 1) to be a multiple of 4, got ", mn);
    ops::check_dtype(layout_arg, grouped_layout, {DType::kInt32});
    ops::check_ndim(layout_arg, grouped_layout, {1});
    ops::check_cuda(layout_arg, grouped_layout);
    ops::check_same_device(layout_arg, grouped_layout, sf, "sf");
    ops::check_contiguous(layout_arg, grouped_layout);
    const std::int64_t groups = grouped_layout.numel();
    TESSERA_CHECK(groups >= 1 && groups <= 128, op, ": argument 'grouped_layout': expected 1 to 128 groups, got ", groups);
    TESSERA_CHECK(use_psum || !ks.empty(), op, ": argument 'ks_cpu': expected per-group K values without psum layout");
    if (!ks.empty()) {
        TESSERA_CHECK(static_cast<std::int64_t>(ks.size()) == groups, op, ": argument 'ks_cpu': expected ", groups,
                      " values (one per group), got ", ks.size());
        std::int64_t rows = 0;
        for (std::size_t g = 0; g < ks.size(); ++g) {
            TESSERA_CHECK(ks[g] >= 0, op, ": argument 'ks_cpu': expected K >= 0, got ", ks[g], " for group ", g);
            rows += ceil_div(ks[g], gran_k);
        }
        TESSERA_CHECK(use_psum || rows == sf.size(0), op, ": argument 'sf': expected ", rows,
                      " rows (sum of ceil(k_g / gran_k)), got ", sf.size(0));
    }
    const std::int64_t rows_out = k_grouped_packed_rows(sf.size(0), ks, groups, gran_k);
    ops::check_dtype(out_arg, out, {DType::kInt32});
    ops::check_cuda(out_arg, out);
    ops::check_same_device(out_arg, out, sf, "sf");
    ops::check_contiguous(out_arg, out);
    TESSERA_CHECK(out.ndim == 2 && out.size(0) == rows_out && out.size(1) == mn, op,
                  ": argument 'out': expected shape [", rows_out, ", ", mn, "], got ", ops::shape_string(out));
    if (rows_out == 0 || mn == 0) return;
    PackKGroupedParams params{static_cast<const float*>(sf.data), static_cast<std::int32_t*>(out.data),
                              static_cast<const std::int32_t*>(grouped_layout.data), static_cast<std::uint32_t>(groups),
                              static_cast<std::uint32_t>(mn), static_cast<std::uint32_t>(rows_out),
                              static_cast<std::uint32_t>(gran_k), static_cast<std::uint32_t>(k_alignment),
                              use_psum ? 1u : 0u, error_counter({op, "error_count"}, error_count, sf)};
    const jit::KernelSpec& spec = ops::pack_ue8m0_k_grouped_spec();
    jit::LaunchConfig c = launch_config(sf, stream);
    c.grid_x = static_cast<unsigned>(ceil_div(rows_out * mn, kPackThreads));
    c.block_x = kPackThreads;
    jit::jit().get(spec).launch(c, params);
}

}  // namespace tessera

namespace tessera {
namespace {

LayoutPlan mn_major_plan(const TensorRef& sf, std::int64_t last) {
    LayoutPlan plan;
    plan.ndim = sf.ndim;
    const std::int64_t mn = sf.size(-2), aligned = align_up(mn, 4);
    const int o = sf.ndim - 2;
    if (sf.ndim == 3) {
        plan.shape[0] = sf.size(0);
        plan.strides[0] = aligned * last;
    }
    plan.shape[o] = mn;
    plan.shape[o + 1] = last;
    plan.strides[o] = 1;
    plan.strides[o + 1] = aligned;
    return plan;
}

}  // namespace

LayoutPlan plan_mn_major_tma_aligned(const TensorRef& sf) {
    constexpr const char* op = "get_mn_major_tma_aligned_tensor";
    ops::check_dtype({op, "sf"}, sf, {DType::kFloat32});
    ops::check_ndim({op, "sf"}, sf, {2, 3});
    LayoutPlan plan = mn_major_plan(sf, sf.size(-1));
    // Returned as is only when its strides are the planned ones, literally: a single scale column ([MN, 1],
    // contiguous, strides (1, 1)) or a single row is a valid kernel operand, but DeepGEMM's contract gives the caller
    // a tensor with the TMA-aligned column stride, and callers rely on it.
    plan.pass_through = true;
    for (int i = 0; i < sf.ndim; ++i) plan.pass_through = plan.pass_through && sf.stride(i) == plan.strides[i];
    return plan;
}

LayoutPlan plan_mn_major_packed_ue8m0(const TensorRef& sf) {
    constexpr const char* op = "get_mn_major_tma_aligned_packed_ue8m0_tensor";
    ops::check_dtype({op, "sf"}, sf, {DType::kFloat32});
    ops::check_ndim({op, "sf"}, sf, {2, 3});
    return mn_major_plan(sf, ceil_div(sf.size(-1), 4));
}

}  // namespace tessera
