// The 1D2D B scales of the SM90 FP8 GEMM kernel (sm90/fp8_gemm.cuh), for P = Fp8GemmPolicy<Config>.
//
// SFB is FP32 [G][ceil(N/128)][ceil(K/128)] row-major, read with ordinary loads (no TMA, no barrier): a tile needs
// one or, where its columns straddle a 128-wide block, two values per k-block. With a compile-time K of at most
// kSbRegs * 32 k-blocks a tile's scales are loaded once, lane l of each warp holding k-blocks l, l + 32, ..., and
// each k-block takes its value from its lane by shuffle; otherwise the mainloop loads them two k-blocks ahead.
#pragma once

#include <tessera/common.cuh>
#include <tessera/ptx/memory.cuh>

namespace tessera::sm90 {

// 1D2D B scales of one tile: its first and (straddling tiles) second SFB row, offset to the tile's first k-block;
// with kSbRegs > 0 also the first two k-blocks' values and the rest in registers across the warp's lanes.
template <class P>
struct Fp8GemmBScales {
    static constexpr bool kIs1D1D = P::kIs1D1D;
    static constexpr int kBlockN = P::kBlockN;
    static constexpr int kSbRegs = P::kSbRegs;
    static constexpr bool kUniformSb = P::kUniformSb;
    static constexpr bool kEarlyScales = P::kEarlyScales;

    const float* lo_row;
    const float* hi_row;
    float first_lo[2], first_hi[2];
    float lo_regs[kSbRegs > 0 ? kSbRegs : 1];
    float hi_regs[kSbRegs > 0 && !kUniformSb ? kSbRegs : 1];

    // The SFB rows of the tile at column n0 of `group`, from k-block k_begin.
    TESSERA_DEVICE void set_rows(const float* sfb, uint32_t n, uint32_t sf_k, uint32_t group, uint32_t n0,
                                 uint32_t k_begin) {
        const uint32_t n_sf_blocks = ceil_div(n, 128u);
        lo_row = sfb + (static_cast<uint64_t>(group) * n_sf_blocks + n0 / 128) * sf_k + k_begin;
        const bool straddles = (n0 % 128) + kBlockN > 128 && (n0 / 128 + 1) * 128 < n;
        hi_row = straddles ? lo_row + sf_k : lo_row;
    }
    TESSERA_DEVICE void load_tile(uint32_t num_kb, uint32_t lane) {
        if constexpr (kEarlyScales) {
            // Volatile: issued where written, before the epilogue, not sunk to the values' first use.
            static_assert(kSbRegs == 1);
            lo_regs[0] = lane < num_kb ? ptx::ld_global_nc_volatile(lo_row + lane) : 0.f;
            if constexpr (!kUniformSb) hi_regs[0] = lane < num_kb ? ptx::ld_global_nc_volatile(hi_row + lane) : 0.f;
        } else if constexpr (kSbRegs > 0) {
#pragma unroll
            for (uint32_t i = 0; i < 2; ++i) {
                first_lo[i] = i < num_kb ? __ldg(lo_row + i) : 0.f;
                first_hi[i] = kUniformSb ? first_lo[i] : i < num_kb ? __ldg(hi_row + i) : 0.f;
            }
#pragma unroll
            for (int j = 0; j < kSbRegs; ++j) {
                const uint32_t kb = lane + 32u * j;
                lo_regs[j] = kb < num_kb ? __ldg(lo_row + kb) : 0.f;
                if constexpr (!kUniformSb) hi_regs[j] = kb < num_kb ? __ldg(hi_row + kb) : 0.f;
            }
        }
    }
    template <int kN>
    TESSERA_DEVICE static float from_lanes(const float (&regs)[kN], uint32_t kb) {
        float v = regs[0];
#pragma unroll
        for (int j = 1; j < kN; ++j) v = kb >= 32u * j ? regs[j] : v;
        return __shfl_sync(0xffffffffu, v, kb & 31u);
    }
    // The scales of k-block kb (relative to the tile's first). kb is warp-uniform; kLater: kb >= 2 is known (the
    // serial loop's reads two k-blocks ahead), so no test of it is left on the loop's path.
    template <bool kLater = false>
    TESSERA_DEVICE void at(uint32_t kb, float& lo, float& hi) const {
        if constexpr (kIs1D1D) {
            return;
        } else if constexpr (kSbRegs > 0) {
            if (!kEarlyScales && !kLater && kb < 2) {
                lo = kb == 0 ? first_lo[0] : first_lo[1];
                hi = kb == 0 ? first_hi[0] : first_hi[1];
            } else {
                lo = from_lanes(lo_regs, kb);
                hi = kUniformSb ? lo : from_lanes(hi_regs, kb);
            }
        } else {
            lo = ptx::ld_global_nc_volatile(lo_row + kb);
            hi = kUniformSb ? lo : ptx::ld_global_nc_volatile(hi_row + kb);
        }
    }
};

}  // namespace tessera::sm90
