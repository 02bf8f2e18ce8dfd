// BF16 GEMMs on SM90 with FP32 accumulation: D = A·Bᵀ, or D += A·Bᵀ.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/layout.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// d [M, N] (BF16 or FP32, row-major) = c + a [M, K] · b [N, K]ᵀ; c (nullptr: none) has d's dtype and shape and may be
// d itself, else it is copied into d on the stream once every argument has passed its checks. a and b are BF16,
// each K-major (stride(-1) == 1) or MN-major (stride(-2) == 1: the transpose of a row-major [K, M] / [K, N] tensor),
// so all four layouts (nt, nn, tn, tt) run without a copy. Rows of 16 bytes for TMA: K % 8 == 0 for K-major operands,
// M (N) % 8 == 0 for MN-major ones, N % 8 (BF16 d) or % 4 (FP32 d). Throws InvalidArgument / TypeMismatch before anything is launched.
void bf16_gemm_nt(const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef* c, Stream stream);

// m-grouped BF16 GEMMs (MoE), the layouts of the FP8 ones: d [M, N] BF16 with rows r = a [M, K] rows r times b[g]ᵀ,
// b [G, N, K] K-major or MN-major (each group packed: the transpose of a row-major [G, K, N]); K % 64 == 0.
// Contiguous: grouped_layout int32 [M], the group of each row (-1: a padding row, written as zeros), or with
// use_psum_layout int32 [G], each group's end row (groups start at the next get_mk_alignment_for_contiguous_layout()
// row; expected_m, rows per group, guides the plan). Masked: a [G, M_max, K], d [G, M_max, N], masked_m int32 [G] on
// the device (rows past masked_m[g] are not written), expected_m > 0 guides the plan.
void m_grouped_bf16_gemm_nt_contiguous(const TensorRef& a, const TensorRef& b, const TensorRef& d,
                                       const TensorRef& grouped_layout, bool use_psum_layout, std::int64_t expected_m,
                                       Stream stream);
void m_grouped_bf16_gemm_nt_masked(const TensorRef& a, const TensorRef& b, const TensorRef& d,
                                   const TensorRef& masked_m, std::int64_t expected_m, Stream stream);

// k-grouped weight gradient (TN): d[g] [M, N] (FP32, or BF16: the tiles added in BF16) = c[g] + a_gᵀ · b_g for each group g, where a [sum K, M] and b
// [sum K, N] are row-major and group g holds rows [k_0 + ... + k_{g-1}, + k_g) of both; ks (host) gives each k_g, a
// multiple of 128 (0: D[g] = C[g]), ks_tensor the same on the device; c may be d itself.
void k_grouped_bf16_gemm_tn_contiguous(const TensorRef& a, const TensorRef& b, const TensorRef& d, const TensorRef& c,
                                       const std::vector<std::int64_t>& ks, const TensorRef& ks_tensor, Stream stream);

// The plan bf16_gemm_nt makes for a problem on `device` ("block 128x256x64, 4 stages, ..."); compiles its kernel.
std::string bf16_gemm_config(std::int64_t m, std::int64_t n, std::int64_t k, bool mn_major_a, bool mn_major_b,
                             bool out_f32, bool accumulate, int device);

}  // namespace tessera
