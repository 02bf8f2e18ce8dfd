// BF16 batched GEMMs on SM90, the kernels behind DeepGEMM's einsum: both run the BF16 GEMM kernel
// (tessera/bf16_gemm.hpp) with a batch in its tile schedule, FP32 accumulation in natural K order, no split over K
// inside one output element except across the summed batch.
#pragma once

#include "tessera/layout.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// d[g] = a[g] · b[g]ᵀ for every g: a [G, M, K] BF16 K-major, b [G, N, K] BF16 K-major or MN-major (stride(-2) == 1),
// d [G, M, N] BF16 or FP32 with stride(-1) == 1; the batch and row strides are free (16-byte multiples for TMA), so
// einsum 'bhr,hdr->bhd' passes permuted views of its tensors, never copies. K == 0 is the caller's (d = 0).
void bf16_bmm_nt(const TensorRef& a, const TensorRef& b, const TensorRef& d, Stream stream);

// d [M, N] = c + Σ_s a[s] · b[s]ᵀ (einsum 'bmk,bnk->mn'): a [S, M, K] and b [S, N, K] BF16 contiguous, M, N and K
// multiples of 64. FP32 d: c (nullptr: none, d = the sum) is FP32 [M, N] and may be d itself. BF16 d: c must be
// nullptr and `workspace`, an FP32 contiguous [M, N] scratch tensor on d's device, takes the sum before it is
// rounded into d (FP32 d: workspace unused, may be nullptr). Throws before anything is launched.
void bf16_bmk_bnk_mn(const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef* c,
                     const TensorRef* workspace, Stream stream);

}  // namespace tessera
