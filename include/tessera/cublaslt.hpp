// GEMMs through NVIDIA's cuBLASLt (DeepGEMM's cublaslt_gemm_*): the reference point its tests and benchmarks time
// the library's own kernels against. cuBLASLt is loaded from the CUDA toolkit at first use.
#pragma once

#include "tessera/layout.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// d [M, N] (row-major, BF16 or FP32) = c + a [M, K] · b [N, K]ᵀ; c (nullptr: none) has d's dtype and shape, row-major,
// and may be d itself (cuBLASLt reads it in place). a and b are both BF16, each K-major or MN-major (as their
// strides say), or both FP8 e4m3 and K-major (unscaled: cuBLASLt's FP8 layout). FP32 compute, FP8 fast accumulation
// off, the SM count target of set_num_sms; a private handle and a 32 MiB workspace per device. Throws
// InvalidArgument / TypeMismatch before anything runs, Unsupported when cuBLASLt has no algorithm for the problem.
// `handle`: a framework's cuBLAS(Lt) handle to run on (torch's, under DG_USE_PYTORCH_CUBLASLT_HANDLE), else
// nullptr for tessera's own; DG_USE_TEMP_CUBLASLT_WORKSPACE allocates the workspace per call, in stream order.
void cublaslt_gemm_nt(const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef* c, Stream stream,
                      void* handle = nullptr);

// d[g] [M, N] = a[g] [M, K] · b[g] [N, K]ᵀ for every g as one strided-batched cuBLASLt call (einsum's
// use_cublaslt path): a, b, d 3-D with free batch strides, the same operand rules as cublaslt_gemm_nt per matrix.
void cublaslt_bmm_nt(const TensorRef& a, const TensorRef& b, const TensorRef& d, Stream stream,
                     void* handle = nullptr);

}  // namespace tessera
