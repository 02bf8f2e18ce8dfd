// fp8_gemm_nt: validate -> plan (memoized per shape) -> tensor maps -> launch.
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

}  // namespace

Fp8GemmStatus fp8_gemm_nt(const TensorRef& a, const TensorRef& sfa, const TensorRef& b, const TensorRef& sfb,
                          const TensorRef& d, Fp8Recipe recipe, Stream stream) {
    const bool fp32_out = recipe == Fp8Recipe::k1D1D;
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d}}) {
        ops::check_ndim({kOp, name}, *t, {2});
        ops::check_cuda({kOp, name}, *t);
    }
    ops::check_dtype({kOp, "a"}, a, {DType::kFloat8E4M3});
    ops::check_dtype({kOp, "b"}, b, {DType::kFloat8E4M3});
    ops::check_dtype({kOp, "d"}, d, {fp32_out ? DType::kFloat32 : DType::kBFloat16});
    ops::check_same_device({kOp, "b"}, b, a, "a");
    ops::check_same_device({kOp, "d"}, d, a, "a");
    ops::check_same_device({kOp, "sfa"}, sfa, a, "a");
    ops::check_same_device({kOp, "sfb"}, sfb, a, "a");
    const auto [m, n, k] = ops::check_nt_shapes(kOp, a, b, d);
    ops::check_dtype({kOp, "sfa"}, sfa, {DType::kFloat32});
    ops::check_dtype({kOp, "sfb"}, sfb, {DType::kFloat32});
    const std::int64_t sf_k = ceil_div(k, 128);
    TESSERA_CHECK(sfa.ndim == 2 && sfa.size(0) == m && sfa.size(1) == sf_k, kOp, ": argument 'sfa': expected shape [",
                  m, ", ", sf_k, "] (one scale per row and 128 K), got ", ops::shape_string(sfa));
    const std::int64_t sfb_rows = fp32_out ? n : ceil_div(n, 128);
    TESSERA_CHECK(sfb.ndim == 2 && sfb.size(0) == sfb_rows && sfb.size(1) == sf_k, kOp,
                  ": argument 'sfb': expected shape [", sfb_rows, ", ", sf_k, "] (", fp32_out ? "per row" : "per 128x128 block",
                  " of b), got ", ops::shape_string(sfb));
    if (m == 0 || n == 0) return Fp8GemmStatus::kLaunched;
    ops::check_tma_k({kOp, "a"}, k);
    ops::check_tma_n({kOp, "d"}, n, fp32_out ? 4 : 8);
    ops::check_tma_operand({kOp, "a"}, a);
    ops::check_tma_operand({kOp, "b"}, b);
    ops::check_tma_operand({kOp, "d"}, d);
    TESSERA_CHECK(d.stride(-1) == 1, kOp, ": argument 'd': expected row-major (stride(-1) == 1), got strides ",
                  ops::strides_string(d));
    if (!ops::sf_mn_major_aligned(sfa, m, sf_k)) return Fp8GemmStatus::kNeedsSfaLayout;
    if (fp32_out ? !ops::sf_mn_major_aligned(sfb, n, sf_k) : !(sfb.is_contiguous())) return Fp8GemmStatus::kNeedsSfbLayout;

    const int device = a.device.index;
    const Fp8GemmMode mode = fp32_out ? Fp8GemmMode::k1D1D : Fp8GemmMode::k1D2D;
    ops::Fp8PlanKey key{m, n, k, mode, GemmKind::kDense, 1, 0, ops::plan_num_sms(device), device};
    const ops::Fp8Plan& plan = ops::fp8_plan(key, kOp);
    const heuristics::Fp8GemmConfig& c = plan.config;
    using runtime::TmaSwizzle;
    using ops::map_2d;
    ops::Fp8GemmParams params{};
    const int a_rows = c.load_rows_a > 0 ? c.load_rows_a : c.block_m;  // rows of A (and SFA) per stage's box
    params.tensor_map_a = runtime::encode_tma_2d(map_2d(a.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k, m, a.stride(0),
                                                        128, a_rows, TmaSwizzle::k128B));
    params.tensor_map_b = runtime::encode_tma_2d(map_2d(b.data, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k, n, b.stride(0),
                                                        128, c.block_n, TmaSwizzle::k128B));
    params.tensor_map_sfa = runtime::encode_tma_2d(map_2d(sfa.data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                                                          align_up(m, 4), sf_k, align_up(m, 4), a_rows, 1,
                                                          TmaSwizzle::kNone));
    if (fp32_out)
        params.tensor_map_sfb = runtime::encode_tma_2d(map_2d(sfb.data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                                                              align_up(n, 4), sf_k, align_up(n, 4), c.block_n, 1,
                                                              TmaSwizzle::kNone));
    else
        params.sfb = static_cast<const float*>(sfb.data);
    params.tensor_map_d = ops::d_store_map(d, c.store_box_n, c.swizzle_d_bytes);
    ops::set_gemm_dims(params, m, n, k, d);
    // Split-K kernels own one tile per cluster: the grid must cover every tile exactly.
    TESSERA_ASSERT(c.split_k == 1 || c.num_sms == ceil_div(m, c.block_m) * ceil_div(n, c.block_n) * c.split_k);
    ops::launch_fp8_gemm(*plan.kernel, c, &params, sizeof(params), stream, device);
    return Fp8GemmStatus::kLaunched;
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
