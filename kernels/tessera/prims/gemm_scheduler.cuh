// Tile sequence of the FP8 GEMM kernel for every problem kind: dense, and the three MoE groupings. Producer and
// consumers each run one instance and take identical decisions (they read the same device data), so no tile
// information crosses the warp roles.
//
// Kinds (GemmKind, the kernel's Config::kGemmKind; the host mirrors the numbers in src/ops/fp8_gemm_specs.hpp):
//   kDense       one [M, N] problem; the persistent grouped rasterization of scheduler.cuh.
//   kContiguous  A [M_total, K] whose BM-row blocks each belong to one expert (grouped_layout[row] = expert id, -1 =
//                padding). Same raster as dense; the expert comes from the block's first row. A block whose first
//                row is padding is a "zero tile": no loads, zeros stored. Padding rows inside a computed block are
//                zeroed in the epilogue (row_mask), so D is exact whatever A holds there. Multicast pairs only when
//                both m-blocks belong to the same expert.
//   kPsum        grouped_layout[g] = end row of group g; group g starts at align(end[g-1], alignment). Tiles walk
//                the groups in order (each group rasterized on its own); rows past end[g] (or past M) are never
//                stored.
//   kMasked      A [G, M_max, K] flattened to [G*M_max, K]; group g has masked_m[g] = grouped_layout[g] rows (read on
//                the device, clamped to [0, M_max]); rows past masked_m[g] are never stored.
//   kKGrouped    same M, N per group, K = k_g per group (host-known, in the kernel parameters with per-group tensor
//                maps); groups with k_g = 0 have no tiles; D rows offset by g*M.
//   kBatched     num_groups problems of one [M, N, K] shape; a tile's rows are group-local (the kernel addresses the
//                group as the third coordinate of its 3-D maps), and every tile is whole (the maps clip at M).
//   kBatchSum    one [M, N] output summed over a batch: the k-blocks of every batch entry form one flattened axis of
//                num_k_blocks, cut into splits of k_blocks_per_split; tile id = split * mn_tiles + mn tile, so the CTAs
//                running at once share a split's rows of A and B in L2. Tiles are reduce-added into D.
//
// Split-K (kSplitK > 1, dense only): the CTAs of a kSplitK-wide cluster share one tile (cluster id = tile id, one
// tile per cluster: the host launches tiles * kSplitK CTAs) and CTA rank r covers k-blocks [r*kb/S, (r+1)*kb/S);
// the kernel then reduces the partial sums across the cluster.
//
// A tile's rows are [a_row, a_row + kBlockM) of A's 2-D map; valid_rows < kBlockM marks a tile whose store must
// stop early (the epilogue then writes registers straight to global memory, row by row).
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/gemm_kind.cuh>
#include <tessera/prims/scheduler.cuh>
#include <tessera/ptx/memory.cuh>

