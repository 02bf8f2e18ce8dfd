// Scale-factor layout operations (DeepGEMM's layout utilities). Outputs are caller-allocated TensorRefs with the
// exact strides the contract gives; every argument is validated before anything is launched.
#pragma once

#include <cstdint>
#include <span>

#include "tessera/tensor.hpp"

namespace tessera {

using Stream = void*;  // a CUstream; nullptr is the legacy default stream

// align(x, 16 / element_size): the row length a TMA descriptor accepts. element_size must divide 16.
std::int64_t get_tma_aligned_size(std::int64_t x, std::int64_t element_size);

// Whether an FP32 [MN, SFK] or [G, MN, SFK] tensor already has strides (1, align(MN,4)) and, for 3-D,
// align(MN,4)*SFK per group: the layout the GEMM kernels load with TMA.
bool is_mn_major_tma_aligned(const TensorRef& sf);

// out := sf in MN-major TMA-aligned layout (same logical shape; out's strides must be that layout). Padding rows of
// out are written as zero.
void transpose_sf_to_mn_major(const TensorRef& sf, const TensorRef& out, Stream stream);

// out (int32 [.., MN, ceil(SFK/4)], MN-major TMA-aligned) := the UE8M0 exponents of sf packed four per int.
// psum_layout (int32 [G], optional): rows outside [align(end_{g-1}, alignment), end_g) get zero bytes.
// error_count (int32 [1], optional, device): incremented for each value that is not a non-negative power of two.
void pack_sf_to_ue8m0(const TensorRef& sf, const TensorRef& out, const TensorRef* psum_layout, int alignment,
                      const TensorRef* error_count, Stream stream);

// Rows of the packed k-grouped result: sum_g ceil(k_g / (4 gran_k)) with ks, or (SFK + 3G) / 4 without.
std::int64_t k_grouped_packed_rows(std::int64_t sf_rows, std::span<const std::int64_t> ks, std::int64_t num_groups,
                                   std::int64_t gran_k);

// out (int32 [rows, MN] contiguous) := sf (FP32 [sum_g ceil(k_g/gran_k), MN] contiguous) packed per group.
// grouped_layout: int32 [G] device tensor of per-group K (or cumulative K ends when use_psum). ks: the same K
// values on the host (may be empty only with use_psum).
void pack_sf_to_ue8m0_k_grouped(const TensorRef& sf, const TensorRef& out, const TensorRef& grouped_layout,
                                std::span<const std::int64_t> ks, int gran_k, int k_alignment, bool use_psum,
                                const TensorRef* error_count, Stream stream);

}  // namespace tessera

namespace tessera {

// What a layout utility will return for `sf`: the tensor itself (pass_through), or a new tensor of this shape and
// these strides. Validates sf first, so a caller can allocate only for valid input.
struct LayoutPlan {
    bool pass_through = false;
    int ndim = 0;
    std::int64_t shape[3] = {};
    std::int64_t strides[3] = {};
};

// For get_mn_major_tma_aligned_tensor (FP32 out) and get_mn_major_tma_aligned_packed_ue8m0_tensor (int32 out).
LayoutPlan plan_mn_major_tma_aligned(const TensorRef& sf);
LayoutPlan plan_mn_major_packed_ue8m0(const TensorRef& sf);

}  // namespace tessera
