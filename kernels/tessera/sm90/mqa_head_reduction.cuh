// The weighted-ReLU head reduction of the lightning-indexer kernels over an m64nN FP32 accumulator
// (weighted_relu_sums, weighted_abs_sums, relu_pair, finish_logit): sm90/mqa_logits.cuh, and any kernel scoring
// FP8 KV rows against FP8 query heads with wgmma.
//
// The head reduction. With s the FP32 score of one (KV row, head), w the head's weight and k the KV row's scale,
// the logit term is w * ReLU(k * s). ReLU is positively homogeneous and 2 ReLU(x) = x + |x|, so
//     sum_h w_h ReLU(k s_h) = k/2 * (sum_h w_h s_h + sign(k) * sum_h w_h |s_h|)
// for any sign of k (k < 0: ReLU(k s) = k min(s, 0) = k (s - |s|) / 2). Both sums are plain FFMAs (|s| is a free
// operand modifier), so a (row, head) element costs two FMA-pipe instructions and the scale one multiply per row.
#pragma once

#include <tessera/common.cuh>

namespace tessera::sm90::mqa {

// The weighted sums of one thread's share of an m64nN FP32 accumulator (N = 8 * kChunks). The wgmma fragment gives
// each thread two rows (r0, r1 = r0 + 8) and, per 8-column chunk i, the columns 8i + 2c and 8i + 2c + 1 (c = lane % 4):
// acc[4i + e] is (r0, 8i + 2c + e), acc[4i + 2 + e] is (r1, 8i + 2c + e). w[2i + e] is the weight of that column.
// Out: lin_r = sum w * s and abs_r = sum w * |s| over the thread's columns, for r0 and r1. The four sums are four
// independent FFMA chains, enough for one warp to issue an FFMA every cycle (4-cycle dependent latency); more chains
// cost registers the indexer's consumers do not have (112 each, beside 64 accumulators and 32 weights).
template <int kChunks>
TESSERA_DEVICE void weighted_relu_sums(const float (&acc)[kChunks * 4], const float (&w)[kChunks * 2], float& lin0,
                                       float& abs0, float& lin1, float& abs1) {
    lin0 = abs0 = lin1 = abs1 = 0.f;
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const float we = w[2 * i + e];
            const float s0 = acc[4 * i + e], s1 = acc[4 * i + 2 + e];
            lin0 = __fmaf_rn(s0, we, lin0);
            abs0 = __fmaf_rn(fabsf(s0), we, abs0);
            lin1 = __fmaf_rn(s1, we, lin1);
            abs1 = __fmaf_rn(fabsf(s1), we, abs1);
        }
    }
}

// The |s| sum alone, where the linear sum comes from the tensor cores (mqa_query_pieces.cuh): acc as above (the
// first kChunks chunks), abs_r = sum w * |s| over the thread's columns. The weights come from shared memory, four per
// 16-byte load (w[2 i + e] as above, 16-byte aligned), so they hold no registers across the wgmma. Four chains (two
// per row, by column parity).
template <int kChunks>
TESSERA_DEVICE void weighted_abs_sums(const float* acc, const float* w, float& abs0, float& abs1) {
    static_assert(kChunks % 2 == 0, "two chunks per 16-byte load of weights");
    float a0[2] = {0.f, 0.f}, a1[2] = {0.f, 0.f};
#pragma unroll
    for (int m = 0; m < kChunks / 2; ++m) {
        const float4 w4 = reinterpret_cast<const float4*>(w)[m];
        const float wm[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int i = 2 * m + k / 2, e = k % 2;
            a0[e] = __fmaf_rn(fabsf(acc[4 * i + e]), wm[k], a0[e]);
            a1[e] = __fmaf_rn(fabsf(acc[4 * i + 2 + e]), wm[k], a1[e]);
        }
    }
    abs0 = a0[0] + a0[1];
    abs1 = a1[0] + a1[1];
}

// lin + sign(scale) * abs: twice the weighted ReLU sum of the row before its scale (see the top of this file).
TESSERA_DEVICE float relu_pair(float lin, float abs, float scale) { return scale >= 0.f ? lin + abs : lin - abs; }

// The logit of a row from its (lane-reduced) relu_pair value and its KV scale.
TESSERA_DEVICE float finish_logit(float pair, float scale) { return pair * (0.5f * scale); }

}  // namespace tessera::sm90::mqa
