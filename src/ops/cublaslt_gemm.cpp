// cublaslt_gemm_nt: validate -> cuBLASLt descriptors for the row-major problem -> heuristic algorithm -> matmul.
//
// cuBLASLt is column-major: a row-major D [M, N] is its [N, M] with the same leading dimension, so tessera asks it
// for Dᵀ = B · Aᵀ (+ Cᵀ), passing b as its first operand and a as its second.
#include "tessera/cublaslt.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "ops/bf16_gemm_common.hpp"
#include "ops/validate.hpp"
#include "runtime/cublaslt.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"

namespace tessera {
namespace {

constexpr const char* kOp = "cublaslt_gemm_nt";
constexpr std::size_t kWorkspaceBytes = 32u << 20;

const runtime::CublasLt& lt() { return runtime::cublaslt(options().cuda_home); }

void check(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw CudaError(detail::str_cat(kOp, ": ", what, " failed: ", lt().cublasLtGetStatusString(status)));
}

// One handle and workspace per device, made at its first call and kept for the process.
struct DeviceState {
    cublasLtHandle_t handle = nullptr;
    CUdeviceptr workspace = 0;
};
const DeviceState& device_state(int device) {
    static std::mutex mutex;
    static std::map<int, DeviceState> states;
    std::lock_guard lock(mutex);
    if (auto it = states.find(device); it != states.end()) return it->second;
    runtime::make_current(device);
    DeviceState s;
    check(lt().cublasLtCreate(&s.handle), "cublasLtCreate");
    TESSERA_CU_CHECK(runtime::driver().cuMemAlloc(&s.workspace, kWorkspaceBytes));
    return states.emplace(device, s).first->second;
}

// RAII for the per-call descriptors.
struct Layouts {
    cublasLtMatrixLayout_t items[4] = {nullptr, nullptr, nullptr, nullptr};
    ~Layouts() {
        for (auto l : items)
            if (l) lt().cublasLtMatrixLayoutDestroy(l);
    }
};
struct Desc {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    ~Desc() {
        if (desc) lt().cublasLtMatmulDescDestroy(desc);
        if (pref) lt().cublasLtMatmulPreferenceDestroy(pref);
    }
};

cudaDataType_t data_type(DType t) {
    switch (t) {
        case DType::kBFloat16: return CUDA_R_16BF;
        case DType::kFloat8E4M3: return CUDA_R_8F_E4M3;
        default: return CUDA_R_32F;
    }
}

}  // namespace

void cublaslt_gemm_nt(const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef* c, Stream stream) {
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d}}) {
        ops::check_ndim({kOp, name}, *t, {2});
        ops::check_cuda({kOp, name}, *t);
    }
    ops::check_dtype({kOp, "a"}, a, {DType::kBFloat16, DType::kFloat8E4M3});
    ops::check_dtype({kOp, "b"}, b, {a.dtype});
    ops::check_dtype({kOp, "d"}, d, {DType::kBFloat16, DType::kFloat32});
    ops::check_same_device({kOp, "b"}, b, a, "a");
    ops::check_same_device({kOp, "d"}, d, a, "a");
    const auto [m, n, k] = ops::check_nt_shapes(kOp, a, b, d);
    if (m == 0 || n == 0) return;
    const bool fp8 = a.dtype == DType::kFloat8E4M3;
    const bool mn_a = ops::mn_major_operand(kOp, "a", a), mn_b = ops::mn_major_operand(kOp, "b", b);
    TESSERA_CHECK(!fp8 || (!mn_a && !mn_b), kOp, ": FP8 operands must be K-major (cuBLASLt's FP8 layout), got "
                  "strides ", ops::strides_string(a), " and ", ops::strides_string(b));
    TESSERA_CHECK(d.stride(1) == 1 || d.size(1) <= 1, kOp, ": argument 'd': expected row-major, got strides ",
                  ops::strides_string(d));
    if (c != nullptr) ops::check_c(kOp, *c, d);

    const int device = a.device.index;
    const DeviceState& state = device_state(device);
    Desc desc;
    check(lt().cublasLtMatmulDescCreate(&desc.desc, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F), "MatmulDescCreate");
    // First operand b: K-major b is column-major [K, N] (transposed to [N, K]); MN-major b is [N, K] as it is.
    const cublasOperation_t op_first = mn_b ? CUBLAS_OP_N : CUBLAS_OP_T;
    // Second operand a: needed as [K, M]; K-major a is column-major [K, M] already, MN-major a is [M, K].
    const cublasOperation_t op_second = mn_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const auto set = [&](cublasLtMatmulDescAttributes_t attr, const auto& value) {
        check(lt().cublasLtMatmulDescSetAttribute(desc.desc, attr, &value, sizeof(value)), "MatmulDescSetAttribute");
    };
    set(CUBLASLT_MATMUL_DESC_TRANSA, op_first);
    set(CUBLASLT_MATMUL_DESC_TRANSB, op_second);
    set(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, static_cast<std::int32_t>(ops::plan_num_sms(device)));
    if (fp8) set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<std::int8_t>(0));

    Layouts layouts;
    const std::int64_t ld_b = mn_b ? b.stride(1) : b.stride(0), ld_a = mn_a ? a.stride(1) : a.stride(0);
    check(lt().cublasLtMatrixLayoutCreate(&layouts.items[0], data_type(b.dtype), mn_b ? n : k, mn_b ? k : n,
                                          std::max<std::int64_t>(ld_b, mn_b ? n : k)),
          "MatrixLayoutCreate (b)");
    check(lt().cublasLtMatrixLayoutCreate(&layouts.items[1], data_type(a.dtype), mn_a ? m : k, mn_a ? k : m,
                                          std::max<std::int64_t>(ld_a, mn_a ? m : k)),
          "MatrixLayoutCreate (a)");
    check(lt().cublasLtMatrixLayoutCreate(&layouts.items[2], data_type(d.dtype), n, m,
                                          std::max<std::int64_t>(d.stride(0), n)),
          "MatrixLayoutCreate (d)");
    // C: read by cuBLASLt where it lies (d itself, or another row-major tensor of d's shape).
    const TensorRef& cref = c != nullptr ? *c : d;
    check(lt().cublasLtMatrixLayoutCreate(&layouts.items[3], data_type(d.dtype), n, m,
                                          std::max<std::int64_t>(cref.stride(0), n)),
          "MatrixLayoutCreate (c)");

    check(lt().cublasLtMatmulPreferenceCreate(&desc.pref), "MatmulPreferenceCreate");
    const std::uint64_t workspace = kWorkspaceBytes;
    check(lt().cublasLtMatmulPreferenceSetAttribute(desc.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                    sizeof(workspace)),
          "MatmulPreferenceSetAttribute");
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    check(lt().cublasLtMatmulAlgoGetHeuristic(state.handle, desc.desc, layouts.items[0], layouts.items[1],
                                              layouts.items[3], layouts.items[2], desc.pref, 1, &heuristic, &found),
          "MatmulAlgoGetHeuristic");
    if (found == 0)
        throw Unsupported(detail::str_cat(kOp, ": cuBLASLt found no algorithm for the GEMM (m=", m, " n=", n, " k=", k,
                                          ")"));
    const float alpha = 1.f, beta = c != nullptr ? 1.f : 0.f;
    runtime::make_current(device);
    check(lt().cublasLtMatmul(state.handle, desc.desc, &alpha, b.data, layouts.items[0], a.data, layouts.items[1],
                              &beta, cref.data, layouts.items[3], d.data, layouts.items[2], &heuristic.algo,
                              reinterpret_cast<void*>(state.workspace), kWorkspaceBytes,
                              static_cast<cudaStream_t>(stream)),
          "Matmul");
}

}  // namespace tessera
