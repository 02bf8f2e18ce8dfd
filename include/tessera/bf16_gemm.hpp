// BF16 GEMMs on SM90 with FP32 accumulation: D = A·Bᵀ, or D += A·Bᵀ.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/layout.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// d [M, N] (BF16 or FP32, row-major) = a [M, K] · b [N, K]ᵀ, or d += that with `accumulate` (a caller who has C
// copies it into d first, as DeepGEMM does). a and b are BF16, each K-major (stride(-1) == 1) or MN-major
// (stride(-2) == 1: the transpose of a row-major [K, M] / [K, N] tensor), so all four layouts (nt, nn, tn, tt) run
// without a copy. Rows of 16 bytes for TMA: K % 8 == 0 for K-major operands, M (N) % 8 == 0 for MN-major ones, N % 8
// (BF16 d) or % 4 (FP32 d). Throws InvalidArgument / TypeMismatch before anything is launched.
void bf16_gemm_nt(const TensorRef& a, const TensorRef& b, const TensorRef& d, bool accumulate, Stream stream);

// The plan bf16_gemm_nt makes for a problem on `device` ("block 128x256x64, 4 stages, ..."); compiles its kernel.
std::string bf16_gemm_config(std::int64_t m, std::int64_t n, std::int64_t k, bool mn_major_a, bool mn_major_b,
                             bool out_f32, bool accumulate, int device);

}  // namespace tessera
