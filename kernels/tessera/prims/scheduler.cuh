// Persistent static tile scheduler with grouped rasterization, usable on the host (CPU tests enumerate the tile order)
// and on the device. CTA c visits tile ids c, c + stride, c + 2*stride, ... (stride = number of CTAs in the grid).
//
// Rasterization: the "primary" dimension (m when kRasterAlongM, else n) is cut into groups of kGroupSize blocks; inside
// a group the id moves fastest along the primary dimension, so one wave of CTAs touches about kGroupSize primary
// blocks and stride/kGroupSize secondary blocks, which keeps both operands' working set in L2.
//
// Clusters of 2 (TMA multicast): the CTAs of a cluster have consecutive ids (2j, 2j+1) and get adjacent primary blocks
// with the same secondary block, so they share the secondary operand (B when rastering along m). A group with an odd
// width is split into an even part and a one-wide strip; strip tiles never multicast, so a pair never straddles two
// secondary blocks. `peer_alive` is false when the peer id is past the last tile (odd tile count).
#pragma once

#include <tessera/common.cuh>

namespace tessera::prims {

struct TileCoord {
    uint32_t m_block;
    uint32_t n_block;
    bool multicast;   // both CTAs of the cluster work on tiles sharing one operand, loaded once and multicast
    bool peer_alive;  // the other CTA of the cluster has a tile in this round (always true without clusters)
};

// kWholeGroupPath: full raster groups divide by the compile-time kGroupSize (see tile_at); GemmScheduler turns it on
// for dense kernels only.
template <int kBlockM, int kBlockN, int kGroupSize, int kClusterSize, bool kRasterAlongM, bool kWholeGroupPath = true>
struct PersistentTileScheduler {
    static_assert(kGroupSize >= 1, "group size must be positive");
    static_assert(kClusterSize == 1 || kClusterSize == 2, "clusters of 1 or 2 CTAs");
    static_assert(kClusterSize == 1 || kGroupSize % 2 == 0, "an even group keeps both CTAs of a pair in one group");

    uint32_t num_m_blocks;
    uint32_t num_n_blocks;
    uint32_t num_tiles;
    uint32_t stride;
    uint32_t next_id;

    __host__ __device__ PersistentTileScheduler(uint32_t m, uint32_t n, uint32_t first_id, uint32_t num_ctas)
        : num_m_blocks(ceil_div<uint32_t>(m, kBlockM)),
          num_n_blocks(ceil_div<uint32_t>(n, kBlockN)),
          num_tiles(num_m_blocks * num_n_blocks),
          stride(num_ctas),
          next_id(first_id) {}

    // The next tile of this CTA; false when it has none left.
    __host__ __device__ bool next(TileCoord& tile) {
        if (next_id >= num_tiles) return false;
        tile = tile_at(next_id);
        next_id += stride;
        return true;
    }

    __host__ __device__ TileCoord tile_at(uint32_t id) const {
        const uint32_t num_primary = kRasterAlongM ? num_m_blocks : num_n_blocks;
        const uint32_t num_secondary = kRasterAlongM ? num_n_blocks : num_m_blocks;
        const uint32_t per_group = num_secondary * kGroupSize;
        const uint32_t group = id / per_group;
        const uint32_t first = group * kGroupSize;
        const uint32_t in_group = id - group * per_group;
        const uint32_t width = num_primary - first < kGroupSize ? num_primary - first : kGroupSize;

        uint32_t primary, secondary;
        bool multicast = kClusterSize > 1;
        if (kClusterSize > 1 && (width & 1u) != 0) {
            // Odd last group: an even-width part (pairs stay adjacent), then a one-wide strip without multicast.
            const uint32_t even = width - 1;
            if (in_group < even * num_secondary) {
                primary = first + in_group % even;
                secondary = in_group / even;
            } else {
                primary = first + even;
                secondary = in_group - even * num_secondary;
                multicast = false;
            }
        } else if (kWholeGroupPath && width == kGroupSize) {
            // Every group but the last: a compile-time divisor (a shift for 8 and 16) instead of a runtime division
            // on the path between two tiles.
            primary = first + in_group % kGroupSize;
            secondary = in_group / kGroupSize;
        } else {
            primary = first + in_group % width;
            secondary = in_group / width;
        }
        const bool peer_alive = kClusterSize == 1 || (id ^ 1u) < num_tiles;
        return TileCoord{kRasterAlongM ? primary : secondary, kRasterAlongM ? secondary : primary,
                         multicast && peer_alive, peer_alive};
    }
};

}  // namespace tessera::prims
