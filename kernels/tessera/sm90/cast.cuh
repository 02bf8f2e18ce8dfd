// FP32 -> BF16 (round to nearest even) of a row-major [rows, cols] matrix into a row-major destination of any 16-byte
// row stride: how einsum 'bmk,bnk->mn' turns its FP32 sum into a BF16 d. cols % 8 == 0 (the host checks), so every
// thread converts whole 8-column pieces: two 16-byte loads, one 16-byte store.
#pragma once

#include <tessera/common.cuh>
#include <tessera/ptx/memory.cuh>

namespace tessera::sm90 {

template <class Config>
struct CastFp32ToBf16Kernel {
    static constexpr int kNumThreads = Config::kNumThreads;

    struct Params {
        const float* src;  // [rows][cols], contiguous
        void* dst;         // [rows][ld_dst] BF16
        uint32_t rows, cols, ld_dst;
    };

    // A grid-stride loop over the 8-column pieces.
    static __device__ void run(const Params& p) {
        const uint32_t pieces_per_row = p.cols / 8;
        const uint64_t pieces = static_cast<uint64_t>(p.rows) * pieces_per_row;
        for (uint64_t i = blockIdx.x * static_cast<uint64_t>(kNumThreads) + threadIdx.x; i < pieces;
             i += static_cast<uint64_t>(gridDim.x) * kNumThreads) {
            const uint32_t row = static_cast<uint32_t>(i / pieces_per_row);
            const uint32_t col = static_cast<uint32_t>(i - static_cast<uint64_t>(row) * pieces_per_row) * 8;
            const float4* in = reinterpret_cast<const float4*>(p.src + static_cast<uint64_t>(row) * p.cols + col);
            const float4 x = in[0], y = in[1];
            uint4 out;
            out.x = ptx::pack_bf16x2(x.x, x.y);
            out.y = ptx::pack_bf16x2(x.z, x.w);
            out.z = ptx::pack_bf16x2(y.x, y.y);
            out.w = ptx::pack_bf16x2(y.z, y.w);
            *reinterpret_cast<uint4*>(static_cast<uint16_t*>(p.dst) + static_cast<uint64_t>(row) * p.ld_dst + col) =
                out;
        }
    }
};

}  // namespace tessera::sm90
