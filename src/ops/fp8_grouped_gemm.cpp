// Grouped FP8 GEMMs (MoE): validate -> plan (memoized) -> tensor maps -> launch of the FP8 GEMM kernel with a
// grouped GemmKind. The kernel is the dense one; only the tile schedule and the addressing differ.
#include "tessera/fp8_grouped_gemm.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ops/fp8_gemm_common.hpp"
#include "ops/fp8_gemm_specs.hpp"
#include "ops/validate.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/error.hpp"
#include "tessera/runtime.hpp"

namespace tessera {
namespace {

using heuristics::Fp8GemmMode;
using ops::align_up;
using ops::ceil_div;
using ops::GemmKind;
using runtime::TmaSwizzle;

struct Operand {
    const char* name;
    const TensorRef* t;
};

void check_common(const char* op, std::initializer_list<Operand> operands, const TensorRef& a) {
    for (const Operand& o : operands) {
        ops::check_cuda({op, o.name}, *o.t);
        if (o.t != &a) ops::check_same_device({op, o.name}, *o.t, a, "a");
    }
}

// B [G, N, K] e4m3, K-major, groups packed so that the kernel reads it as one [G*N, K] map.
void check_grouped_b(const char* op, const TensorRef& b, std::int64_t k) {
    ops::check_ndim({op, "b"}, b, {3});
    ops::check_dtype({op, "b"}, b, {DType::kFloat8E4M3});
    TESSERA_CHECK(b.size(2) == k, op, ": argument 'b': expected [G, N, K] with K = ", k, " (from a), got shape ",
                  ops::shape_string(b));
    ops::check_tma_operand({op, "b"}, b);
    TESSERA_CHECK(b.size(0) <= 1 || b.stride(0) == b.size(1) * b.stride(1), op,
                  ": argument 'b': expected packed groups (stride(0) == N * stride(1)), got strides ",
                  ops::strides_string(b));
}

void check_grouped_sfb(const char* op, const TensorRef& sfb, std::int64_t groups, std::int64_t n, std::int64_t sf_k) {
    ops::check_dtype({op, "sfb"}, sfb, {DType::kFloat32});
    TESSERA_CHECK(sfb.ndim == 3 && sfb.size(0) == groups && sfb.size(1) == ceil_div(n, 128) && sfb.size(2) == sf_k,
                  op, ": argument 'sfb': expected shape [", groups, ", ", ceil_div(n, 128), ", ", sf_k,
                  "] (per 128x128 block of each group's B), got ", ops::shape_string(sfb));
}

// a [G, M, K] e4m3, b [G, N, K] packed, d [G, M, N] BF16 (masked and batched): returns G, M, K, N.
struct Shape3 {
    std::int64_t groups, m, k, n;
};
Shape3 check_three_d_operands(const char* op, const TensorRef& a, const TensorRef& b, const TensorRef& d) {
    ops::check_ndim({op, "a"}, a, {3});
    ops::check_dtype({op, "a"}, a, {DType::kFloat8E4M3});
    const std::int64_t groups = a.size(0), m = a.size(1), k = a.size(2);
    check_grouped_b(op, b, k);
    const std::int64_t n = b.size(1);
    TESSERA_CHECK(b.size(0) == groups, op, ": argument 'b': expected ", groups, " groups (from a), got shape ",
                  ops::shape_string(b));
    ops::check_ndim({op, "d"}, d, {3});
    ops::check_dtype({op, "d"}, d, {DType::kBFloat16});
    TESSERA_CHECK(d.size(0) == groups && d.size(1) == m && d.size(2) == n, op, ": argument 'd': expected shape [",
                  groups, ", ", m, ", ", n, "], got ", ops::shape_string(d));
    return {groups, m, k, n};
}

void check_n_k(const char* op, std::int64_t n, std::int64_t k) {
    ops::check_tma_k({op, "a"}, k);
    ops::check_tma_n({op, "d"}, n, 8);
}

// The maps every m-grouped kind shares: B [G*N, K] and D (rows x N BF16) with the config's boxes.
void encode_b_and_d(ops::Fp8GemmParams& params, const heuristics::Fp8GemmConfig& c, const TensorRef& b,
                    std::int64_t groups, std::int64_t n, std::int64_t k, const TensorRef& d, std::int64_t d_rows,
                    std::int64_t ld_d) {
    params.tensor_map_b = runtime::encode_tma_2d(ops::map_2d(b.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k, groups * n,
                                                             b.stride(-2), 128, c.block_n, TmaSwizzle::k128B));
    params.tensor_map_d = runtime::encode_tma_2d(ops::map_2d(d.data, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, n, d_rows,
                                                             ld_d, c.store_box_n, 64,
                                                             static_cast<TmaSwizzle>(c.swizzle_d_bytes)));
    params.d = d.data;
    params.ld_d = static_cast<std::uint32_t>(ld_d);
    params.n = static_cast<std::uint32_t>(n);
    params.k = static_cast<std::uint32_t>(k);
    params.num_groups = static_cast<std::uint32_t>(groups);
}

runtime::TmaDesc2d sfa_map(const TensorRef& sfa, std::int64_t mn, std::int64_t outer, int box) {
    return ops::map_2d(sfa.data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, align_up(mn, 4), outer, align_up(mn, 4), box, 1,
                       TmaSwizzle::kNone);
}

// Plan keys. Per-row ids: one problem of M_total rows with BLOCK_M fixed by the alignment. Psum and masked: G
// problems of about expected_m rows. K-grouped: G problems of M x N with K per group (dynamic).
ops::Fp8PlanKey contiguous_key(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t groups, bool psum,
                               std::int64_t expected_m, int block_m, int num_sms, int device) {
    if (!psum) return {m, n, k, Fp8GemmMode::k1D2D, GemmKind::kContiguous, 1, block_m, num_sms, device};
    const std::int64_t rows = std::max<std::int64_t>(1, expected_m > 0 ? expected_m : m / groups);
    return {rows, n, k, Fp8GemmMode::k1D2D, GemmKind::kPsum, static_cast<int>(groups), 0, num_sms, device};
}
ops::Fp8PlanKey masked_key(std::int64_t m_max, std::int64_t n, std::int64_t k, std::int64_t groups,
                           std::int64_t expected_m, int num_sms, int device) {
    return {std::min(expected_m, m_max), n, k, Fp8GemmMode::k1D2D, GemmKind::kMasked, static_cast<int>(groups), 0,
            num_sms, device};
}
ops::Fp8PlanKey k_grouped_key(std::int64_t m, std::int64_t n, std::int64_t groups, int num_sms, int device) {
    return {m, n, 0, Fp8GemmMode::k1D1D, GemmKind::kKGrouped, static_cast<int>(groups), 0, num_sms, device};
}

}  // namespace

namespace ops {

Fp8ProblemPlan plan_fp8_problem(const aot::Fp8Problem& p, const char* op, int max_smem_bytes) {
    using aot::Fp8Kind;
    TESSERA_CHECK(p.kind >= Fp8Kind::kDense && p.kind <= Fp8Kind::kKGrouped, op,
                  ": argument 'kind': expected dense, contiguous, psum, masked or kgrouped, got ",
                  static_cast<int>(p.kind));
    const bool dense = p.kind == Fp8Kind::kDense, kgrouped = p.kind == Fp8Kind::kKGrouped;
    const bool fp32_out = kgrouped || (dense && p.recipe == Fp8Recipe::k1D1D);
    // Kernel fields and kernel parameters hold 32-bit values.
    constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
    for (auto [name, v] : {std::pair<const char*, std::int64_t>{"m", p.m}, {"n", p.n}, {"k", p.k},
                           {"groups", p.groups}, {"expected_m", p.expected_m}})
        TESSERA_CHECK(v <= kMax, op, ": argument '", name, "': expected at most ", kMax, ", got ", v);
    TESSERA_CHECK(p.m > 0, op, ": argument 'm': expected M > 0, got M = ", p.m);
    if (kgrouped)
        TESSERA_CHECK(p.k == 0, op, ": argument 'k': expected 0 for kgrouped (each group's K is a run-time value), ",
                      "got K = ", p.k);
    else
        check_tma_k({op, "k"}, p.k);
    check_tma_n({op, "n"}, p.n, fp32_out ? 4 : 8);
    TESSERA_CHECK(dense ? p.groups == 1 : p.groups > 0, op, ": argument 'groups': expected ",
                  dense ? "1 for dense" : "G > 0", ", got ", p.groups);
    if (kgrouped && p.groups > kMaxKGroupedGroups)
        throw Unsupported(detail::str_cat(op, ": argument 'groups': at most ", kMaxKGroupedGroups,
                                          " groups per k-grouped call (their tensor maps travel in the kernel ",
                                          "parameters), got ", p.groups));
    const bool uses_expected = p.kind == Fp8Kind::kPsum || p.kind == Fp8Kind::kMasked;
    TESSERA_CHECK(p.expected_m >= 0 && (uses_expected || p.expected_m == 0), op, ": argument 'expected_m': expected ",
                  uses_expected ? ">= 0" : "0 (only psum and masked take a hint)", ", got ", p.expected_m);
    const Fp8Recipe recipe = kgrouped ? Fp8Recipe::k1D1D : dense ? p.recipe : Fp8Recipe::k1D2D;
    TESSERA_CHECK(p.recipe == recipe, op, ": argument 'recipe': expected ", kgrouped ? "1D1D" : "1D2D",
                  " (the recipe of this kind), got ", p.recipe == Fp8Recipe::k1D1D ? "1D1D" : "1D2D");
    TESSERA_CHECK(p.num_sms > 0, op, ": argument 'num_sms': expected > 0, got ", p.num_sms);

    Fp8ProblemPlan plan;
    switch (p.kind) {
    case Fp8Kind::kDense:
        plan.key = {p.m, p.n, p.k, recipe == Fp8Recipe::k1D1D ? Fp8GemmMode::k1D1D : Fp8GemmMode::k1D2D,
                    GemmKind::kDense, 1, 0, p.num_sms, 0};
        break;
    case Fp8Kind::kContiguous:
        plan.key = contiguous_key(p.m, p.n, p.k, p.groups, false, 0, contiguous_block_m(op), p.num_sms, 0);
        break;
    case Fp8Kind::kPsum: plan.key = contiguous_key(p.m, p.n, p.k, p.groups, true, p.expected_m, 0, p.num_sms, 0); break;
    case Fp8Kind::kMasked:
        plan.key = masked_key(p.m, p.n, p.k, p.groups, p.expected_m > 0 ? p.expected_m : p.m, p.num_sms, 0);
        break;
    case Fp8Kind::kKGrouped: plan.key = k_grouped_key(p.m, p.n, p.groups, p.num_sms, 0); break;
    }
    plan.problem = fp8_problem(plan.key, max_smem_bytes);
    plan.config = heuristics::choose_fp8_gemm_config(plan.problem);
    plan.spec = fp8_spec(plan.key, plan.config);
    return plan;
}

}  // namespace ops

Fp8GemmStatus m_grouped_fp8_gemm_nt_contiguous(const TensorRef& a, const TensorRef& sfa, const TensorRef& b,
                                               const TensorRef& sfb, const TensorRef& d,
                                               const TensorRef& grouped_layout, bool use_psum_layout,
                                               std::int64_t expected_m, Stream stream) {
    constexpr const char* kOp = "m_grouped_fp8_gemm_nt_contiguous";
    check_common(kOp, {{"a", &a}, {"sfa", &sfa}, {"b", &b}, {"sfb", &sfb}, {"d", &d}, {"grouped_layout", &grouped_layout}},
                 a);
    ops::check_ndim({kOp, "a"}, a, {2});
    ops::check_dtype({kOp, "a"}, a, {DType::kFloat8E4M3});
    const std::int64_t m = a.size(0), k = a.size(1);
    check_grouped_b(kOp, b, k);
    const std::int64_t groups = b.size(0), n = b.size(1);
    ops::check_ndim({kOp, "d"}, d, {2});
    ops::check_dtype({kOp, "d"}, d, {DType::kBFloat16});
    TESSERA_CHECK(d.size(0) == m && d.size(1) == n, kOp, ": argument 'd': expected shape [", m, ", ", n, "], got ",
                  ops::shape_string(d));
    TESSERA_CHECK(groups > 0, kOp, ": argument 'b': expected at least one group, got shape ", ops::shape_string(b));
    ops::check_int32_vector(kOp, "grouped_layout", grouped_layout, use_psum_layout ? groups : m,
                       use_psum_layout ? "the end row of each group" : "the expert of each row of a");
    const std::int64_t sf_k = ceil_div(k, 128);
    ops::check_dtype({kOp, "sfa"}, sfa, {DType::kFloat32});
    TESSERA_CHECK(sfa.ndim == 2 && sfa.size(0) == m && sfa.size(1) == sf_k, kOp, ": argument 'sfa': expected shape [",
                  m, ", ", sf_k, "] (one scale per row and 128 K), got ", ops::shape_string(sfa));
    check_grouped_sfb(kOp, sfb, groups, n, sf_k);
    TESSERA_CHECK(expected_m >= 0, kOp, ": argument 'expected_m': expected >= 0, got ", expected_m);
    if (m == 0) return Fp8GemmStatus::kLaunched;
    check_n_k(kOp, n, k);
    ops::check_tma_operand({kOp, "a"}, a);
    ops::check_tma_operand({kOp, "d"}, d);
    const int alignment = get_mk_alignment_for_contiguous_layout();
    const int block_m = use_psum_layout ? 0 : ops::contiguous_block_m(kOp);
    if (!ops::sf_mn_major_aligned(sfa, m, sf_k)) return Fp8GemmStatus::kNeedsSfaLayout;
    if (!sfb.is_contiguous()) return Fp8GemmStatus::kNeedsSfbLayout;

    const int device = a.device.index;
    const ops::Fp8PlanKey key =
        contiguous_key(m, n, k, groups, use_psum_layout, expected_m, block_m, ops::plan_num_sms(device), device);
    const ops::Fp8Plan& plan = ops::fp8_plan(key, kOp);
    const heuristics::Fp8GemmConfig& c = plan.config;
    ops::Fp8GemmParams params{};
    params.tensor_map_a = runtime::encode_tma_2d(ops::map_2d(a.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k, m,
                                                             a.stride(0), 128, c.block_m, TmaSwizzle::k128B));
    params.tensor_map_sfa = runtime::encode_tma_2d(sfa_map(sfa, m, sf_k, c.block_m));
    encode_b_and_d(params, c, b, groups, n, k, d, m, d.stride(0));
    params.sfb = static_cast<const float*>(sfb.data);
    params.m = static_cast<std::uint32_t>(m);
    params.grouped_layout = static_cast<const std::int32_t*>(grouped_layout.data);
    params.alignment = static_cast<std::uint32_t>(alignment);
    ops::launch_fp8_gemm(*plan.kernel, c, &params, sizeof(params), stream, device);
    return Fp8GemmStatus::kLaunched;
}

Fp8GemmStatus m_grouped_fp8_gemm_nt_masked(const TensorRef& a, const TensorRef& sfa, const TensorRef& b,
                                           const TensorRef& sfb, const TensorRef& d, const TensorRef& masked_m,
                                           std::int64_t expected_m, Stream stream) {
    constexpr const char* kOp = "m_grouped_fp8_gemm_nt_masked";
    check_common(kOp, {{"a", &a}, {"sfa", &sfa}, {"b", &b}, {"sfb", &sfb}, {"d", &d}, {"masked_m", &masked_m}}, a);
    const auto [groups, m_max, k, n] = check_three_d_operands(kOp, a, b, d);
    TESSERA_CHECK(groups > 0 && m_max > 0, kOp, ": argument 'a': expected G > 0 and M_max > 0, got shape ",
                  ops::shape_string(a));
    ops::check_int32_vector(kOp, "masked_m", masked_m, groups, "the valid rows of each group");
    TESSERA_CHECK(expected_m > 0, kOp, ": argument 'expected_m': expected > 0 (rows per group, a hint), got ",
                  expected_m);
    const std::int64_t sf_k = ceil_div(k, 128);
    ops::check_dtype({kOp, "sfa"}, sfa, {DType::kFloat32});
    TESSERA_CHECK(sfa.ndim == 3 && sfa.size(0) == groups && sfa.size(1) == m_max && sfa.size(2) == sf_k, kOp,
                  ": argument 'sfa': expected shape [", groups, ", ", m_max, ", ", sf_k, "], got ",
                  ops::shape_string(sfa));
    check_grouped_sfb(kOp, sfb, groups, n, sf_k);
    check_n_k(kOp, n, k);
    ops::check_tma_operand({kOp, "a"}, a);
    ops::check_tma_operand({kOp, "d"}, d);
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"d", &d}})
        TESSERA_CHECK(groups <= 1 || t->stride(0) == m_max * t->stride(1), kOp, ": argument '", name,
                      "': expected packed groups (stride(0) == M_max * stride(1)), got strides ",
                      ops::strides_string(*t));
    const std::int64_t m_aligned = align_up(m_max, 4);
    const bool sfa_ok = is_mn_major_tma_aligned(sfa) && reinterpret_cast<std::uintptr_t>(sfa.data) % 16 == 0 &&
                        (groups <= 1 || sfa.stride(0) == m_aligned * sf_k);
    if (!sfa_ok) return Fp8GemmStatus::kNeedsSfaLayout;
    if (!sfb.is_contiguous()) return Fp8GemmStatus::kNeedsSfbLayout;

    const int device = a.device.index;
    const ops::Fp8PlanKey key = masked_key(m_max, n, k, groups, expected_m, ops::plan_num_sms(device), device);
    const ops::Fp8Plan& plan = ops::fp8_plan(key, kOp);
    const heuristics::Fp8GemmConfig& c = plan.config;
    ops::Fp8GemmParams params{};
    params.tensor_map_a = runtime::encode_tma_2d(ops::map_2d(a.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k,
                                                             groups * m_max, a.stride(1), 128, c.block_m,
                                                             TmaSwizzle::k128B));
    // SFA of group g, k-block kb is row g*sf_k + kb of one [G*sf_k][align(M_max,4)] map: rows past M_max read as 0.
    params.tensor_map_sfa = runtime::encode_tma_2d(sfa_map(sfa, m_max, groups * sf_k, c.block_m));
    encode_b_and_d(params, c, b, groups, n, k, d, groups * m_max, d.stride(1));
    params.sfb = static_cast<const float*>(sfb.data);
    params.m = static_cast<std::uint32_t>(m_max);
    params.grouped_layout = static_cast<const std::int32_t*>(masked_m.data);
    ops::launch_fp8_gemm(*plan.kernel, c, &params, sizeof(params), stream, device);
    return Fp8GemmStatus::kLaunched;
}

