// The linear half of the indexer's head reduction on the tensor cores (sm90/mqa_logits.cuh with kQueryPieces).
//
// The head reduction sums w_h * ReLU(s_h) over the heads h of a query, s_h = q_h . k the FP32 score of one KV row k.
// With 2 ReLU(x) = x + |x| (mqa_head_reduction.cuh) it is half of
//     sum_h w_h s_h + sum_h w_h |s_h|,   and   sum_h w_h s_h = u . k,   u = sum_h w_h q_h,
// so the linear sum is one more dot product per query: u is a B column of the wgmma beside the query's heads, and
// only the |s| sum stays an FFMA per (row, head) element, half of the CUDA-core work of the reduction.
//
// u is FP32 and the wgmma reads FP8, so a query's u enters as kNumPieces E4M3 columns
//     u = (f_0 + f_1 / 16 + f_2 / 256 + f_3 / 4096) / s,
// s a power of two that puts max_d |u_d| in [128, 256) and f_p the E4M3 rounding of what the pieces before it left,
// times 16^p (an E4M3 rounding keeps 4 significant bits, so each piece gains 4). Four pieces hold u to about 2^-16
// of its largest element, below the error of the tensor cores' FP8 accumulation in the per-head scores the sum
// replaces; a simulation of the rounding steps over DeepGEMM's test distributions gives the same difference to an
// FP64 reference as the per-head sum. Every step is deterministic, so logits stay bitwise repeatable. The two sums
// no longer cancel bit for bit: a logit whose head scores are all negative comes out as the accumulation error of
// u . k (tiny against sum_h |w_h s_h|) instead of exactly zero.
//
// Layout. A q-group's B tile holds its kGroupCols head rows (query qq's head h at row (h / 2 * kGroupQ + qq) * 2 +
// h % 2, mqa_logits.cuh's permutation) and then kRows piece rows, piece p of query qq at row
//     kGroupCols + (p / 2) * 2 * kGroupQ + 2 * qq + p % 2,
// so that the wgmma fragment gives lane c (c = lane % 4) the pieces of the query it already reduces: with 32 heads
// (kGroupQ = 4) lane c holds query c's four pieces, with 64 heads (kGroupQ = 2) lanes c and c ^ 2 share query c % 2
// and hold pieces 0-1 and 2-3, which the pair's existing shuffle adds.
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/smem_desc.cuh>
#include <tessera/ptx/memory.cuh>

namespace tessera::sm90::mqa {

template <int kHeads, int kHeadDim, int kGroupQ, int kGroupCols>
struct QueryPieces {
    static constexpr int kNumPieces = 4;
    static constexpr int kRows = kGroupQ * kNumPieces;  // B rows after the head rows: 16 (32 heads) or 8 (64 heads)
    static constexpr int kChunks = kRows / 8;            // 8-column accumulator chunks of the pieces
    static constexpr int kLanesPerQuery = kHeads / 32;
    static constexpr int kPiecesPerLane = kNumPieces / kLanesPerQuery;
    static constexpr int kDimLanes = kHeadDim / 4;       // building: lanes along D, 4 bytes each
    static constexpr int kHeadSlices = 32 / kDimLanes;   // and slices of the heads
    static_assert(kHeads == 32 || kHeads == 64, "SM90 heads: 32 or 64");
    static_assert(kGroupQ * kHeads == kGroupCols, "a q-group is kGroupQ queries of all heads");
    static_assert(kPiecesPerLane == 2 * kChunks, "the fragment gives a lane two columns per chunk");

    TESSERA_DEVICE static constexpr uint32_t head_row(uint32_t qq, uint32_t h) {
        return ((h >> 1) * kGroupQ + qq) * 2 + (h & 1);
    }
    TESSERA_DEVICE static constexpr uint32_t piece_row(uint32_t qq, uint32_t p) {
        return kGroupCols + (p >> 1) * 2 * kGroupQ + 2 * qq + (p & 1);
    }

