// cublaslt_gemm_nt: validate -> cuBLASLt descriptors for the row-major problem -> heuristic algorithm -> matmul.
//
// cuBLASLt is column-major: a row-major D [M, N] is its [N, M] with the same leading dimension, so tessera asks it
// for Dᵀ = B · Aᵀ (+ Cᵀ), passing b as its first operand and a as its second.
#include "tessera/cublaslt.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
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
    // Under DG_USE_TEMP_CUBLASLT_WORKSPACE every call allocates its own: none is held.
    if (!options().cublaslt_temp_workspace)
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

// One cuBLASLt matmul of `batch` problems d[g] [M, N] = c[g] + a[g] · b[g]ᵀ, each operand's g-th matrix
// batch_stride elements after the previous one (the 2-D call: batch 1).
struct LtCall {
    const TensorRef *a, *b, *d, *c;  // c: nullptr, or d's dtype, shape and layout (may be d)
    std::int64_t m, n, k, batch;
    bool mn_a, mn_b;
    std::int64_t ld_a, ld_b, ld_d, ld_c;                   // leading strides of the 2-D matrices
    std::int64_t batch_a, batch_b, batch_d, batch_c;       // batch strides (elements)
    void* handle;                                          // a framework's cuBLAS handle, else nullptr
};

void lt_matmul(const char* op, const LtCall& p, Stream stream) {
    const TensorRef &a = *p.a, &b = *p.b, &d = *p.d;
    const bool fp8 = a.dtype == DType::kFloat8E4M3;
    const int device = a.device.index;
    const DeviceState& state = device_state(device);
    Desc desc;
    check(lt().cublasLtMatmulDescCreate(&desc.desc, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F), "MatmulDescCreate");
    // First operand b: K-major b is column-major [K, N] (transposed to [N, K]); MN-major b is [N, K] as it is.
    const cublasOperation_t op_first = p.mn_b ? CUBLAS_OP_N : CUBLAS_OP_T;
    // Second operand a: needed as [K, M]; K-major a is column-major [K, M] already, MN-major a is [M, K].
    const cublasOperation_t op_second = p.mn_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const auto set = [&](cublasLtMatmulDescAttributes_t attr, const auto& value) {
        check(lt().cublasLtMatmulDescSetAttribute(desc.desc, attr, &value, sizeof(value)), "MatmulDescSetAttribute");
    };
    set(CUBLASLT_MATMUL_DESC_TRANSA, op_first);
    set(CUBLASLT_MATMUL_DESC_TRANSB, op_second);
    set(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, static_cast<std::int32_t>(ops::plan_num_sms(device)));
    if (fp8) set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<std::int8_t>(0));

    Layouts layouts;
    const auto layout = [&](int i, DType t, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                            std::int64_t batch_stride, const char* what) {
        check(lt().cublasLtMatrixLayoutCreate(&layouts.items[i], data_type(t), rows, cols, std::max(ld, rows)), what);
        if (p.batch > 1) {
            const std::int32_t count = static_cast<std::int32_t>(p.batch);
            check(lt().cublasLtMatrixLayoutSetAttribute(layouts.items[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                        sizeof(count)),
                  what);
            check(lt().cublasLtMatrixLayoutSetAttribute(layouts.items[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                        &batch_stride, sizeof(batch_stride)),
                  what);
        }
    };
    layout(0, b.dtype, p.mn_b ? p.n : p.k, p.mn_b ? p.k : p.n, p.ld_b, p.batch_b, "MatrixLayoutCreate (b)");
    layout(1, a.dtype, p.mn_a ? p.m : p.k, p.mn_a ? p.k : p.m, p.ld_a, p.batch_a, "MatrixLayoutCreate (a)");
    layout(2, d.dtype, p.n, p.m, p.ld_d, p.batch_d, "MatrixLayoutCreate (d)");
    // C: read by cuBLASLt where it lies (d itself, or another tensor of d's shape and layout).
    layout(3, d.dtype, p.n, p.m, p.ld_c, p.batch_c, "MatrixLayoutCreate (c)");

    check(lt().cublasLtMatmulPreferenceCreate(&desc.pref), "MatmulPreferenceCreate");
    const std::uint64_t workspace_bytes = kWorkspaceBytes;
    check(lt().cublasLtMatmulPreferenceSetAttribute(desc.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof(workspace_bytes)),
          "MatmulPreferenceSetAttribute");
    // Split-K partial sums reduced in FP32 (or not split): the default mask also admits reductions in the output
    // type (BF16 partials, below the FP32 accumulation the contract states) and in place in d. DeepGEMM's wrapper
    // restricts the heuristic the same way, so both time the same family of cuBLAS kernels.
    const std::uint32_t reduction_schemes = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    check(lt().cublasLtMatmulPreferenceSetAttribute(desc.pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                    &reduction_schemes, sizeof(reduction_schemes)),
          "MatmulPreferenceSetAttribute");
    // The heuristic assumes 256-byte aligned matrices unless told otherwise; operands here may be views at any
    // element offset and batches at any stride, so each matrix's alignment is passed on (its leading dimension the
    // heuristic reads from the layout; aligned matrices keep the default, as torch's own call does).
    const auto alignment = [&](const TensorRef& t, std::int64_t batch_stride) {
        const std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(t.data) |
                                    static_cast<std::uintptr_t>(p.batch > 1 ? batch_stride * dtype_size(t.dtype) : 0);
        std::uint32_t bytes = 256;
        while (bytes > 1 && bits % bytes != 0) bytes /= 2;
        return bytes;
    };
    const TensorRef& cref = p.c != nullptr ? *p.c : d;
    const std::pair<cublasLtMatmulPreferenceAttributes_t, std::uint32_t> alignments[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment(b, p.batch_b)},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment(a, p.batch_a)},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment(cref, p.batch_c)},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment(d, p.batch_d)}};
    for (const auto& [attr, bytes] : alignments)
        check(lt().cublasLtMatmulPreferenceSetAttribute(desc.pref, attr, &bytes, sizeof(bytes)),
              "MatmulPreferenceSetAttribute");
    const cublasLtHandle_t handle = p.handle != nullptr ? static_cast<cublasLtHandle_t>(p.handle) : state.handle;
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    check(lt().cublasLtMatmulAlgoGetHeuristic(handle, desc.desc, layouts.items[0], layouts.items[1],
                                              layouts.items[3], layouts.items[2], desc.pref, 1, &heuristic, &found),
          "MatmulAlgoGetHeuristic");
    if (found == 0)
        throw Unsupported(detail::str_cat(op, ": cuBLASLt found no algorithm for the GEMM (m=", p.m, " n=", p.n,
                                          " k=", p.k, " batch=", p.batch, ")"));
    const float alpha = 1.f, beta = p.c != nullptr ? 1.f : 0.f;
    runtime::make_current(device);
    const CUstream cu_stream = static_cast<CUstream>(stream);
    // The held workspace, or (DG_USE_TEMP_CUBLASLT_WORKSPACE) one allocated in stream order for this call only.
    CUdeviceptr workspace = state.workspace;
    if (workspace == 0)
        TESSERA_CU_CHECK(runtime::driver().cuMemAllocAsync(&workspace, kWorkspaceBytes, cu_stream));
    const cublasStatus_t status =
        lt().cublasLtMatmul(handle, desc.desc, &alpha, b.data, layouts.items[0], a.data, layouts.items[1], &beta,
                            cref.data, layouts.items[3], d.data, layouts.items[2], &heuristic.algo,
                            reinterpret_cast<void*>(workspace), kWorkspaceBytes, static_cast<cudaStream_t>(stream));
    if (workspace != state.workspace) TESSERA_CU_CHECK(runtime::driver().cuMemFreeAsync(workspace, cu_stream));
    check(status, "Matmul");
}

