// FP8 GEMM with fine-grained scaling on SM90 (DeepGEMM's fp8_gemm_nt), over TensorRefs.
//   1D2D: D (BF16) = A·Bᵀ, A scaled per (row, 128 K), B per 128x128 block.
//   1D1D: D (FP32) += A·Bᵀ, both scaled per (row, 128 K); D must already hold C.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/layout.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

enum class Fp8Recipe { k1D2D, k1D1D };

// What fp8_gemm_nt did. A scale tensor valid in content but not in the layout the kernel reads is reported rather
// than copied (the C++ API never allocates): transform it (transform_sf_into_required_layout) and call again.
enum class Fp8GemmStatus { kLaunched = 0, kNeedsSfaLayout = 1, kNeedsSfbLayout = 2 };

// a: e4m3 [M, K] K-major; b: e4m3 [N, K] K-major; d: [M, N] row-major (BF16 for 1D2D, FP32 for 1D1D).
// sfa: FP32 [M, ceil(K/128)] MN-major TMA-aligned (strides (1, align(M,4))).
// sfb: 1D2D FP32 [ceil(N/128), ceil(K/128)] row-major contiguous; 1D1D like sfa over N.
// Every check happens before anything is launched; M == 0 or N == 0 returns at once. 1D1D: `c` (FP32 [M, N], may be
// d itself; nullptr: d already holds C) is copied into d on the stream right before the launch, after every check.
Fp8GemmStatus fp8_gemm_nt(const TensorRef& a, const TensorRef& sfa, const TensorRef& b, const TensorRef& sfb,
                          const TensorRef& d, Fp8Recipe recipe, Stream stream, const TensorRef* c = nullptr);

// DeepGEMM's fp8_gemm_nt_skip_head_mid (1D2D): the product [M, N] is cut into heads of left + right columns and
// stored into d [M, N / (left + right) * (left + mid + right)] (BF16) with each head's mid columns left untouched.
// left and right must be multiples of the kernel's store width (64 columns for the usual plans: the error names the
// width), mid a multiple of 8, N a multiple of left + right.
struct HeadSplits {
    std::int64_t left = 0, mid = 0, right = 0;
};
Fp8GemmStatus fp8_gemm_nt_skip_head_mid(const TensorRef& a, const TensorRef& sfa, const TensorRef& b,
                                        const TensorRef& sfb, const TensorRef& d, HeadSplits heads, Stream stream);

// The kernel configuration fp8_gemm_nt uses for this shape on `device` (tile, stages, cluster, split-K, grid), as
// one line; plans (and loads) the kernel if no call has yet.
std::string fp8_gemm_config(std::int64_t m, std::int64_t n, std::int64_t k, Fp8Recipe recipe, int device);

}  // namespace tessera
