// m-grouped BF16 GEMMs (MoE): validate -> plan (memoized) -> tensor maps -> launch of the BF16 GEMM kernel with a
// grouped GemmKind; only the tile schedule and the addressing differ from the dense call.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "ops/bf16_gemm_common.hpp"
#include "ops/bf16_legacy.hpp"
#include "ops/validate.hpp"
#include "tessera/bf16_gemm.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"
#include "tessera/runtime.hpp"

namespace tessera {
namespace {

// Groups of a k-grouped call: its per-group arrays travel in the kernel parameters (4 KB in all).
constexpr std::int64_t kMaxKGroups = 256;

struct GroupedB {
    std::int64_t groups, n;
    bool mn_major;
};

// a [rows, K] (or [G, M_max, K]) K-major, b [G, N, K] packed, d [rows, N] (or [G, M_max, N]) BF16 row-major, all on
// a's CUDA device; K % 64 == 0 so that no k-block of an MN-major B crosses into the next group.
GroupedB check_operands(const char* op, const TensorRef& a, const TensorRef& b, const TensorRef& d,
                        const TensorRef& layout, const char* layout_name, int a_ndim) {
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d},
                           {layout_name, &layout}}) {
        ops::check_cuda({op, name}, *t);
        if (t != &a) ops::check_same_device({op, name}, *t, a, "a");
    }
    ops::check_ndim({op, "a"}, a, {a_ndim});
    ops::check_ndim({op, "b"}, b, {3});
    ops::check_ndim({op, "d"}, d, {a_ndim});
    ops::check_dtype({op, "a"}, a, {DType::kBFloat16});
    ops::check_dtype({op, "b"}, b, {DType::kBFloat16});
    ops::check_dtype({op, "d"}, d, {DType::kBFloat16});
    const std::int64_t k = a.size(-1), groups = b.size(0), n = b.size(1);
    TESSERA_CHECK(b.size(2) == k, op, ": argument 'b': expected [G, N, K] with K = ", k, " (from a), got shape ",
                  ops::shape_string(b));
    TESSERA_CHECK(groups > 0, op, ": argument 'b': expected at least one group, got shape ", ops::shape_string(b));
    TESSERA_CHECK(k > 0 && k % 64 == 0, op, ": argument 'a': expected K > 0 and a multiple of 64, got K = ", k);
    TESSERA_CHECK(!ops::mn_major_operand(op, "a", a), op, ": argument 'a': expected K-major (stride(-1) == 1), got "
                  "strides ", ops::strides_string(a));
    const bool mn_b = ops::mn_major_operand(op, "b", b);
    const std::int64_t group_stride = mn_b ? k * b.stride(2) : n * b.stride(1);
    TESSERA_CHECK(groups <= 1 || b.stride(0) == group_stride, op, ": argument 'b': expected packed groups (stride(0) "
                  "== ", group_stride, "), got strides ", ops::strides_string(b));
    TESSERA_CHECK(d.size(-1) == n, op, ": argument 'd': expected N = ", n, " columns (from b), got shape ",
                  ops::shape_string(d));
    ops::check_bf16_output(op, d, n);
    return {groups, n, mn_b};
}

ops::Bf16PlanKey grouped_key(std::int64_t m, std::int64_t n, std::int64_t k, bool mn_b, ops::GemmKind kind,
                             std::int64_t groups, int block_m, int device) {
    return {m, n, k, false, mn_b, false, false, kind, static_cast<int>(groups), block_m, ops::plan_num_sms(device),
            device, options().block_n_multiple};
}

