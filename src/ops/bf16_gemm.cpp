// bf16_gemm_nt: validate -> plan (memoized per problem) -> tensor maps -> launch.
#include "tessera/bf16_gemm.hpp"

#include <utility>

#include "ops/bf16_gemm_common.hpp"
#include "ops/validate.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"

namespace tessera {
namespace {

constexpr const char* kOp = "bf16_gemm_nt";

ops::Bf16PlanKey dense_key(std::int64_t m, std::int64_t n, std::int64_t k, bool mn_a, bool mn_b, bool out_f32,
                           bool accumulate, int device) {
    return {m,    n, k, mn_a, mn_b, out_f32, accumulate, ops::GemmKind::kDense, 1, 0, ops::plan_num_sms(device),
            device, options().block_n_multiple};
}

}  // namespace

void bf16_gemm_nt(const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef* c, Stream stream) {
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d}}) {
        ops::check_ndim({kOp, name}, *t, {2});
        ops::check_cuda({kOp, name}, *t);
    }
    ops::check_dtype({kOp, "a"}, a, {DType::kBFloat16});
    ops::check_dtype({kOp, "b"}, b, {DType::kBFloat16});
    ops::check_dtype({kOp, "d"}, d, {DType::kBFloat16, DType::kFloat32});
    ops::check_same_device({kOp, "b"}, b, a, "a");
    ops::check_same_device({kOp, "d"}, d, a, "a");
    const auto [m, n, k] = ops::check_nt_shapes(kOp, a, b, d);
    if (m == 0 || n == 0) return;
    TESSERA_CHECK(k > 0, kOp, ": argument 'a': expected K > 0 (an empty product is the caller's: D = C or 0), got "
                  "K = 0");  // (the Python layer handles it)
    const bool out_f32 = d.dtype == DType::kFloat32;
    const bool mn_a = ops::mn_major_operand(kOp, "a", a), mn_b = ops::mn_major_operand(kOp, "b", b);
    ops::check_bf16_output(kOp, d, n);
    const bool accumulate = c != nullptr;
    if (accumulate) ops::check_c(kOp, *c, d);

    const int device = a.device.index;
    const ops::Bf16PlanKey key = dense_key(m, n, k, mn_a, mn_b, out_f32, accumulate, device);
    const ops::Bf16Plan& plan = ops::bf16_plan(key, kOp);
    const heuristics::Bf16GemmConfig& cfg = plan.config;
    ops::Bf16GemmParams params{};
    params.tensor_map_a =
        ops::bf16_operand_map(a.data, mn_a, m, k, mn_a ? a.stride(1) : a.stride(0), cfg.a_box_rows());
    params.tensor_map_b = ops::bf16_operand_map(b.data, mn_b, n, k, mn_b ? b.stride(1) : b.stride(0), cfg.block_n);
    params.tensor_map_d = ops::d_store_map(d, cfg.store_box_n, cfg.swizzle_d_bytes);
    ops::set_gemm_dims(params, m, n, k, d);
    if (accumulate) ops::copy_c_into_d(*c, d, stream);
    ops::launch_bf16_gemm(plan, params, stream, device);
}

std::string bf16_gemm_config(std::int64_t m, std::int64_t n, std::int64_t k, bool mn_major_a, bool mn_major_b,
                             bool out_f32, bool accumulate, int device) {
    TESSERA_CHECK(m > 0 && n > 0 && k > 0, "bf16_gemm_config: expected positive m, n, k, got ", m, ", ", n, ", ",
                  k);
    return ops::bf16_plan(dense_key(m, n, k, mn_major_a, mn_major_b, out_f32, accumulate, device), "bf16_gemm_config")
        .config.describe();
}

}  // namespace tessera