namespace tessera::prims {

// A shape dimension: the Config constant kConstant where it is baked into the kernel, else the run-time value.
template <int kConstant>
TESSERA_DEVICE uint32_t static_or_dynamic(uint32_t runtime) {
    if constexpr (kConstant != kDynamic) return kConstant;
    else return runtime;
}

// The problem's M, N and K for a GEMM kernel whose Config bakes some of them in (kShapeM/N/K; kDynamic: read the
// parameters' m, n, k). Kernels derive from it.
template <class Config>
struct GemmShape {
    template <class P>
    TESSERA_DEVICE static uint32_t shape_m(const P& p) { return static_or_dynamic<Config::kShapeM>(p.m); }
    template <class P>
    TESSERA_DEVICE static uint32_t shape_n(const P& p) { return static_or_dynamic<Config::kShapeN>(p.n); }
    template <class P>
    TESSERA_DEVICE static uint32_t shape_k(const P& p) { return static_or_dynamic<Config::kShapeK>(p.k); }
};

struct GemmTile {
    TileCoord coord;         // m_block is group-local for kPsum/kMasked/kKGrouped
    uint32_t group;          // expert / group index (0 for dense)
    uint32_t a_row;          // first row of the tile in A's 2-D tensor map
    uint32_t d_row;          // first row of the tile in D's 2-D tensor map
    uint32_t sfa_col;        // first row of the tile in the SFA map's inner (MN) dimension
    uint32_t sf_k0;          // k-block offset of the group in the SF maps' outer dimension
    uint32_t k_begin;        // first k-block of this CTA's share of the tile (split-K; else 0)
    uint32_t num_k_blocks;   // k-blocks (kBlockK wide) of this tile (split-K: of this CTA's share)
    uint32_t valid_rows;     // rows from a_row that are stored (kBlockM: the whole tile, clipped by TMA at the edge)
    bool loads;              // false: zero tile (contiguous padding block): no TMA, the consumers store zeros
    bool row_mask;           // contiguous: some rows of the tile are padding (-1) and are stored as zeros
};

struct GemmSchedulerArgs {
    uint32_t m, n, num_k_blocks;    // M (dense, contiguous: total rows; masked: M_max; k-grouped: per group), N
    const int32_t* grouped_layout;  // ids / ends / masked_m; unused for dense and k-grouped
    uint32_t num_groups;
    uint32_t alignment;             // psum: group starts are aligned to this many rows
    const uint32_t* group_k;        // k-grouped: k_g per group (kernel parameters)
    const uint32_t* group_sf_k0;    // k-grouped: sum of ceil(k_h/128) over h < g
    uint32_t k_blocks_per_split;    // batch-sum: k-blocks of the flattened (batch, K) axis per tile
};

// kWarpAhead: the instance runs in whole warps (the consumers; the producer's is one elected thread), so contiguous
// lookahead ids can be spread over lanes (contiguous_tile). kBlockK: the kernel's k-block width, in which a k-grouped
// tile's k-blocks are counted (the groups' K are multiples of 128).
template <GemmKind kKind, int kBlockM, int kBlockN, int kGroupSize, int kClusterSize, bool kRasterAlongM,
          int kSplitK = 1, bool kWarpAhead = false, int kBlockK = 128>
struct GemmScheduler {
    // Full raster groups divide by the compile-time group size in dense and contiguous kernels (a group walk's raster
    // covers one MoE group). In contiguous kernels a runtime division was ~165 of the ~370 cycles per tile that
    // next() spent over dense's (H200).
    using Raster =
        PersistentTileScheduler<kBlockM, kBlockN, kGroupSize, kClusterSize, kRasterAlongM,
                                kKind == kDense || kKind == kContiguous>;
    // k-grouped pairs stay in one group (so walk equal k-block counts) when every group's tile count is even: the
    // host plans a cluster only then, and load_group traps otherwise rather than let the pair's rings diverge.
    static_assert(kClusterSize == 1 || kKind == kDense || kKind == kContiguous || kKind == kKGrouped,
                  "clusters need both CTAs of a pair to walk equal k-block counts: dense, contiguous, k-grouped");
    static_assert(kSplitK == 1 || (kKind == kDense && kClusterSize == 1), "split-K: dense, without multicast pairs");

    GemmSchedulerArgs args;
    uint32_t next_id;
    uint32_t stride;
    uint32_t split_rank = 0;  // split-K: this CTA's share of the tile
    // Group walk (psum, masked, k-grouped): the group holding ids [group_base, group_base + group_tiles()), rows
    // [group_start(), group_end) of A. Only what cannot be derived is kept: this state is live across the consumers'
    // mainloop, next to the accumulators (a masked 128x192 tile spilled with the derived values kept too).
    uint32_t group = 0, group_base = 0, group_end = 0;
    uint32_t psum_start = 0;  // psum: the aligned start of `group` (masked: group * M_max; k-grouped: 0)

    __device__ uint32_t group_start() const {
        if constexpr (kKind == kPsum) return psum_start;
        else if constexpr (kKind == kMasked) return group * args.m;
        else return 0;
    }
    __device__ uint32_t group_m_blocks() const { return ceil_div<uint32_t>(group_end - group_start(), kBlockM); }
    __device__ uint32_t group_tiles() const { return group_m_blocks() * n_blocks(); }

    // first_id and num_ctas count CTAs; with split-K they are turned into cluster ids.
    __device__ GemmScheduler(const GemmSchedulerArgs& a, uint32_t first_id, uint32_t num_ctas)
        : args(a), next_id(first_id / kSplitK), stride(num_ctas / kSplitK), split_rank(first_id % kSplitK) {
        if constexpr (kKind == kPsum || kKind == kMasked || kKind == kKGrouped || kKind == kBatched) load_group(0);
    }

    __device__ uint32_t n_blocks() const { return ceil_div<uint32_t>(args.n, kBlockN); }