    // One warp builds query qq's pieces in its q-group's B tile (`tile`, generic pointer to shared memory) from the
    // query's head rows there and its kHeads weights. Returns 1 / s (NaN when u is not finite, so the logits are NaN
    // too rather than saturated pieces' finite values). The caller fences the async proxy before publishing.
    TESSERA_DEVICE static float build(uint8_t* tile, const float* weights, uint32_t qq, uint32_t lane) {
        static_assert(kHeadDim % 4 == 0 && kHeadDim <= 128, "one warp spans a query's head row in 4-byte lanes");
        const uint32_t dim_lane = lane % kDimLanes, slice = lane / kDimLanes;
        float u[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 8
        for (int k = 0; k < kHeads / kHeadSlices; ++k) {
            const uint32_t h = static_cast<uint32_t>(k * kHeadSlices) + slice;
            const uint32_t offset = prims::swizzle_offset<kHeadDim>(head_row(qq, h) * kHeadDim + 4 * dim_lane);
            float x[4];
            ptx::unpack_e4m3x4(*reinterpret_cast<const uint32_t*>(tile + offset), x);
            const float w = weights[h];
#pragma unroll
            for (int i = 0; i < 4; ++i) u[i] = __fmaf_rn(w, x[i], u[i]);
        }
        // The slices' partial sums: a butterfly, so every lane holds the same (commutative) sums.
#pragma unroll
        for (int m = kDimLanes; m < 32; m <<= 1)
#pragma unroll
            for (int i = 0; i < 4; ++i) u[i] += __shfl_xor_sync(0xffffffffu, u[i], m);
        float top = fmaxf(fmaxf(fabsf(u[0]), fabsf(u[1])), fmaxf(fabsf(u[2]), fabsf(u[3])));
#pragma unroll
        for (int m = 1; m < kDimLanes; m <<= 1) top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, m));
        // s = 2^(7 - E) for top in [2^E, 2^(E+1)), from the exponent field e = E + 127; tiny or zero u takes the
        // largest s that keeps 1 / s normal. The two exponent fields sum to 254, so 1 / s is exact.
        const uint32_t e = (__float_as_uint(top) >> 23) & 0xffu;
        const uint32_t s_field = e >= 8 ? 261u - e : 253u;
        const float s = __uint_as_float(s_field << 23);
        const float inv_s = e == 0xffu ? __uint_as_float(0x7fc00000u) : __uint_as_float((254u - s_field) << 23);
        float t[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) t[i] = u[i] * s;
#pragma unroll
        for (int p = 0; p < kNumPieces; ++p) {
            const uint32_t packed = ptx::pack_e4m3x4(t[0], t[1], t[2], t[3]);
            if (slice == 0) {
                const uint32_t offset = prims::swizzle_offset<kHeadDim>(piece_row(qq, p) * kHeadDim + 4 * dim_lane);
                *reinterpret_cast<uint32_t*>(tile + offset) = packed;
            }
            if (p + 1 < kNumPieces) {
                float f[4];
                ptx::unpack_e4m3x4(packed, f);
#pragma unroll
                for (int i = 0; i < 4; ++i) t[i] = (t[i] - f[i]) * 16.f;  // exact: f is t's nearest E4M3
            }
        }
        return inv_s;
    }

    // The lane's share of u . k for its two rows, from the piece columns of its accumulator (`acc` points at the
    // first piece chunk: acc[4 j + e] is row r0, acc[4 j + 2 + e] row r1 of column 8 j + 2 c + e). `scale` is
    // 1 / s times 16^-(the lane's first piece).
    TESSERA_DEVICE static void sums(const float* acc, float scale, float& lin0, float& lin1) {
        // The lane's pieces in order of significance: chunk j, column e is its piece 2 j + e. Horner from the least.
        lin0 = acc[4 * (kChunks - 1) + 1];
        lin1 = acc[4 * (kChunks - 1) + 3];
#pragma unroll
        for (int k = kPiecesPerLane - 2; k >= 0; --k) {
            const int j = k / 2, e = k % 2;
            lin0 = __fmaf_rn(lin0, 0.0625f, acc[4 * j + e]);
            lin1 = __fmaf_rn(lin1, 0.0625f, acc[4 * j + 2 + e]);
        }
        lin0 *= scale;
        lin1 *= scale;
    }

    // `scale` for sums(): lane c's first piece is 0 (32 heads) or 2 (c / 2) (64 heads).
    TESSERA_DEVICE static float lane_scale(float inv_s, uint32_t lane) {
        return kLanesPerQuery == 2 && ((lane >> 1) & 1u) ? inv_s * (1.f / 256.f) : inv_s;
    }
};

}  // namespace tessera::sm90::mqa
