// fp8_gemm_nt (and its skip-head-mid variant): validate -> plan (memoized per shape) -> tensor maps -> launch.
#include "tessera/fp8_gemm.hpp"

#include "heuristics/fp8_gemm_plan.hpp"
#include "ops/fp8_gemm_common.hpp"
#include "ops/validate.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"
#include "tessera/runtime.hpp"

namespace tessera {
namespace {

using heuristics::Fp8GemmMode;
using ops::align_up;
using ops::ceil_div;
using ops::GemmKind;
constexpr const char* kOp = "fp8_gemm_nt";

// fp8_gemm_nt and its skip-head-mid variant. `d` is the full output; with head splits the product's N columns are
// spread over d's wider rows, so the shape checks see d's first N columns.
Fp8GemmStatus dense_fp8_gemm(const char* op, const TensorRef& a, const TensorRef& sfa, const TensorRef& b,
                             const TensorRef& sfb, const TensorRef& d, Fp8Recipe recipe, const TensorRef* c,
                             HeadSplits heads, Stream stream) {
    const bool fp32_out = recipe == Fp8Recipe::k1D1D;
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d}}) {
        ops::check_ndim({op, name}, *t, {2});
        ops::check_cuda({op, name}, *t);
    }
    ops::check_dtype({op, "a"}, a, {DType::kFloat8E4M3});
    ops::check_dtype({op, "b"}, b, {DType::kFloat8E4M3});
    ops::check_dtype({op, "d"}, d, {fp32_out ? DType::kFloat32 : DType::kBFloat16});
    ops::check_same_device({op, "b"}, b, a, "a");
    ops::check_same_device({op, "d"}, d, a, "a");
    ops::check_same_device({op, "sfa"}, sfa, a, "a");
    ops::check_same_device({op, "sfb"}, sfb, a, "a");
    TensorRef result = d;  // the product's [M, N] as the shape checks see it
    if (heads.mid > 0) {  // (the splits were checked by fp8_gemm_nt_skip_head_mid)
        const std::int64_t width = heads.left + heads.right, n_result = b.size(0);
        const std::int64_t n_full = n_result / width * (width + heads.mid);
        TESSERA_CHECK(d.ndim == 2 && d.size(1) == n_full, op, ": argument 'd': expected ", n_full,
                      " columns (N / (left + right) heads of left + mid + right), got shape ", ops::shape_string(d));
        result.shape[1] = n_result;
    }
    const auto [m, n, k] = ops::check_nt_shapes(op, a, b, result);
    ops::check_dtype({op, "sfa"}, sfa, {DType::kFloat32});
    ops::check_dtype({op, "sfb"}, sfb, {DType::kFloat32});
    const std::int64_t sf_k = ceil_div(k, 128);
    TESSERA_CHECK(sfa.ndim == 2 && sfa.size(0) == m && sfa.size(1) == sf_k, op, ": argument 'sfa': expected shape [",
                  m, ", ", sf_k, "] (one scale per row and 128 K), got ", ops::shape_string(sfa));
    const std::int64_t sfb_rows = fp32_out ? n : ceil_div(n, 128);
    TESSERA_CHECK(sfb.ndim == 2 && sfb.size(0) == sfb_rows && sfb.size(1) == sf_k, op,
                  ": argument 'sfb': expected shape [", sfb_rows, ", ", sf_k, "] (", fp32_out ? "per row" : "per 128x128 block",
                  " of b), got ", ops::shape_string(sfb));
    if (m == 0 || n == 0) return Fp8GemmStatus::kLaunched;
    ops::check_tma_k({op, "a"}, k);
    ops::check_tma_n({op, "d"}, n, fp32_out ? 4 : 8);
    ops::check_tma_operand({op, "a"}, a);
    ops::check_tma_operand({op, "b"}, b);
    ops::check_tma_operand({op, "d"}, d);
    TESSERA_CHECK(d.stride(-1) == 1, op, ": argument 'd': expected row-major (stride(-1) == 1), got strides ",
                  ops::strides_string(d));
    if (c != nullptr) {
        TESSERA_CHECK(fp32_out, op, ": argument 'c': accumulation needs recipe (1, 1, 128) (FP32 d), got a c with "
                      "BF16 output");
        ops::check_c(op, *c, d);
    }
    if (!ops::sf_mn_major_aligned(sfa, m, sf_k)) return Fp8GemmStatus::kNeedsSfaLayout;
    if (fp32_out ? !ops::sf_mn_major_aligned(sfb, n, sf_k) : !(sfb.is_contiguous())) return Fp8GemmStatus::kNeedsSfbLayout;

    const int device = a.device.index;
    const Fp8GemmMode mode = fp32_out ? Fp8GemmMode::k1D1D : Fp8GemmMode::k1D2D;
    ops::Fp8PlanKey key{m, n, k, mode, GemmKind::kDense, 1, 0, ops::plan_num_sms(device), device};
    key.head_left = static_cast<int>(heads.left), key.head_mid = static_cast<int>(heads.mid);
    key.head_right = static_cast<int>(heads.right);
    const ops::Fp8Plan& plan = ops::fp8_plan(key, op);
    const heuristics::Fp8GemmConfig& cfg = plan.config;
    // A store never straddles a head's parts: left and right are whole store boxes.
    TESSERA_CHECK(heads.mid == 0 || (heads.left % cfg.store_box_n == 0 && heads.right % cfg.store_box_n == 0), op,
                  ": argument 'head_splits': expected left and right to be multiples of ", cfg.store_box_n,
                  " (the kernel's store width for N = ", n, "), got (", heads.left, ", ", heads.mid, ", ", heads.right,
                  ")");
    using runtime::TmaSwizzle;
    using ops::map_2d;
    ops::Fp8GemmParams params{};
    const int a_rows = cfg.load_rows_a > 0 ? cfg.load_rows_a : cfg.block_m;  // rows of A (and SFA) per stage's box
    params.tensor_map_a = runtime::encode_tma_2d(map_2d(a.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k, m, a.stride(0),
                                                        128, a_rows, TmaSwizzle::k128B));
    params.tensor_map_b = runtime::encode_tma_2d(map_2d(b.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k, n, b.stride(0),
                                                        128, cfg.block_n, TmaSwizzle::k128B));
    params.tensor_map_sfa = runtime::encode_tma_2d(map_2d(sfa.data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                                                          align_up(m, 4), sf_k, align_up(m, 4), a_rows, 1,
                                                          TmaSwizzle::kNone));
    if (fp32_out)
        params.tensor_map_sfb = runtime::encode_tma_2d(map_2d(sfb.data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                                                              align_up(n, 4), sf_k, align_up(n, 4), cfg.block_n, 1,
                                                              TmaSwizzle::kNone));
    else
        params.sfb = static_cast<const float*>(sfb.data);
    params.tensor_map_d = ops::d_store_map(d, cfg.store_box_n, cfg.swizzle_d_bytes);
    ops::set_gemm_dims(params, m, n, k, d);
    // Split-K kernels own one tile per cluster: the grid must cover every tile exactly.
    TESSERA_ASSERT(cfg.split_k == 1 || cfg.num_sms == ceil_div(m, cfg.block_m) * ceil_div(n, cfg.block_n) * cfg.split_k);
    if (c != nullptr && c->data != d.data) ops::copy_c_into_d(*c, d, stream);
    ops::launch_fp8_gemm(*plan.kernel, cfg, &params, sizeof(params), stream, device);
    return Fp8GemmStatus::kLaunched;
}

}  // namespace