void check_inputs(const char* op, const TensorRef& a, const TensorRef& b, const TensorRef& d, int ndim) {
    for (auto [name, t] : {std::pair<const char*, const TensorRef*>{"a", &a}, {"b", &b}, {"d", &d}}) {
        ops::check_ndim({op, name}, *t, {ndim});
        ops::check_cuda({op, name}, *t);
    }
    ops::check_dtype({op, "a"}, a, {DType::kBFloat16, DType::kFloat8E4M3});
    ops::check_dtype({op, "b"}, b, {a.dtype});
    ops::check_dtype({op, "d"}, d, {DType::kBFloat16, DType::kFloat32});
    ops::check_same_device({op, "b"}, b, a, "a");
    ops::check_same_device({op, "d"}, d, a, "a");
}

// Operand majors (FP8: K-major only, cuBLASLt's FP8 layout) and a row-major d.
void check_layouts(const char* op, const TensorRef& a, const TensorRef& b, const TensorRef& d, bool& mn_a,
                   bool& mn_b) {
    // cuBLASLt takes any leading dimension (no TMA alignment), so only the majors are checked.
    mn_a = ops::mn_major_operand(op, "a", a, false);
    mn_b = ops::mn_major_operand(op, "b", b, false);
    TESSERA_CHECK(a.dtype != DType::kFloat8E4M3 || (!mn_a && !mn_b), op, ": FP8 operands must be K-major (cuBLASLt's "
                  "FP8 layout), got strides ", ops::strides_string(a), " and ", ops::strides_string(b));
    TESSERA_CHECK(d.stride(-1) == 1 || d.size(-1) <= 1, op, ": argument 'd': expected row-major, got strides ",
                  ops::strides_string(d));
}

}  // namespace

