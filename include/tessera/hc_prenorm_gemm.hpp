// The TF32 HyperConnection pre-norm GEMM (DeepGEMM's tf32_hc_prenorm_gemm) on SM90.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/runtime.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// a [M, K] BF16 and b [N, K] FP32, both K-major (stride(-1) == 1, rows 16-byte aligned). With num_splits == 0
// (DeepGEMM's None): d [M, N] FP32 = a · bᵀ computed on TF32 tensor cores (a is exact in TF32; b is read as the
// tensor cores read FP32 data) and sqr_sum [M] FP32 = Σ_k a[m, k]²; the kernel may split K over several CTAs itself
// and sums their partials in a fixed order, so results are deterministic. With num_splits = s >= 1: K is cut into s
// chunks of 64-wide k-blocks (their counts differ by at most one, the earlier chunks get the extra one), d is
// [s, M, N] and sqr_sum [s, M], holding each chunk's partial sums; every slice is written (zeros for an empty
// chunk). d is row-major (rows of 8-byte multiples, slices packed), sqr_sum contiguous. Requirements: N in {8, 16,
// 24, 32}, K a positive multiple of 64. M == 0 returns. Throws InvalidArgument / TypeMismatch before anything is
// launched.
void tf32_hc_prenorm_gemm(const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef& sqr_sum,
                          int num_splits, Stream stream);

// The plan tf32_hc_prenorm_gemm makes for a problem on `device` ("n 24, 16 stages, 32 splits summed in the kernel,
// ..."); compiles its kernel.
std::string tf32_hc_prenorm_gemm_config(std::int64_t m, std::int64_t n, std::int64_t k, int num_splits, int device);

}  // namespace tessera