Fp8GemmStatus fp8_bmm_nt(const TensorRef& a, const TensorRef& sfa, const TensorRef& b, const TensorRef& sfb,
                         const TensorRef& d, Stream stream) {
    constexpr const char* kOp = "fp8_einsum";
    check_common(kOp, {{"a", &a}, {"sfa", &sfa}, {"b", &b}, {"sfb", &sfb}, {"d", &d}}, a);
    const auto [groups, m, k, n] = check_three_d_operands(kOp, a, b, d);
    const std::int64_t sf_k = ceil_div(k, 128);
    ops::check_dtype({kOp, "sfa"}, sfa, {DType::kFloat32});
    TESSERA_CHECK(sfa.ndim == 3 && sfa.size(0) == groups && sfa.size(1) == m && sfa.size(2) == sf_k, kOp,
                  ": argument 'sfa': expected shape [", groups, ", ", m, ", ", sf_k, "], got ", ops::shape_string(sfa));
    check_grouped_sfb(kOp, sfb, groups, n, sf_k);
    if (groups == 0 || m == 0 || n == 0) return Fp8GemmStatus::kLaunched;
    check_n_k(kOp, n, k);
    ops::check_tma_operand({kOp, "a"}, a);
    ops::check_tma_operand({kOp, "d"}, d);
    for (auto [name, t, bytes] : {std::tuple<const char*, const TensorRef*, int>{"a", &a, 1}, {"d", &d, 2}})
        TESSERA_CHECK(groups <= 1 || (t->stride(0) * bytes) % 16 == 0, kOp, ": argument '", name,
                      "': expected a batch stride (stride(0)) of a multiple of 16 bytes (TMA), got strides ",
                      ops::strides_string(*t));
    const bool sfa_ok = is_mn_major_tma_aligned(sfa) && reinterpret_cast<std::uintptr_t>(sfa.data) % 16 == 0 &&
                        (groups <= 1 || sfa.stride(0) == align_up(m, 4) * sf_k);
    if (!sfa_ok) return Fp8GemmStatus::kNeedsSfaLayout;
    if (!sfb.is_contiguous()) return Fp8GemmStatus::kNeedsSfbLayout;

    const int device = a.device.index;
    const ops::Fp8PlanKey key{m, n, k, Fp8GemmMode::k1D2D, GemmKind::kBatched, static_cast<int>(groups), 0,
                              ops::plan_num_sms(device), device};
    const ops::Fp8Plan& plan = ops::fp8_plan(key, kOp);
    const heuristics::Fp8GemmConfig& c = plan.config;
    ops::Fp8GemmParams params{};
    // A and D: 3-D maps (the groups at free strides); SFA as masked's, [G*sf_k][align(M,4)]; B packed [G*N][K].
    params.tensor_map_a = runtime::encode_tma_3d(
        ops::map_2d(a.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k, m, a.stride(1), 128, c.block_m, TmaSwizzle::k128B),
        static_cast<std::uint64_t>(groups), static_cast<std::uint64_t>(a.stride(0)));
    params.tensor_map_sfa = runtime::encode_tma_2d(sfa_map(sfa, m, groups * sf_k, c.block_m));
    encode_b_and_d(params, c, b, groups, n, k, d, m, d.stride(1));
    params.tensor_map_d = runtime::encode_tma_3d(
        ops::map_2d(d.data, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, n, m, d.stride(1), c.store_box_n, 64,
                    static_cast<TmaSwizzle>(c.swizzle_d_bytes)),
        static_cast<std::uint64_t>(groups), static_cast<std::uint64_t>(d.stride(0) * 2));
    params.sfb = static_cast<const float*>(sfb.data);
    params.m = static_cast<std::uint32_t>(m);
    ops::launch_fp8_gemm(*plan.kernel, c, &params, sizeof(params), stream, device);
    return Fp8GemmStatus::kLaunched;
}

