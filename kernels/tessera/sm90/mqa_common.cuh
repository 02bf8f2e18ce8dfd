// Device parts the lightning-indexer kernels share (sm90/mqa_logits.cuh, and any kernel scoring FP8 KV rows against
// FP8 query heads with wgmma):
//   - K-major wgmma descriptors for the 32-, 64- and 128-byte swizzles (a head dim of 32, 64 or 128 FP8 bytes is one
//     swizzle row, so each operand row is exactly one atom wide);
//   - a 4-D TMA load (the non-paged kernel permutes Q's heads into its B tile with it);
//   - predicated FP32 / BF16 global stores;
//   - the weighted-ReLU head reduction over an m64nN accumulator (weighted_relu_sums, finish_logit).
//
// The head reduction. With s the FP32 score of one (KV row, head), w the head's weight and k the KV row's scale,
// the logit term is w * ReLU(k * s). ReLU is positively homogeneous and 2 ReLU(x) = x + |x|, so
//     sum_h w_h ReLU(k s_h) = k/2 * (sum_h w_h s_h + sign(k) * sum_h w_h |s_h|)
// for any sign of k (k < 0: ReLU(k s) = k min(s, 0) = k (s - |s|) / 2). Both sums are plain FFMAs (|s| is a free
// operand modifier), so a (row, head) element costs two FMA-pipe instructions and the scale one multiply per row.
#pragma once

#include <tessera/common.cuh>

namespace tessera::sm90::mqa {

// wgmma descriptor of a K-major tile whose rows are kRowBytes (32, 64 or 128) apart and were written by TMA with
// the kRowBytes swizzle, 8-row groups 8 * kRowBytes apart (PTX "Matrix Descriptor Format"). The tile starts on an
// (8 * kRowBytes)-byte boundary, so the base offset stays 0; a k32 step inside the row adds 32 bytes to the start.
//   bits  0-13 start >> 4; 16-29 leading byte offset >> 4 (unused: one atom along K); 32-45 stride byte offset >> 4;
//   bits 62-63 layout: 1 = 128-byte, 2 = 64-byte, 3 = 32-byte swizzle.
template <int kRowBytes>
TESSERA_DEVICE uint64_t make_desc_kmajor(uint32_t smem_addr) {
    static_assert(kRowBytes == 32 || kRowBytes == 64 || kRowBytes == 128, "one swizzle row: 32, 64 or 128 bytes");
    constexpr uint64_t kLayout = kRowBytes == 128 ? 1 : (kRowBytes == 64 ? 2 : 3);
    constexpr uint64_t kStrideByteOffset = (8 * kRowBytes) >> 4;
    return static_cast<uint64_t>((smem_addr & 0x3ffffu) >> 4) | (1ull << 16) | (kStrideByteOffset << 32) |
           (kLayout << 62);
}

// wraps cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes
TESSERA_DEVICE void tma_load_4d(uint32_t smem_dst, const TmaDescriptor& desc, uint32_t bar, int32_t c0, int32_t c1,
                                int32_t c2, int32_t c3) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
        "[%2];" ::"r"(smem_dst),
        "l"(reinterpret_cast<uint64_t>(&desc)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
}

// Predicated stores (@p st): the condition stays a predicate rather than a branch, so the consumers' tile loop keeps
// uniform control flow (and its wgmma descriptors in uniform registers).
TESSERA_DEVICE void st_global_f32_if(bool pred, float* ptr, float x) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p st.global.f32 [%0], %1;\n}" ::"l"(ptr), "f"(x),
                 "r"(static_cast<uint32_t>(pred))
                 : "memory");
}
// x rounded to BF16 (nearest even), stored at ptr.
TESSERA_DEVICE void st_global_bf16_if(bool pred, uint16_t* ptr, float x) {
    asm volatile(
        "{\n .reg .pred p;\n .reg .b16 h;\n setp.ne.b32 p, %2, 0;\n cvt.rn.bf16.f32 h, %1;\n"
        " @p st.global.b16 [%0], h;\n}" ::"l"(ptr),
        "f"(x), "r"(static_cast<uint32_t>(pred))
        : "memory");
}

// The weighted sums of one thread's share of an m64nN FP32 accumulator (N = 8 * kChunks). The wgmma fragment gives
// each thread two rows (r0, r1 = r0 + 8) and, per 8-column chunk i, the columns 8i + 2c and 8i + 2c + 1 (c = lane % 4):
// acc[4i + e] is (r0, 8i + 2c + e), acc[4i + 2 + e] is (r1, 8i + 2c + e). w[2i + e] is the weight of that column.
// Out: lin_r = sum w * s and abs_r = sum w * |s| over the thread's columns, for r0 and r1. Eight independent FFMA
// chains (two per sum) keep the FMA pipe fed from a single warp.
template <int kChunks>
TESSERA_DEVICE void weighted_relu_sums(const float (&acc)[kChunks * 4], const float (&w)[kChunks * 2], float& lin0,
                                       float& abs0, float& lin1, float& abs1) {
    float l0[2] = {0.f, 0.f}, a0[2] = {0.f, 0.f}, l1[2] = {0.f, 0.f}, a1[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const float we = w[2 * i + e];
            const float s0 = acc[4 * i + e], s1 = acc[4 * i + 2 + e];
            l0[e] = __fmaf_rn(s0, we, l0[e]);
            a0[e] = __fmaf_rn(fabsf(s0), we, a0[e]);
            l1[e] = __fmaf_rn(s1, we, l1[e]);
            a1[e] = __fmaf_rn(fabsf(s1), we, a1[e]);
        }
    }
    lin0 = l0[0] + l0[1];
    abs0 = a0[0] + a0[1];
    lin1 = l1[0] + l1[1];
    abs1 = a1[0] + a1[1];
}

// lin + sign(scale) * abs: twice the weighted ReLU sum of the row before its scale (see the top of this file).
TESSERA_DEVICE float relu_pair(float lin, float abs, float scale) { return scale >= 0.f ? lin + abs : lin - abs; }

// The logit of a row from its (lane-reduced) relu_pair value and its KV scale.
TESSERA_DEVICE float finish_logit(float pair, float scale) { return pair * (0.5f * scale); }

}  // namespace tessera::sm90::mqa
