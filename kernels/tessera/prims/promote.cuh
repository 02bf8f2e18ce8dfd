// Scale promotion: fold one 128-K block's wgmma result (`acc`, overwritten every block) into the FP32 main
// accumulator (`dst`) with its dequantization scales.
//
// Fragment layout of m64nNk32 with FP32 accumulators (PTX ISA "wgmma ... Register Fragments"), per thread, for the
// 8-column chunk i: acc[4i+0], acc[4i+1] = row r0, columns 8i + 2(lane%4) + {0,1}; acc[4i+2], acc[4i+3] = row r0+8,
// same columns; r0 = 16*warp_in_warpgroup + lane/4. So a thread needs one A scale per row (two in all) and, for
// per-column B scales, two B scales per chunk. `dst += s * acc` contracts to one FFMA (fmad is on by default).
#pragma once

#include <tessera/common.cuh>

namespace tessera::prims {

// Every chunk uses the same B scale: s_row0 = sa[r0]*sb, s_row1 = sa[r0+8]*sb.
template <int kChunks>
TESSERA_DEVICE void promote_uniform(float* dst, const float* acc, float s_row0, float s_row1) {
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
        dst[4 * i + 0] += s_row0 * acc[4 * i + 0];
        dst[4 * i + 1] += s_row0 * acc[4 * i + 1];
        dst[4 * i + 2] += s_row1 * acc[4 * i + 2];
        dst[4 * i + 3] += s_row1 * acc[4 * i + 3];
    }
}

// Chunks [0, kFormer) belong to the first 128-wide B-scale block ("lo" scales), the rest to the next one ("hi").
// kFormer is a compile-time constant so the per-chunk choice costs nothing.
template <int kChunks, int kFormer>
TESSERA_DEVICE void promote_two_blocks(float* dst, const float* acc, float lo_row0, float lo_row1, float hi_row0,
                                       float hi_row1) {
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
        const float s0 = i < kFormer ? lo_row0 : hi_row0;
        const float s1 = i < kFormer ? lo_row1 : hi_row1;
        dst[4 * i + 0] += s0 * acc[4 * i + 0];
        dst[4 * i + 1] += s0 * acc[4 * i + 1];
        dst[4 * i + 2] += s1 * acc[4 * i + 2];
        dst[4 * i + 3] += s1 * acc[4 * i + 3];
    }
}

// Run-time boundary: `former` (chunks of the whole tile in the lo block) is a multiple of kStep and >= kStep; this
// fragment covers tile chunks [kBase, kBase + kChunks). One instance per reachable value keeps the select folded at
// compile time; the chain of uniform compares costs a few instructions per k-block. Depth <= 128/8/kStep + 1.
template <int kChunks, int kBase, int kStep, int kFormer = kStep>
TESSERA_DEVICE void promote_two_blocks_dispatch(uint32_t former, float* dst, const float* acc, float lo_row0,
                                                float lo_row1, float hi_row0, float hi_row1) {
    if constexpr (kFormer >= kBase + kChunks) {
        promote_uniform<kChunks>(dst, acc, lo_row0, lo_row1);  // the whole fragment lies in the lo block
    } else if (former == static_cast<uint32_t>(kFormer)) {
        constexpr int kLocal = kFormer > kBase ? kFormer - kBase : 0;
        promote_two_blocks<kChunks, kLocal>(dst, acc, lo_row0, lo_row1, hi_row0, hi_row1);
    } else {
        promote_two_blocks_dispatch<kChunks, kBase, kStep, kFormer + kStep>(former, dst, acc, lo_row0, lo_row1,
                                                                             hi_row0, hi_row1);
    }
}

// Per-column B scales (1D1D): sb[2i], sb[2i+1] are the scales of this thread's two columns of chunk i.
template <int kChunks>
TESSERA_DEVICE void promote_per_column(float* dst, const float* acc, float sa_row0, float sa_row1, const float* sb) {
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
        dst[4 * i + 0] += sa_row0 * sb[2 * i + 0] * acc[4 * i + 0];
        dst[4 * i + 1] += sa_row0 * sb[2 * i + 1] * acc[4 * i + 1];
        dst[4 * i + 2] += sa_row1 * sb[2 * i + 0] * acc[4 * i + 2];
        dst[4 * i + 3] += sa_row1 * sb[2 * i + 1] * acc[4 * i + 3];
    }
}

}  // namespace tessera::prims