// Maps and parameters every m-grouped call shares: A [rows][K], B [G*N][K] or [G*K][N], D [rows][N].
ops::Bf16GemmParams grouped_params(const heuristics::Bf16GemmConfig& cfg, const TensorRef& a, std::int64_t a_rows,
                                   const TensorRef& b, const GroupedB& gb, const TensorRef& d, std::int64_t m,
                                   const TensorRef& layout) {
    const std::int64_t k = a.size(-1);
    ops::Bf16GemmParams params{};
    params.tensor_map_a = ops::bf16_operand_map(a.data, false, a_rows, k, a.stride(-2), cfg.block_m);
    params.tensor_map_b = gb.mn_major
                              ? ops::bf16_operand_map(b.data, true, gb.n, gb.groups * k, b.stride(2), cfg.block_n)
                              : ops::bf16_operand_map(b.data, false, gb.groups * gb.n, k, b.stride(1), cfg.block_n);
    params.tensor_map_d = ops::d_store_map(d, cfg.store_box_n, cfg.swizzle_d_bytes);
    ops::set_gemm_dims(params, m, gb.n, k, d);
    params.num_groups = static_cast<std::uint32_t>(gb.groups);
    params.grouped_layout = static_cast<const std::int32_t*>(layout.data);
    params.alignment = static_cast<std::uint32_t>(get_mk_alignment_for_contiguous_layout());
    return params;
}

void contiguous(const char* kOp, const TensorRef& a, const TensorRef& b, const TensorRef& d,
                const TensorRef& grouped_layout, bool use_psum_layout, std::int64_t expected_m, jit::Family family,
                Stream stream) {
    const GroupedB gb = check_operands(kOp, a, b, d, grouped_layout, "grouped_layout", 2);
    const std::int64_t m = a.size(0), k = a.size(1);
    TESSERA_CHECK(d.size(0) == m, kOp, ": argument 'd': expected ", m, " rows (from a), got shape ",
                  ops::shape_string(d));
    ops::check_int32_vector(kOp, "grouped_layout", grouped_layout, use_psum_layout ? gb.groups : m,
                            use_psum_layout ? "the end row of each group" : "the group of each row of a");
    TESSERA_CHECK(expected_m >= 0, kOp, ": argument 'expected_m': expected >= 0, got ", expected_m);
    if (m == 0) return;
    const int device = a.device.index;
    const ops::Bf16PlanKey key =
        use_psum_layout
            ? grouped_key(ops::bf16_grouped_plan_rows(ops::GemmKind::kPsum, m, gb.groups, expected_m), gb.n, k,
                          gb.mn_major, ops::GemmKind::kPsum, gb.groups, 0, device)
            : grouped_key(m, gb.n, k, gb.mn_major, ops::GemmKind::kContiguous, 1, ops::contiguous_block_m(kOp), device);
    ops::Bf16PlanKey named = key;
    named.family = family;
    const ops::Bf16Plan& plan = ops::bf16_plan(named, kOp);
    ops::launch_bf16_gemm(plan, grouped_params(plan.config, a, m, b, gb, d, m, grouped_layout), stream, device);
}

void k_grouped(const char* kOp, const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef& c,
               const std::vector<std::int64_t>& ks, const TensorRef& ks_tensor, jit::Family family, Stream stream);

}  // namespace

void m_grouped_bf16_gemm_nt_contiguous(const TensorRef& a, const TensorRef& b, const TensorRef& d,
                                       const TensorRef& grouped_layout, bool use_psum_layout, std::int64_t expected_m,
                                       Stream stream) {
    contiguous("m_grouped_bf16_gemm_nt_contiguous", a, b, d, grouped_layout, use_psum_layout, expected_m,
               jit::Family::kBf16Gemm, stream);
}

void k_grouped_bf16_gemm_tn_contiguous(const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef& c,
                                       const std::vector<std::int64_t>& ks, const TensorRef& ks_tensor, Stream stream) {
    k_grouped("k_grouped_bf16_gemm_tn_contiguous", a, b, d, c, ks, ks_tensor, jit::Family::kBf16Gemm, stream);
}