Fp8GemmStatus k_grouped_fp8_gemm_nt_contiguous(const TensorRef& a, const TensorRef& sfa, const TensorRef& b,
                                               const TensorRef& sfb, const TensorRef& d,
                                               std::span<const std::int64_t> ks, const TensorRef& grouped_layout,
                                               Stream stream, const TensorRef* c_in) {
    constexpr const char* kOp = "k_grouped_fp8_gemm_nt_contiguous";
    check_common(kOp, {{"a", &a}, {"sfa", &sfa}, {"b", &b}, {"sfb", &sfb}, {"d", &d}, {"grouped_layout", &grouped_layout}},
                 a);
    ops::check_dtype({kOp, "a"}, a, {DType::kFloat8E4M3});
    ops::check_dtype({kOp, "b"}, b, {DType::kFloat8E4M3});
    ops::check_ndim({kOp, "d"}, d, {3});
    ops::check_dtype({kOp, "d"}, d, {DType::kFloat32});
    const std::int64_t groups = d.size(0), m = d.size(1), n = d.size(2);
    TESSERA_CHECK(static_cast<std::int64_t>(ks.size()) == groups && groups > 0, kOp,
                  ": argument 'ks': expected one K per group (", groups, " groups, from d), got ", ks.size());
    if (groups > kMaxKGroupedGroups)
        throw Unsupported(detail::str_cat(kOp, ": at most ", kMaxKGroupedGroups, " groups per call (their tensor maps ",
                                          "travel in the kernel parameters), got ", groups));
    std::int64_t sum_k = 0;
    for (std::size_t g = 0; g < ks.size(); ++g) {
        TESSERA_CHECK(ks[g] >= 0 && ks[g] % 128 == 0, kOp, ": argument 'ks': expected multiples of 128 (>= 0), got ",
                      ks[g], " for group ", g);
        sum_k += ks[g];
    }
    ops::check_int32_vector(kOp, "grouped_layout", grouped_layout, groups, "the K of each group");
    for (auto [name, t, rows] : {std::tuple<const char*, const TensorRef*, std::int64_t>{"a", &a, m}, {"b", &b, n}}) {
        TESSERA_CHECK(t->is_contiguous() && t->numel() == rows * sum_k, kOp, ": argument '", name,
                      "': expected a contiguous tensor of ", rows, " x sum(ks) = ", rows * sum_k, " elements, got shape ",
                      ops::shape_string(*t), " strides ", ops::strides_string(*t));
        TESSERA_CHECK(reinterpret_cast<std::uintptr_t>(t->data) % 16 == 0, kOp, ": argument '", name,
                      "': expected a 16-byte aligned data pointer (TMA), got ", t->data);
    }
    TESSERA_CHECK(d.is_contiguous(), kOp, ": argument 'd': expected contiguous [G, M, N], got strides ",
                  ops::strides_string(d));
    const std::int64_t sf_k = sum_k / 128;
    ops::check_dtype({kOp, "sfa"}, sfa, {DType::kFloat32});
    ops::check_dtype({kOp, "sfb"}, sfb, {DType::kFloat32});
    TESSERA_CHECK(sfa.ndim == 2 && sfa.size(0) == m && sfa.size(1) == sf_k, kOp, ": argument 'sfa': expected shape [",
                  m, ", ", sf_k, "] (sum(ks)/128 scales per row), got ", ops::shape_string(sfa));
    TESSERA_CHECK(sfb.ndim == 2 && sfb.size(0) == n && sfb.size(1) == sf_k, kOp, ": argument 'sfb': expected shape [",
                  n, ", ", sf_k, "] (sum(ks)/128 scales per row), got ", ops::shape_string(sfb));
    if (c_in != nullptr) ops::check_c(kOp, *c_in, d);
    const bool copy_c = c_in != nullptr && c_in->data != d.data;
    if (m == 0 || n == 0 || sum_k == 0) {  // D = C
        if (copy_c && d.numel() > 0) ops::copy_c_into_d(*c_in, d, stream);
        return Fp8GemmStatus::kLaunched;
    }
    TESSERA_CHECK(n % 4 == 0, kOp, ": argument 'd': expected N a multiple of 4 (16-byte FP32 rows), got N = ", n);
    if (!ops::sf_mn_major_aligned(sfa, m, sf_k)) return Fp8GemmStatus::kNeedsSfaLayout;
    if (!ops::sf_mn_major_aligned(sfb, n, sf_k)) return Fp8GemmStatus::kNeedsSfbLayout;

    const int device = a.device.index;
    const ops::Fp8PlanKey key = k_grouped_key(m, n, groups, ops::plan_num_sms(device), device);
    const ops::Fp8Plan& plan = ops::fp8_plan(key, kOp);
    const heuristics::Fp8GemmConfig& c = plan.config;
    ops::Fp8GemmParams params{};
    params.tensor_map_sfa = runtime::encode_tma_2d(sfa_map(sfa, m, sf_k, c.block_m));
    params.tensor_map_sfb = runtime::encode_tma_2d(sfa_map(sfb, n, sf_k, c.block_n));
    params.tensor_map_d = runtime::encode_tma_2d(ops::map_2d(d.data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, n, groups * m,
                                                             n, c.store_box_n, 64,
                                                             static_cast<TmaSwizzle>(c.swizzle_d_bytes)));
    params.d = d.data;
    params.ld_d = static_cast<std::uint32_t>(n);
    params.m = static_cast<std::uint32_t>(m);
    params.n = static_cast<std::uint32_t>(n);
    params.num_groups = static_cast<std::uint32_t>(groups);
    std::vector<CUtensorMap> maps_a(groups), maps_b(groups);
    std::vector<std::uint32_t> group_k(groups), group_sf_k0(groups);
    std::int64_t k_offset = 0;
    for (std::int64_t g = 0; g < groups; ++g) {
        const std::int64_t kg = ks[g];
        group_k[g] = static_cast<std::uint32_t>(kg);
        group_sf_k0[g] = static_cast<std::uint32_t>(k_offset / 128);
        if (kg > 0) {  // an empty group has no tiles; its maps stay zero and are never read
            maps_a[g] = runtime::encode_tma_2d(ops::map_2d(static_cast<const std::uint8_t*>(a.data) + m * k_offset,
                                                           CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, kg, m, kg, 128,
                                                           c.block_m, TmaSwizzle::k128B));
            maps_b[g] = runtime::encode_tma_2d(ops::map_2d(static_cast<const std::uint8_t*>(b.data) + n * k_offset,
                                                           CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, kg, n, kg, 128,
                                                           c.block_n, TmaSwizzle::k128B));
        } else {
            maps_a[g] = maps_b[g] = CUtensorMap{};
        }
        k_offset += kg;
    }
    const ops::KGroupedParamBytes bytes(params, maps_a, maps_b, group_k, group_sf_k0);
    // The kernel reduce-adds its tiles into d: D = C + A·Bᵀ needs C there first (after every check and status
    // return above, so that a refused call leaves d untouched).
    if (copy_c) ops::copy_c_into_d(*c_in, d, stream);
    ops::launch_fp8_gemm(*plan.kernel, c, bytes.data(), bytes.size(), stream, device);
    return Fp8GemmStatus::kLaunched;
}