Fp8GemmStatus fp8_gemm_nt(const TensorRef& a, const TensorRef& sfa, const TensorRef& b, const TensorRef& sfb,
                          const TensorRef& d, Fp8Recipe recipe, Stream stream, const TensorRef* c) {
    return dense_fp8_gemm(kOp, a, sfa, b, sfb, d, recipe, c, {}, stream);
}

Fp8GemmStatus fp8_gemm_nt_skip_head_mid(const TensorRef& a, const TensorRef& sfa, const TensorRef& b,
                                        const TensorRef& sfb, const TensorRef& d, HeadSplits heads, Stream stream) {
    constexpr const char* op = "fp8_gemm_nt_skip_head_mid";
    // The splits, whatever mid is (mid = 0 stores as fp8_gemm_nt does). Mid columns shift every later store: whole
    // 16-byte pieces keep each store as aligned as in an ordinary D (the split-K epilogue's 4-byte pair stores would
    // fault at an odd shift).
    ops::check_ndim({op, "b"}, b, {2});
    TESSERA_CHECK(heads.left >= 0 && heads.mid >= 0 && heads.right >= 0 && heads.left + heads.right > 0 &&
                      heads.mid % 8 == 0 && b.size(0) % (heads.left + heads.right) == 0,
                  op, ": argument 'head_splits': expected (left, mid, right) >= 0 with left + right > 0 dividing N = ",
                  b.size(0), " and mid a multiple of 8 (16-byte BF16 pieces), got (", heads.left, ", ", heads.mid,
                  ", ", heads.right, ")");
    return dense_fp8_gemm(op, a, sfa, b, sfb, d, Fp8Recipe::k1D2D, nullptr, heads, stream);
}

std::string fp8_gemm_config(std::int64_t m, std::int64_t n, std::int64_t k, Fp8Recipe recipe, int device) {
    TESSERA_CHECK(m > 0 && n > 0 && k > 0, "fp8_gemm_config: expected positive m, n, k, got ", m, ", ", n, ", ", k);
    // The shapes fp8_gemm_nt accepts (its TMA checks), so a query never compiles a kernel that cannot be launched.
    ops::check_tma_k({"fp8_gemm_config", "k"}, k);
    ops::check_tma_n({"fp8_gemm_config", "n"}, n, recipe == Fp8Recipe::k1D1D ? 4 : 8);
    const Fp8GemmMode mode = recipe == Fp8Recipe::k1D1D ? Fp8GemmMode::k1D1D : Fp8GemmMode::k1D2D;
    ops::Fp8PlanKey key{m, n, k, mode, GemmKind::kDense, 1, 0, ops::plan_num_sms(device), device};
    return ops::fp8_plan(key, "fp8_gemm_config").config.describe();
}

}  // namespace tessera