void cublaslt_gemm_nt(const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef* c, Stream stream,
                      void* handle) {
    check_inputs(kOp, a, b, d, 2);
    const auto [m, n, k] = ops::check_nt_shapes(kOp, a, b, d);
    if (m == 0 || n == 0) return;
    bool mn_a = false, mn_b = false;
    check_layouts(kOp, a, b, d, mn_a, mn_b);
    if (c != nullptr) ops::check_c(kOp, *c, d);
    const TensorRef& cref = c != nullptr ? *c : d;
    const LtCall call{&a,   &b,   &d,   c,    m,    n,    k,    1,    mn_a, mn_b, mn_a ? a.stride(1) : a.stride(0),
                      mn_b ? b.stride(1) : b.stride(0), d.stride(0), cref.stride(0), 0, 0, 0, 0, handle};
    lt_matmul(kOp, call, stream);
}

void cublaslt_bmm_nt(const TensorRef& a, const TensorRef& b, const TensorRef& d, Stream stream, void* handle) {
    constexpr const char* op = "cublaslt_bmm_nt";
    check_inputs(op, a, b, d, 3);
    const auto [batch, m, n, k] = ops::check_bmm_shapes(op, a, b, d);
    if (batch == 0 || m == 0 || n == 0) return;
    TESSERA_CHECK(batch <= std::numeric_limits<std::int32_t>::max(), op, ": argument 'a': expected a batch below 2^31, "
                  "got ", batch);
    bool mn_a = false, mn_b = false;
    check_layouts(op, a, b, d, mn_a, mn_b);
    const LtCall call{&a,          &b,         &d,          nullptr,     m,           n,          k,
                      batch,       mn_a,       mn_b,        mn_a ? a.stride(2) : a.stride(1),
                      mn_b ? b.stride(2) : b.stride(1),     d.stride(1), d.stride(1), a.stride(0), b.stride(0),
                      d.stride(0), d.stride(0), handle};
    lt_matmul(op, call, stream);
}

}  // namespace tessera
