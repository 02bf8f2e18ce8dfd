// Epilogue helpers: write a 64-row wgmma accumulator slice into a shared-memory output tile laid out exactly as a TMA
// store with the given swizzle reads it, so the TMA store (or reduce-add) can ship it to global memory.
//
// Tile layout: [kNumAtoms][kTileRows][kAtomBytes], an "atom" being kAtomCols = kAtomBytes / element-size columns;
// kAtomBytes = the swizzle width (128/64/32 B), or without swizzle the whole row (kBlockN * size) or, for FP32,
// pick_unswizzled_atom_bytes' odd-sector slice of it. Within each
// 1024-byte-aligned region, TMA's SWIZZLE_xB XORs the 16-byte chunk bits [4, 4+log2(x/16)) with address bits
// [7, ...): swizzle_offset reproduces that, which also makes the fragment writes bank-conflict free.
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/smem_desc.cuh>
#include <tessera/prims/store_layout.cuh>
#include <tessera/ptx/memory.cuh>

namespace tessera::prims {

template <int kBlockN, int kTileRows, int kElemBytes>
struct SwizzledOutputTile {
    static constexpr int kUnswizzledAtomBytes = pick_unswizzled_atom_bytes(kBlockN * kElemBytes, kElemBytes);
    static constexpr int kSwizzleBytes = kUnswizzledAtomBytes ? 0 : pick_store_swizzle(kBlockN * kElemBytes);
    static constexpr int kAtomBytes = kUnswizzledAtomBytes ? kUnswizzledAtomBytes
                                      : kSwizzleBytes != 0 ? kSwizzleBytes
                                                           : kBlockN * kElemBytes;
    static constexpr int kAtomCols = kAtomBytes / kElemBytes;
    static constexpr int kNumAtoms = kBlockN / kAtomCols;
    static constexpr int kAtomStride = kTileRows * kAtomBytes;  // bytes between atoms
    static constexpr int kBytes = kNumAtoms * kAtomStride;
    static_assert(kBlockN % kAtomCols == 0, "atoms tile the row exactly");
    static_assert(kAtomBytes % 16 == 0, "TMA boxes and stmatrix rows are 16-byte granular");

    // Byte offset of (row, col) in the tile; col must be 16-byte aligned within its atom for stmatrix rows.
    TESSERA_DEVICE static uint32_t offset(uint32_t row, uint32_t col) {
        const uint32_t atom = col / kAtomCols;
        const uint32_t in_atom = (col % kAtomCols) * kElemBytes;
        return swizzle_offset<kSwizzleBytes>(atom * kAtomStride + row * kAtomBytes + in_atom);
    }

    // BF16 output: each pair of 8-column chunks goes out as one stmatrix.x4 (rows r0..r0+7 and r0+8..r0+15 of both
    // chunks); an odd last chunk uses stmatrix.x2. `row_base` is the slice's first tile row.
    template <int kChunks>
    TESSERA_DEVICE static void write_bf16(uint32_t tile_addr, const float* acc, uint32_t row_base, uint32_t warp,
                                          uint32_t lane) {
        static_assert(kElemBytes == 2, "BF16 tile");
        const uint32_t row = row_base + warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
        for (int i = 0; i + 1 < kChunks; i += 2) {
            const uint32_t col = (i + (lane >> 4)) * 8;
            ptx::stmatrix_x4(tile_addr + offset(row, col), ptx::pack_bf16x2(acc[4 * i + 0], acc[4 * i + 1]),
                             ptx::pack_bf16x2(acc[4 * i + 2], acc[4 * i + 3]),
                             ptx::pack_bf16x2(acc[4 * i + 4], acc[4 * i + 5]),
                             ptx::pack_bf16x2(acc[4 * i + 6], acc[4 * i + 7]));
        }
        if constexpr (kChunks % 2 == 1) {
            constexpr int i = kChunks - 1;
            ptx::stmatrix_x2(tile_addr + offset(row, i * 8), ptx::pack_bf16x2(acc[4 * i + 0], acc[4 * i + 1]),
                             ptx::pack_bf16x2(acc[4 * i + 2], acc[4 * i + 3]));
        }
    }

    // FP32 output: two 8-byte stores per chunk (rows r0 and r0+8).
    template <int kChunks>
    TESSERA_DEVICE static void write_f32(uint32_t tile_addr, const float* acc, uint32_t row_base, uint32_t warp,
                                         uint32_t lane) {
        static_assert(kElemBytes == 4, "FP32 tile");
        const uint32_t row0 = row_base + warp * 16 + lane / 4;
#pragma unroll
        for (int i = 0; i < kChunks; ++i) {
            const uint32_t col = i * 8 + (lane % 4) * 2;
            ptx::st_shared_v2(tile_addr + offset(row0, col), acc[4 * i + 0], acc[4 * i + 1]);
            ptx::st_shared_v2(tile_addr + offset(row0 + 8, col), acc[4 * i + 2], acc[4 * i + 3]);
        }
    }
};

}  // namespace tessera::prims
