// The persistent scheduler's tile order, on the host: the dense kernels' shortcut for full raster groups (a division
// by the compile-time group size, kWholeGroupPath) must give the same tiles as the general path, for every id, in
// both raster directions, with and without clusters of two, including a partial last group.
#include <gtest/gtest.h>

#include <cstdint>

#include "host_device_macros.hpp"
#include <tessera/prims/scheduler.cuh>  // host-usable device header (kernels/ is on this target's include path)

namespace {

template <int kGroupSize, int kClusterSize, bool kAlongM>
void expect_same_order(uint32_t m, uint32_t n) {
    using Fast = tessera::prims::PersistentTileScheduler<128, 192, kGroupSize, kClusterSize, kAlongM, true>;
    using General = tessera::prims::PersistentTileScheduler<128, 192, kGroupSize, kClusterSize, kAlongM, false>;
    const Fast fast(m, n, 0, 132);
    const General general(m, n, 0, 132);
    ASSERT_EQ(fast.num_tiles, general.num_tiles);
    for (uint32_t id = 0; id < fast.num_tiles; ++id) {
        const auto a = fast.tile_at(id);
        const auto b = general.tile_at(id);
        ASSERT_EQ(a.m_block, b.m_block) << "m " << m << " n " << n << " id " << id;
        ASSERT_EQ(a.n_block, b.n_block) << "m " << m << " n " << n << " id " << id;
        ASSERT_EQ(a.multicast, b.multicast) << "m " << m << " n " << n << " id " << id;
        ASSERT_EQ(a.peer_alive, b.peer_alive) << "m " << m << " n " << n << " id " << id;
    }
}

TEST(TileRaster, FullGroupShortcutKeepsTheOrder) {
    // m-block counts around the group sizes (8, 16) and their multiples; n from one to many n-blocks.
    for (uint32_t m : {128u, 1000u, 2048u, 2176u, 4096u, 5000u, 32768u}) {
        for (uint32_t n : {192u, 576u, 2112u, 7168u, 24576u}) {
            expect_same_order<8, 1, true>(m, n);
            expect_same_order<16, 1, true>(m, n);
            expect_same_order<16, 1, false>(m, n);
            expect_same_order<16, 2, true>(m, n);
            expect_same_order<8, 2, false>(m, n);
        }
    }
}

TEST(TileRaster, GroupedOrderOnAKnownShape) {
    // 20 m-blocks, 3 n-blocks, groups of 16: ids of the first (full) group walk m across 16 blocks before n moves,
    // those of the partial last group (4 blocks wide) across 4.
    using Fast = tessera::prims::PersistentTileScheduler<128, 192, 16, 1, true, true>;
    const Fast s(20 * 128, 3 * 192, 0, 132);
    EXPECT_EQ(s.tile_at(15).m_block, 15u);
    EXPECT_EQ(s.tile_at(16).m_block, 0u);
    EXPECT_EQ(s.tile_at(16).n_block, 1u);
    EXPECT_EQ(s.tile_at(48).m_block, 16u);
    EXPECT_EQ(s.tile_at(52).m_block, 16u);
    EXPECT_EQ(s.tile_at(52).n_block, 1u);
}

}  // namespace
