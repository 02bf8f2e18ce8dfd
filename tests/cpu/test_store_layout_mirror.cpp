// The host's D store layout (heuristics::fp8_gemm_store_layout, which builds the D tensor map) against the kernel's
// rule (kernels/tessera/prims/store_layout.cuh, compiled here for the host): a mismatch would make the TMA store
// read a shared-memory tile laid out differently from the one the epilogue wrote.
#include <gtest/gtest.h>

#include <utility>

#include "heuristics/fp8_gemm_plan.hpp"

#define __host__
#define __device__
#include <tessera/prims/store_layout.cuh>  // host-usable device header (kernels/ is on this target's include path)
#undef __host__
#undef __device__

namespace {

using tessera::heuristics::Fp8GemmMode;

// The kernel's choice (SwizzledOutputTile): swizzle and atom width in columns.
std::pair<int, int> kernel_layout(int block_n, int elem_bytes) {
    const int row = block_n * elem_bytes;
    const int unswizzled = tessera::prims::pick_unswizzled_atom_bytes(row, elem_bytes);
    const int swizzle = unswizzled ? 0 : tessera::prims::pick_store_swizzle(row);
    const int atom = unswizzled ? unswizzled : swizzle ? swizzle : row;
    return {swizzle, atom / elem_bytes};
}

std::pair<int, int> host_layout(Fp8GemmMode mode, int block_n) {
    int swizzle = -1, box_n = -1;
    tessera::heuristics::fp8_gemm_store_layout(mode, block_n, &swizzle, &box_n);
    return {swizzle, box_n};
}

TEST(StoreLayout, HostMirrorsTheKernelForEveryTileWidth) {
    for (int block_n = 8; block_n <= 256; block_n += 8) {
        SCOPED_TRACE(block_n);
        EXPECT_EQ(host_layout(Fp8GemmMode::k1D2D, block_n), kernel_layout(block_n, 2));
        EXPECT_EQ(host_layout(Fp8GemmMode::k1D1D, block_n), kernel_layout(block_n, 4));
    }
}

// FP32 rows of an odd number of 32-byte sectors go out unswizzled in whole rows (or in odd-sector halves); others
// keep the widest swizzle that divides the row. BF16 always keeps the swizzle.
TEST(StoreLayout, Fp32OddSectorRowsGoOutUnswizzled) {
    using L = std::pair<int, int>;
    EXPECT_EQ(host_layout(Fp8GemmMode::k1D1D, 152), L(0, 152));  // 608 B = 19 sectors
    EXPECT_EQ(host_layout(Fp8GemmMode::k1D1D, 136), L(0, 136));  // 17 sectors
    EXPECT_EQ(host_layout(Fp8GemmMode::k1D1D, 144), L(0, 72));   // 18 sectors: two atoms of 9
    EXPECT_EQ(host_layout(Fp8GemmMode::k1D1D, 160), L(128, 32)); // 5-sector atoms are not twice the 128-byte swizzle
    EXPECT_EQ(host_layout(Fp8GemmMode::k1D1D, 128), L(128, 32));
    EXPECT_EQ(host_layout(Fp8GemmMode::k1D1D, 56), L(0, 56));    // 7 sectors
    EXPECT_EQ(host_layout(Fp8GemmMode::k1D2D, 144), L(32, 16));
    EXPECT_EQ(host_layout(Fp8GemmMode::k1D2D, 192), L(128, 64));
}

}  // namespace
