// The GEMM kinds one kernel family serves through its scheduler. The host's plans and kernel specs (src/ops) include
// this header too, so the numbers a spec carries in kKind are the ones the kernel compares against. Plain C++: no
// CUDA here.
#pragma once

namespace tessera::prims {

// kBatched: G independent problems of one [M, N, K] shape at the third coordinate of 3-D maps (einsum over a batch
// of heads). kBatchSum: D = sum over a batch of A_s·B_sᵀ, split over the flattened (batch, k-block) axis, tiles
// reduce-added into D (einsum 'bmk,bnk->mn').
enum GemmKind : int { kDense = 0, kContiguous = 1, kPsum = 2, kMasked = 3, kKGrouped = 4, kBatched = 5, kBatchSum = 6 };

}  // namespace tessera::prims