    // Rows [group_start, group_end) of A belong to `group`; its tiles follow the previous groups' tiles.
    __device__ void load_group(uint32_t g) {
        group = g;
        if (g >= args.num_groups) return;
        if constexpr (kKind == kPsum) {
            const int32_t prev_end = g == 0 ? 0 : ptx::ld_global_nc(args.grouped_layout + g - 1);
            const int32_t end = ptx::ld_global_nc(args.grouped_layout + g);
            // Clamped to A's rows: an end row past M (a caller's error the host cannot see without a sync) must not
            // make the tiles store past D.
            psum_start = g == 0 ? 0u : align_up<uint32_t>(static_cast<uint32_t>(max(prev_end, 0)), args.alignment);
            psum_start = min(psum_start, args.m);
            group_end = min(max(static_cast<uint32_t>(max(end, 0)), psum_start), args.m);
        } else if constexpr (kKind == kMasked) {
            const int32_t rows = ptx::ld_global_nc(args.grouped_layout + g);
            group_end = group_start() + min(static_cast<uint32_t>(max(rows, 0)), args.m);
        } else if constexpr (kKind == kBatched) {
            group_end = args.m;
        } else {  // kKGrouped: every group has the full M; an empty K has no tiles
            group_end = args.group_k[g] == 0 ? 0u : args.m;
        }
        if constexpr (kKind == kKGrouped && kClusterSize > 1) {
            if (group_tiles() % 2 != 0) __trap();  // a host planning error: a pair would straddle two groups
        }
    }

    __device__ bool next(GemmTile& t) {
        const uint32_t id = next_id;
        next_id += stride;
        t.loads = true;
        t.row_mask = false;
        t.group = 0;
        t.sf_k0 = 0;
        t.k_begin = 0;
        t.num_k_blocks = args.num_k_blocks;
        t.valid_rows = kBlockM;
        if constexpr (kKind == kDense || kKind == kContiguous) {
            const Raster raster(args.m, args.n, 0, stride);
            if (id >= raster.num_tiles) return false;
            t.coord = raster.tile_at(id);
            t.a_row = t.d_row = t.sfa_col = t.coord.m_block * kBlockM;
            if constexpr (kKind == kContiguous) contiguous_tile(t, raster, id);
            if constexpr (kSplitK > 1) {
                t.k_begin = split_rank * args.num_k_blocks / kSplitK;
                t.num_k_blocks = (split_rank + 1) * args.num_k_blocks / kSplitK - t.k_begin;
            }
            return true;
        } else if constexpr (kKind == kBatchSum) {
            const Raster raster(args.m, args.n, 0, stride);
            const uint32_t split = id / raster.num_tiles;
            const uint32_t k_begin = split * args.k_blocks_per_split;
            if (k_begin >= args.num_k_blocks) return false;
            t.coord = raster.tile_at(id - split * raster.num_tiles);
            t.a_row = t.d_row = t.sfa_col = t.coord.m_block * kBlockM;
            t.k_begin = k_begin;
            t.num_k_blocks = min(args.k_blocks_per_split, args.num_k_blocks - k_begin);
            return true;
        } else {
            // ids only grow, so the walk over groups is shared by all of this CTA's tiles.
            uint32_t tiles = group_tiles();
            while (id - group_base >= tiles) {
                if (group >= args.num_groups) return false;
                group_base += tiles;
                load_group(group + 1);
                if (group >= args.num_groups) return false;
                tiles = group_tiles();
            }
            const uint32_t start = group_start();
            Raster raster(group_m_blocks() * kBlockM, args.n, 0, stride);
            t.coord = raster.tile_at(id - group_base);
            t.group = group;
            const uint32_t m0 = start + t.coord.m_block * kBlockM;
            t.valid_rows = min(static_cast<uint32_t>(kBlockM), group_end - m0);
            t.a_row = m0;
            if constexpr (kKind == kPsum) {
                t.d_row = t.sfa_col = m0;
            } else if constexpr (kKind == kBatched) {
                t.d_row = t.sfa_col = m0;
                t.valid_rows = kBlockM;
                t.sf_k0 = group * args.num_k_blocks;  // FP8: the groups' SFA stacked along K, as masked
            } else if constexpr (kKind == kMasked) {
                t.d_row = m0;
                t.sfa_col = m0 - start;  // SFA map: [G * num_k_blocks][align(M_max, 4)]
                t.sf_k0 = group * args.num_k_blocks;
            } else {
                t.d_row = group * args.m + m0;
                t.sfa_col = m0;
                t.sf_k0 = args.group_sf_k0[group];
                t.num_k_blocks = args.group_k[group] / kBlockK;
            }
            return true;
        }
    }