namespace ops {

void m_grouped_bf16_gemm_contiguous_tl(const TensorRef& a, const TensorRef& b, const TensorRef& d,
                                       const TensorRef& m_indices, Stream stream) {
    contiguous("m_grouped_bf16_gemm_nt_contiguous_tl", a, b, d, m_indices, false, 0, jit::Family::kBf16GemmLegacyM,
               stream);
}

void k_grouped_bf16_gemm_tn_contiguous_tl(const TensorRef& a, const TensorRef& b, const TensorRef& d,
                                          const std::vector<std::int64_t>& ks, const TensorRef& ks_tensor,
                                          Stream stream) {
    k_grouped("k_grouped_bf16_gemm_tn_contiguous_tl", a, b, d, d, ks, ks_tensor, jit::Family::kBf16GemmLegacyK,
              stream);
}

}  // namespace ops

void m_grouped_bf16_gemm_nt_masked(const TensorRef& a, const TensorRef& b, const TensorRef& d,
                                   const TensorRef& masked_m, std::int64_t expected_m, Stream stream) {
    constexpr const char* kOp = "m_grouped_bf16_gemm_nt_masked";
    const GroupedB gb = check_operands(kOp, a, b, d, masked_m, "masked_m", 3);
    const std::int64_t m_max = a.size(1), k = a.size(2);
    TESSERA_CHECK(a.size(0) == gb.groups && m_max > 0, kOp, ": argument 'a': expected [", gb.groups,
                  ", M_max > 0, K] (groups from b), got shape ", ops::shape_string(a));
    TESSERA_CHECK(d.size(0) == gb.groups && d.size(1) == m_max, kOp, ": argument 'd': expected shape [", gb.groups,
                  ", ", m_max, ", ", gb.n, "], got ", ops::shape_string(d));
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"d", &d}})
        TESSERA_CHECK(t->stride(0) == m_max * t->stride(1), kOp, ": argument '", name,
                      "': expected packed groups (stride(0) == M_max * stride(1)), got strides ",
                      ops::strides_string(*t));
    ops::check_int32_vector(kOp, "masked_m", masked_m, gb.groups, "the valid rows of each group");
    TESSERA_CHECK(expected_m > 0, kOp, ": argument 'expected_m': expected > 0 (rows per group, a hint), got ",
                  expected_m);
    const int device = a.device.index;
    const ops::Bf16PlanKey key =
        grouped_key(ops::bf16_grouped_plan_rows(ops::GemmKind::kMasked, m_max, gb.groups, expected_m), gb.n, k,
                    gb.mn_major, ops::GemmKind::kMasked, gb.groups, 0, device);
    const ops::Bf16Plan& plan = ops::bf16_plan(key, kOp);
    ops::launch_bf16_gemm(plan, grouped_params(plan.config, a, gb.groups * m_max, b, gb, d, m_max, masked_m), stream,
                          device);
}

