// cuBLASLt, loaded at first use from the CUDA toolkit (runtime/toolkit_library.hpp), as NVRTC is: libtessera links
// no CUDA library. Used by the cublaslt_gemm_* ops.
#pragma once

#include <cublasLt.h>

#include <string>

namespace tessera::runtime {

#define TESSERA_CUBLASLT_FUNCTIONS(X)     \
    X(cublasLtCreate)                     \
    X(cublasLtDestroy)                    \
    X(cublasLtGetVersion)                 \
    X(cublasLtGetStatusString)            \
    X(cublasLtMatmulDescCreate)           \
    X(cublasLtMatmulDescDestroy)          \
    X(cublasLtMatmulDescSetAttribute)     \
    X(cublasLtMatrixLayoutCreate)         \
    X(cublasLtMatrixLayoutDestroy)        \
    X(cublasLtMatrixLayoutSetAttribute)   \
    X(cublasLtMatmulPreferenceCreate)     \
    X(cublasLtMatmulPreferenceDestroy)    \
    X(cublasLtMatmulPreferenceSetAttribute) \
    X(cublasLtMatmulAlgoGetHeuristic)     \
    X(cublasLtMatmul)

struct CublasLt {
#define TESSERA_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
    TESSERA_CUBLASLT_FUNCTIONS(TESSERA_DECLARE_POINTER)
#undef TESSERA_DECLARE_POINTER
};

// The loaded library. Throws Unsupported naming where it looked when it is missing.
const CublasLt& cublaslt(const std::string& cuda_home);

}  // namespace tessera::runtime