    // Contiguous without pairs reads the expert ids of this CTA's next tile one tile ahead: a tile's first read of
    // grouped_layout otherwise sits, as a dependent global load, between the previous tile's epilogue and this
    // tile's mainloop (the expert picks the B-scale rows and whether the tile loads at all).
    // kWarpAhead: even lanes read the first row's id, odd lanes the last row's, into one register per lane, taken
    // back by shuffles from lanes 0 and 1 when the tile starts. A warp-uniform read went to a uniform register right
    // after the load, so the consumers waited for it there: of the ~860 cycles per tile that contiguous spent over
    // dense on the same plan, this takes ~400 off (H200: K = 2048 rows 2.7 % faster).
    static constexpr int32_t kNotRead = -2;  // ids are >= -1
    int32_t ahead_first = kNotRead, ahead_last = kNotRead;  // kWarpAhead: ahead_first is this lane's id, or kNotRead
    bool have_ahead = false;                                // kWarpAhead: ahead_first holds the next tile's ids

    // kWarpAhead contiguous: the n-block and expert of the tile the next next() returns, from the lookahead ids,
    // without taking it (the consumers load its B scales before the epilogue of the tile at hand). False when there
    // is no next tile or it is a zero tile.
    __device__ bool peek_next(uint32_t& n_block, uint32_t& expert) const {
        static_assert(kKind == kContiguous && kWarpAhead && kClusterSize == 1, "peek_next: contiguous consumers");
        if (!have_ahead) return false;
        const int32_t e = __shfl_sync(0xffffffffu, ahead_first, 0);
        n_block = Raster(args.m, args.n, 0, stride).tile_at(next_id).n_block;
        expert = static_cast<uint32_t>(e);
        return e >= 0;
    }

    __device__ void contiguous_tile(GemmTile& t, const Raster& raster, uint32_t id) {
        const uint32_t m0 = t.a_row;
        const uint32_t last = min(m0 + static_cast<uint32_t>(kBlockM), args.m) - 1;
        int32_t expert, last_expert;
        if (kWarpAhead && kClusterSize == 1 && have_ahead) {
            expert = __shfl_sync(0xffffffffu, ahead_first, 0);
            last_expert = __shfl_sync(0xffffffffu, ahead_first, 1);
        } else if (!kWarpAhead && kClusterSize == 1 && ahead_first != kNotRead) {
            expert = ahead_first;
            last_expert = ahead_last;
        } else {
            expert = ptx::ld_global_nc(args.grouped_layout + m0);
            last_expert = ptx::ld_global_nc(args.grouped_layout + last);
        }
        if constexpr (kClusterSize == 1) {
            ahead_first = ahead_last = kNotRead;
            have_ahead = id + stride < raster.num_tiles;
            if (have_ahead) {
                const uint32_t m1 = raster.tile_at(id + stride).m_block * kBlockM;
                const uint32_t last1 = min(m1 + static_cast<uint32_t>(kBlockM), args.m) - 1;
                if constexpr (kWarpAhead) {
                    ahead_first = ptx::ld_global_nc(args.grouped_layout + (threadIdx.x % 2 == 0 ? m1 : last1));
                } else {
                    ahead_first = ptx::ld_global_nc(args.grouped_layout + m1);
                    ahead_last = ptx::ld_global_nc(args.grouped_layout + last1);
                }
            }
        }
        t.loads = expert >= 0;
        t.group = t.loads ? static_cast<uint32_t>(expert) : 0u;
        t.row_mask = t.loads && last_expert < 0;
        if constexpr (kClusterSize > 1) {
            // Both CTAs of the pair evaluate the same condition, so they agree on multicast.
            const uint32_t peer = t.coord.m_block ^ 1u;
            const int32_t peer_expert =
                peer < raster.num_m_blocks ? ptx::ld_global_nc(args.grouped_layout + peer * kBlockM) : -1;
            t.coord.multicast = t.coord.multicast && expert >= 0 && peer_expert == expert;
        } else {
            // Without a peer to keep in step, a zero tile skips the ring entirely.
            if (!t.loads) t.num_k_blocks = 0;
        }
    }
};

}  // namespace tessera::prims