namespace {

void k_grouped(const char* kOp, const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef& c,
               const std::vector<std::int64_t>& ks, const TensorRef& ks_tensor, jit::Family family, Stream stream) {
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d},
                           {"grouped_layout", &ks_tensor}}) {
        ops::check_cuda({kOp, name}, *t);
        if (t != &a) ops::check_same_device({kOp, name}, *t, a, "a");
    }
    ops::check_ndim({kOp, "a"}, a, {2});
    ops::check_ndim({kOp, "b"}, b, {2});
    ops::check_ndim({kOp, "d"}, d, {3});
    ops::check_dtype({kOp, "a"}, a, {DType::kBFloat16});
    ops::check_dtype({kOp, "b"}, b, {DType::kBFloat16});
    ops::check_dtype({kOp, "d"}, d, {DType::kFloat32, DType::kBFloat16});
    const std::int64_t total_k = a.size(0), m = a.size(1), n = b.size(1);
    const std::int64_t groups = static_cast<std::int64_t>(ks.size());
    TESSERA_CHECK(groups > 0 && groups <= kMaxKGroups, kOp, ": argument 'ks_cpu': expected 1 to ", kMaxKGroups,
                  " groups, got ", groups);
    std::int64_t sum = 0;
    for (std::size_t g = 0; g < ks.size(); ++g) {
        TESSERA_CHECK(ks[g] >= 0 && ks[g] % 128 == 0, kOp, ": argument 'ks_cpu': expected every K >= 0 and a "
                      "multiple of 128, got ", ks[g], " at index ", g);
        sum += ks[g];
    }
    TESSERA_CHECK(b.size(0) == total_k && sum == total_k, kOp, ": arguments 'a', 'b': expected [sum K, M] and [sum K, "
                  "N] with sum K = ", sum, " (from ks_cpu), got shapes ", ops::shape_string(a), " and ",
                  ops::shape_string(b));
    TESSERA_CHECK(d.size(0) == groups && d.size(1) == m && d.size(2) == n, kOp, ": argument 'd': expected shape [",
                  groups, ", ", m, ", ", n, "], got ", ops::shape_string(d));
    ops::check_int32_vector(kOp, "grouped_layout", ks_tensor, groups, "the K of each group");
    TESSERA_CHECK(d.is_contiguous(), kOp, ": argument 'd': expected a contiguous tensor, got strides ",
                  ops::strides_string(d));
    if (m == 0 || n == 0) return;
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}}) {
        TESSERA_CHECK(t->stride(1) == 1 && (t->stride(0) * 2) % 16 == 0, kOp, ": argument '", name,
                      "': expected row-major [sum K, MN] with 16-byte rows (MN-major), got strides ",
                      ops::strides_string(*t));
        TESSERA_CHECK(reinterpret_cast<std::uintptr_t>(t->data) % 16 == 0 || sum == 0, kOp, ": argument '", name,
                      "': expected a 16-byte aligned data pointer (TMA), got ", t->data);
    }
    ops::check_bf16_output(kOp, d, n);
    ops::check_c(kOp, c, d);
    if (sum == 0) {  // every group empty: D = C
        ops::copy_c_into_d(c, d, stream);
        return;
    }
    const int device = a.device.index;
    const bool out_f32 = d.dtype == DType::kFloat32;
    const ops::Bf16PlanKey key{m,  n,      ops::kKGroupedPlanK, true, true, out_f32, true, ops::GemmKind::kKGrouped,
                               static_cast<int>(groups), 0, ops::plan_num_sms(device), device,
                               options().block_n_multiple, family};
    const ops::Bf16Plan& plan = ops::bf16_plan(key, kOp);
    const heuristics::Bf16GemmConfig& cfg = plan.config;
    ops::Bf16GemmParams base{};
    base.tensor_map_a = ops::bf16_operand_map(a.data, true, m, total_k, a.stride(0), cfg.block_m);
    base.tensor_map_b = ops::bf16_operand_map(b.data, true, n, total_k, b.stride(0), cfg.block_n);
    base.tensor_map_d = ops::d_store_map(d, cfg.store_box_n, cfg.swizzle_d_bytes);
    ops::set_gemm_dims(base, m, n, 0, d);
    base.num_groups = static_cast<std::uint32_t>(groups);
    // The kernel's KGroupedParams: BaseParams, then uint32 group_k[G] and group_sf_k0[G], padded to 64 bytes.
    std::vector<std::uint32_t> tail(2 * ks.size());
    std::uint32_t start = 0;
    for (std::size_t g = 0; g < ks.size(); ++g) {
        tail[g] = static_cast<std::uint32_t>(ks[g]);
        tail[ks.size() + g] = start;
        start += static_cast<std::uint32_t>(ks[g] / 128);
    }
    const std::size_t bytes = static_cast<std::size_t>(ops::align_up(sizeof(base) + 4 * tail.size(), 64));
    std::vector<std::uint64_t> params(bytes / 8, 0);
    std::memcpy(params.data(), &base, sizeof(base));
    std::memcpy(reinterpret_cast<unsigned char*>(params.data()) + sizeof(base), tail.data(), 4 * tail.size());
    // C goes into D only now: planning (the JIT build) and the map encodings above may still throw, and a rejected
    // call must leave d untouched.
    ops::copy_c_into_d(c, d, stream);
    ops::launch_bf16_gemm(plan, params.data(), bytes, stream, device);
}

}  // namespace
}  // namespace tessera