std::string fp8_grouped_gemm_config(Fp8GroupedKind kind, std::int64_t m, std::int64_t n, std::int64_t k,
                                    std::int64_t groups, std::int64_t expected_m, int device) {
    constexpr const char* op = "fp8_grouped_gemm_config";
    TESSERA_CHECK(m > 0 && n > 0 && groups > 0 && (k > 0 || kind == Fp8GroupedKind::kKGrouped) && expected_m >= 0,
                  op, ": expected positive m, n, k, groups and expected_m >= 0, got m=", m, " n=", n, " k=", k,
                  " groups=", groups, " expected_m=", expected_m);
    // The shapes the GEMMs accept (their TMA checks), so a query never compiles a kernel that cannot be launched.
    const bool kgrouped = kind == Fp8GroupedKind::kKGrouped;
    if (!kgrouped) ops::check_tma_k({op, "k"}, k);  // k-grouped: K is per group, not part of the query
    ops::check_tma_n({op, "n"}, n, kgrouped ? 4 : 8);
    const int num_sms = ops::plan_num_sms(device);
    ops::Fp8PlanKey key{};
    switch (kind) {
    case Fp8GroupedKind::kContiguous:
        key = contiguous_key(m, n, k, groups, false, expected_m, ops::contiguous_block_m(op), num_sms, device);
        break;
    case Fp8GroupedKind::kPsum: key = contiguous_key(m, n, k, groups, true, expected_m, 0, num_sms, device); break;
    case Fp8GroupedKind::kMasked:
        key = masked_key(m, n, k, groups, expected_m > 0 ? expected_m : m, num_sms, device);
        break;
    case Fp8GroupedKind::kKGrouped: key = k_grouped_key(m, n, groups, num_sms, device); break;
    }
    return ops::fp8_plan(key, op).config.describe();  // fp8_plan makes the device current before loading
}

}  // namespace tessera
