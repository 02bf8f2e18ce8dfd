// Grouped FP8 GEMMs for Mixture-of-Experts on SM90 (DeepGEMM's m-grouped contiguous / masked and k-grouped wgrad),
// over TensorRefs. Like fp8_gemm_nt, every check happens before anything is launched, and a scale tensor valid in
// content but not in the kernel's layout is reported (kNeedsSfaLayout / kNeedsSfbLayout) rather than copied.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "tessera/fp8_gemm.hpp"
#include "tessera/layout.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// D[r] = A[r]·B[g(r)]ᵀ (1D2D, BF16 out). a: e4m3 [M_total, K]; sfa: FP32 [M_total, ceil(K/128)] MN-major
// TMA-aligned; b: e4m3 [G, N, K]; sfb: FP32 [G, ceil(N/128), ceil(K/128)] contiguous; d: BF16 [M_total, N].
// grouped_layout (int32, device): per-row expert ids [M_total] with -1 for padding rows (each expert segment starts
// at a multiple of get_mk_alignment_for_contiguous_layout(); -1 rows of D are written as zeros), or with
// use_psum_layout the cumulative end row of each group [G] (group g starts at align(end[g-1], alignment); rows
// outside every group are not written). expected_m: rows per group, a heuristic hint (0: M_total / G).
// Expert ids are not range-checked on the host (that would need a sync): ids >= G read outside B.
Fp8GemmStatus m_grouped_fp8_gemm_nt_contiguous(const TensorRef& a, const TensorRef& sfa, const TensorRef& b,
                                               const TensorRef& sfb, const TensorRef& d,
                                               const TensorRef& grouped_layout, bool use_psum_layout,
                                               std::int64_t expected_m, Stream stream);

// For each g: D[g, :masked_m[g]] = A[g, :masked_m[g]]·B[g]ᵀ; rows at and past masked_m[g] are not written.
// a: e4m3 [G, M_max, K]; sfa: FP32 [G, M_max, ceil(K/128)] MN-major TMA-aligned per group; b, sfb as above;
// d: BF16 [G, M_max, N]; masked_m: int32 [G] on the device (read by the kernel: no host sync, graph-capturable;
// values are clamped to [0, M_max]). expected_m > 0 is a hint.
Fp8GemmStatus m_grouped_fp8_gemm_nt_masked(const TensorRef& a, const TensorRef& sfa, const TensorRef& b,
                                           const TensorRef& sfb, const TensorRef& d, const TensorRef& masked_m,
                                           std::int64_t expected_m, Stream stream);

// Batched over heads (fp8_einsum 'bhr,hdr->bhd'): d[g] [M, N] BF16 = a[g] [M, K] · b[g] [N, K]ᵀ (1D2D). a e4m3 and d
// with free batch and row strides (16-byte multiples), so the einsum passes permuted views; b [G, N, K] packed; sfa
// FP32 [G, M, ceil(K/128)] MN-major TMA-aligned per group, packed; sfb FP32 [G, ceil(N/128), ceil(K/128)] contiguous.
Fp8GemmStatus fp8_bmm_nt(const TensorRef& a, const TensorRef& sfa, const TensorRef& b, const TensorRef& sfb,
                         const TensorRef& d, Stream stream);

// Weight gradient: D[g] = C[g] + A_g·B_gᵀ (1D1D, FP32): c (FP32 [G, M, N], may be d itself; nullptr: D already holds
// C) is copied into d on the stream after every check. A_g = [M, k_g] and B_g = [N, k_g] are
// row-major blocks stored back to back in a and b; ks = k_g on the host (each a multiple of 128, zeros allowed);
// grouped_layout = the same values as int32 [G] on the device (checked for shape only). sfa: FP32 [M, S] and
// sfb: FP32 [N, S], S = sum_g k_g/128, MN-major TMA-aligned. d: FP32 [G, M, N] contiguous.
Fp8GemmStatus k_grouped_fp8_gemm_nt_contiguous(const TensorRef& a, const TensorRef& sfa, const TensorRef& b,
                                               const TensorRef& sfb, const TensorRef& d,
                                               std::span<const std::int64_t> ks, const TensorRef& grouped_layout,
                                               Stream stream, const TensorRef* c = nullptr);

// The config a grouped GEMM picks (tile, stages, cluster, grid) as one readable line, e.g. for a benchmark's config
// column. m: M_total (contiguous, psum), M_max (masked) or the per-group M (k-grouped); k: ignored for k-grouped;
// expected_m: the call's hint (0: M_total / G for psum, M_max for masked). Compiles and loads the kernel like a call.
enum class Fp8GroupedKind { kContiguous, kPsum, kMasked, kKGrouped };
std::string fp8_grouped_gemm_config(Fp8GroupedKind kind, std::int64_t m, std::int64_t n, std::int64_t k,
                                    std::int64_t groups, std::int64_t expected_m, int device);

// The most groups one k-grouped launch takes (their tensor maps travel in the kernel parameters).
constexpr int kMaxKGroupedGroups = 120;

}  // namespace tessera
