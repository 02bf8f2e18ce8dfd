// The D store layout rule of the FP32/BF16 output tiles (prims/epilogue.cuh), in a header with no device code, so
// that CPU tests can check the host's mirror of it (heuristics::fp8_gemm_store_layout) against the kernel's.
#pragma once

#include <tessera/common.cuh>

namespace tessera::prims {

// Largest TMA swizzle (128, 64 or 32 bytes) dividing a row of kRowBytes; 0 = no swizzle.
__host__ __device__ constexpr int pick_store_swizzle(int row_bytes) {
    return row_bytes % 128 == 0 ? 128 : row_bytes % 64 == 0 ? 64 : row_bytes % 32 == 0 ? 32 : 0;
}

// The largest slice of a row that is an odd number of 32-byte sectors (0 if the row is not a multiple of 32 bytes).
__host__ __device__ constexpr int odd_sector_bytes(int row_bytes) {
    if (row_bytes % 32 != 0) return 0;
    int bytes = row_bytes;
    while ((bytes / 32) % 2 == 0) bytes /= 2;
    return bytes;
}

// FP32 tiles go out unswizzled in atoms of an odd number of sectors when those are at least twice the swizzle width
// (BN = 136, 152: whole 544- and 608-byte rows; BN = 144: two 288-byte atoms): an odd row pitch keeps the fragment
// writes conflict-free as the swizzle does, and a wide box row costs the TMA reduce-add a few L2 requests where
// 32- or 64-byte swizzle atoms cost one each per 8 or 16 columns. Returns the atom width; 0 = keep the swizzle.
__host__ __device__ constexpr int pick_unswizzled_atom_bytes(int row_bytes, int elem_bytes) {
    const int odd = odd_sector_bytes(row_bytes);
    return elem_bytes == 4 && odd >= 2 * pick_store_swizzle(row_bytes) && odd / elem_bytes <= 256 ? odd : 0;
}

}  // namespace tessera::prims
