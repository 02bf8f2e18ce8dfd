// Tile epilogues of the SM90 GEMM kernels (sm90/fp8_gemm.cuh, sm90/bf16_gemm.cuh), for K = the kernel: the
// swizzled-tile TMA store (or reduce-add), the row-clipped direct store of grouped tiles, the exact zeros of contiguous
// padding rows, and the split-K reduction through distributed shared memory. Every function runs in the consumer
// warpgroups, on the FP32 accumulator acc[wave][kBlockN/2] in the wgmma m64 fragment layout.
//
// What K provides: Params (tensor_map_d, d, ld_d, grouped_layout), SharedStorage with d_tile_addr / d_free_barrier,
// OutTile, shape_m / shape_n, and the plan's constants below: kOutF32 (D is FP32, else BF16), kReduceAdd (tiles are
// added into D, else stored), kBlockM, kBlockN, kNumWaves, kWaveRows, kFinalRegs, kSplitK, kNumMathThreads,
// kNumMathWarpgroups, kEpilogueBarrierBase, kClusterSize, kKind, kDInRing (with kDInRingBarrier), kDHalves,
// kNumNSplits; optionally kHeadLeft, kHeadMid, kHeadRight (skip-head-mid, below).
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/gemm_scheduler.cuh>
#include <tessera/ptx/memory.cuh>
#include <tessera/ptx/sync.cuh>
#include <tessera/ptx/tma.cuh>

namespace tessera::sm90 {

template <class K>
struct GemmEpilogue {
    using Params = typename K::Params;
    using SharedStorage = typename K::SharedStorage;
    using OutTile = typename K::OutTile;
    static constexpr bool kOutF32 = K::kOutF32;
    static constexpr bool kReduceAdd = K::kReduceAdd;
    static constexpr int kBlockM = K::kBlockM;
    static constexpr int kBlockN = K::kBlockN;
    static constexpr int kNumWaves = K::kNumWaves;
    static constexpr int kWaveRows = K::kWaveRows;
    static constexpr int kFinalRegs = K::kFinalRegs;
    static constexpr int kSplitK = K::kSplitK;
    static constexpr int kNumMathThreads = K::kNumMathThreads;
    static constexpr uint32_t kEpilogueBarrierBase = K::kEpilogueBarrierBase;
    static constexpr int kClusterSize = K::kClusterSize;

    TESSERA_DEVICE static uint32_t shape_m(const Params& p) { return K::shape_m(p); }
    TESSERA_DEVICE static uint32_t shape_n(const Params& p) { return K::shape_n(p); }

    // Skip-head-mid: the result's columns come in heads of kHeadLeft + kHeadRight, and D's in heads of kHeadLeft +
    // kHeadMid + kHeadRight whose mid columns are never written. Every store maps its first result column to D's;
    // the host keeps left and right multiples of the store atom, so no store straddles a head's parts.
    static constexpr uint32_t kHeadMid = [] {
        if constexpr (requires { K::kHeadMid; }) return static_cast<uint32_t>(K::kHeadMid);
        else return 0u;
    }();
    TESSERA_DEVICE static uint32_t d_col(uint32_t col) {
        if constexpr (kHeadMid == 0) {
            return col;
        } else {
            constexpr uint32_t kLeft = K::kHeadLeft, kWidth = K::kHeadLeft + K::kHeadRight;
            const uint32_t head = col / kWidth;
            return col + head * kHeadMid + (col - head * kWidth >= kLeft ? kHeadMid : 0u);
        }
    }

    // kReduceAdd, by the producer some k-blocks before a tile ends: the tile's D region (the C the TMA reduce-add
    // reads back) into L2, in the boxes of D's map. Unprefetched, the reduce-add waits on HBM for C at the end of
    // every tile, its read-modify-writes queued in the TMA unit in front of the next tile's loads.
    TESSERA_DEVICE static void prefetch_d_tile(const Params& p, const prims::GemmTile& tile) {
        const int32_t n0 = static_cast<int32_t>(tile.coord.n_block * kBlockN);
#pragma unroll
        for (int w = 0; w < kNumWaves; ++w)
#pragma unroll
            for (int g = 0; g < kNumMathThreads / 128; ++g)
#pragma unroll
                for (int atom = 0; atom < OutTile::kNumAtoms; ++atom)
                    ptx::tma_prefetch_l2_2d(p.tensor_map_d, n0 + atom * OutTile::kAtomCols,
                                            static_cast<int32_t>(tile.d_row + w * kWaveRows + g * 64));
    }

    // This thread's two fragment rows of wave w within the tile (the wgmma m64 accumulator layout).
    TESSERA_DEVICE static uint32_t fragment_row(int w, int half, uint32_t wg, uint32_t warp, uint32_t lane) {
        return w * kWaveRows + wg * 64 + warp * 16 + lane / 4 + 8 * half;
    }

    // Contiguous layout: rows marked -1 inside a computed tile are stored as exact zeros, whatever A holds there.
    TESSERA_DEVICE static void mask_padding_rows(const Params& p, float (&acc)[kNumWaves][kFinalRegs],
                                                 const prims::GemmTile& tile, uint32_t wg, uint32_t warp,
                                                 uint32_t lane) {
#pragma unroll
        for (int w = 0; w < kNumWaves; ++w)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const uint32_t row = tile.a_row + fragment_row(w, h, wg, warp, lane);
                if (row < shape_m(p) && ptx::ld_global_nc(p.grouped_layout + row) >= 0) continue;
#pragma unroll
                for (int c = 0; c < kBlockN / 8; ++c) acc[w][c * 4 + 2 * h] = acc[w][c * 4 + 2 * h + 1] = 0.f;
            }
    }

    // A tile whose rows stop early (valid_rows < kBlockM): each thread writes its fragment straight to global memory
    // (BF16 pairs, or FP32 reduce-adds for 1D1D), so rows past the group's end are never touched.
    TESSERA_DEVICE static void store_rows_direct(const Params& p, const float (&acc)[kNumWaves][kFinalRegs],
                                                 const prims::GemmTile& tile, uint32_t wg, uint32_t warp,
                                                 uint32_t lane) {
        const uint32_t n = shape_n(p);
        const uint32_t col0 = tile.coord.n_block * kBlockN + (lane % 4) * 2;
#pragma unroll
        for (int w = 0; w < kNumWaves; ++w)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const uint32_t r = fragment_row(w, h, wg, warp, lane);
                const bool row_ok = r < tile.valid_rows;
                const uint64_t row_offset = static_cast<uint64_t>(tile.d_row + r) * p.ld_d;
#pragma unroll
                for (int c = 0; c < kBlockN / 8; ++c) {
                    const uint32_t col = col0 + c * 8;  // even, and N is a multiple of 4: col + 1 < N too
                    // Predicated stores, not branches: a per-lane branch here made ptxas move the mainloop's wgmma
                    // descriptors through vector registers (masked 128x144: 16 R2UR per k-block, ~10 % slower).
                    const bool ok = row_ok && col < n;
                    const float x = acc[w][c * 4 + 2 * h], y = acc[w][c * 4 + 2 * h + 1];
                    static_assert(!kOutF32 || kReduceAdd, "direct row stores: BF16 stored, or reduce-added");
                    if constexpr (kReduceAdd && kOutF32) {
                        ptx::red_global_add_v2_if(ok, static_cast<float*>(p.d) + row_offset + d_col(col), x, y);
                    } else if constexpr (kReduceAdd) {  // BF16 D accumulated (the BF16 kernel's k-grouped tiles)
                        ptx::red_global_add_bf16x2_if(ok, static_cast<uint16_t*>(p.d) + row_offset + d_col(col),
                                                      ptx::pack_bf16x2(x, y));
                    } else {
                        ptx::st_global_b32_if(ok, static_cast<uint16_t*>(p.d) + row_offset + d_col(col),
                                              ptx::pack_bf16x2(x, y));
                    }
                }
            }
    }

    // Masked BF16 128-row tiles whose rows stop early go through store_tile too: staged in shared memory as a whole
    // tile is, then each thread of the warpgroup copies 16-byte pieces of the valid rows to global memory, kBlockN / 16
    // stores per thread in whole 128-byte lines. store_rows_direct issues kBlockN / 2 four-byte stores per thread from
    // registers, and on the H200 (masked e192) such a tile's epilogue took 2835 cycles against 2312 staged, and the
    // next tile started 1013 cycles later against 851. The 64-row decode tiles (e20) ran 0.2-0.5 % slower staged and
    // keep the direct stores. Psum tiles in two N halves (128x256) take the staged path: with the direct stores they
    // spilled 16 bytes at K = 2048 and 4096. Whole psum tiles keep the direct stores: staged, the 128x192 kernels
    // spilled 68-80 bytes.
    static constexpr bool kStagedRows =
        !kOutF32 && !kReduceAdd && !K::kDInRing && K::kNumMathWarpgroups == 2 &&
        (K::kKind == prims::kMasked || (K::kKind == prims::kPsum && K::kNumNSplits == 2));

    // kDHalves: the shared tile holds one N half of D at a time (columns [half * kHalfCols, + kHalfCols) of the tile,
    // in the first kHalfAtoms atoms).
    static constexpr int kHalves = K::kDHalves ? 2 : 1;
    static constexpr int kHalfCols = kBlockN / kHalves;
    static constexpr int kHalfChunks = kHalfCols / 8;
    static constexpr int kHalfAtoms = OutTile::kNumAtoms / kHalves;
    static_assert(!K::kDHalves || (!kOutF32 && !kReduceAdd && !K::kDInRing && kSplitK == 1 && OutTile::kNumAtoms % 2 == 0),
                  "D in halves: BF16 tiles of whole atoms per half, staged in their own shared memory");

    TESSERA_DEVICE static void copy_valid_rows(const Params& p, uint32_t tile_addr, const prims::GemmTile& tile,
                                               uint32_t wg, uint32_t warp, uint32_t lane, uint32_t half) {
        constexpr uint32_t kChunks = kHalfChunks, kPieces = kNumWaves * 64 * kChunks;
        const uint32_t n = shape_n(p), n0 = tile.coord.n_block * kBlockN + half * kHalfCols;
        uint16_t* d = static_cast<uint16_t*>(p.d) + static_cast<uint64_t>(tile.d_row) * p.ld_d + n0;
#pragma unroll
        for (uint32_t j = 0; j < (kPieces + 127) / 128; ++j) {
            const uint32_t t = j * 128 + warp * 32 + lane;
            const uint32_t i = min(t, kPieces - 1);  // a repeated last piece stores nothing
            const uint32_t w = i / (64 * kChunks), r = i % (64 * kChunks) / kChunks, c = i % kChunks;
            const uint32_t row = w * kWaveRows + wg * 64 + r;
            uint32_t x, y, z, v;
            ptx::ld_shared_v4(tile_addr + OutTile::offset(row, c * 8), x, y, z, v);
            // N is a multiple of 8 (the D map's 16-byte row stride), so a piece lies wholly inside N or past it.
            const bool ok = t < kPieces && row < tile.valid_rows && n0 + c * 8 < n;
            uint32_t col = c * 8;
            if constexpr (kHeadMid != 0) col = d_col(n0 + col) - n0;
            ptx::st_global_v4_if(ok, d + static_cast<uint64_t>(row) * p.ld_d + col, x, y, z, v);
        }
    }

    // The TMA boxes of a stored tile are issued by one lane of warp 0 (kOneLaneIssue) rather than by a loop over lanes:
    // on the H200 a dense FP8 128x192 tile's barrier-to-issued step fell from ~400 to ~150 cycles (32768x4096x2048
    // 378 -> 364 us). Not for reduce-adds, where the FP8 k-grouped scheduler lost its uniform registers to the
    // shuffles (5-12 % slower), nor masked (the K = 2048 kernel spilled), nor psum (its K = 4096 k-block loop moved the wgmma
    // descriptors through vector registers).
    static constexpr bool kOneLaneIssue =
        !kReduceAdd && (K::kKind == prims::kDense || K::kKind == prims::kContiguous);

    TESSERA_DEVICE static void store_tile(const Params& p, SharedStorage& smem, const float (&acc)[kNumWaves][kFinalRegs],
                                          const prims::GemmTile& tile, uint32_t wg, uint32_t warp, uint32_t lane) {
        const uint32_t barrier = kEpilogueBarrierBase + wg;
        const uint32_t tile_addr = K::d_tile_addr(smem);
#pragma unroll
        for (int half = 0; half < kHalves; ++half) {
            if constexpr (K::kDInRing) {
                // D goes over the ring's A stages, which both warpgroups' last wgmma may still read (B is shared, and
                // the stages are not divided by warpgroup). The previous tile's stores were drained in release_d_tile.
                ptx::named_barrier_sync(K::kDInRingBarrier, kNumMathThreads);
            } else {
                // The stores issued last (by warp 0: the previous tile's, or the first half's) must have read the
                // slice before it is overwritten; a staged copy of the first half is done by every thread at the bar.
                if (warp == 0) ptx::bulk_wait_group_read<0>();
                ptx::named_barrier_sync(barrier, 128);
            }
#pragma unroll
            for (int w = 0; w < kNumWaves; ++w) {
                const uint32_t row_base = w * kWaveRows + wg * 64;
                const float* slice = acc[w] + half * kHalfChunks * 4;
                if constexpr (kOutF32) OutTile::template write_f32<kHalfChunks>(tile_addr, slice, row_base, warp, lane);
                else OutTile::template write_bf16<kHalfChunks>(tile_addr, slice, row_base, warp, lane);
            }
            ptx::fence_proxy_async();  // generic smem writes -> visible to the TMA (async proxy) reads
            ptx::named_barrier_sync(barrier, 128);
            if (kStagedRows && tile.valid_rows < kBlockM) {
                copy_valid_rows(p, tile_addr, tile, wg, warp, lane, half);
            } else if (warp == 0 && kOneLaneIssue) {
                // Coordinates taken through shuffles are warp-uniform to ptxas, so they stay in uniform registers and
                // the boxes go out back to back; the loop over lanes below made each box a waterfall loop of R2UR.
                const uint32_t col = __shfl_sync(0xffffffffu, tile.coord.n_block * kBlockN + half * kHalfCols, 0);
                const uint32_t row = __shfl_sync(0xffffffffu, tile.d_row + wg * 64, 0);
                const uint32_t src0 = tile_addr + wg * 64 * OutTile::kAtomBytes;
                if (lane == 0) {
#pragma unroll
                    for (int w = 0; w < kNumWaves; ++w)
#pragma unroll
                        for (int atom = 0; atom < kHalfAtoms; ++atom)
                            ptx::tma_store_2d(p.tensor_map_d,
                                              src0 + atom * OutTile::kAtomStride + w * kWaveRows * OutTile::kAtomBytes,
                                              static_cast<int32_t>(d_col(col + atom * OutTile::kAtomCols)),
                                              static_cast<int32_t>(row + w * kWaveRows));
                    ptx::bulk_commit_group();
                }
            } else if (warp == 0) {
                for (uint32_t t = lane; t < kNumWaves * kHalfAtoms; t += 32) {
                    const uint32_t w = t / kHalfAtoms, atom = t % kHalfAtoms;
                    const uint32_t row_base = w * kWaveRows + wg * 64;
                    const uint32_t src = tile_addr + atom * OutTile::kAtomStride + row_base * OutTile::kAtomBytes;
                    const int32_t c0 = static_cast<int32_t>(d_col(tile.coord.n_block * kBlockN + half * kHalfCols +
                                                                  atom * OutTile::kAtomCols));
                    const int32_t c1 = static_cast<int32_t>(tile.d_row + row_base);
                    if constexpr (kReduceAdd) ptx::tma_reduce_add_2d(p.tensor_map_d, src, c0, c1);
                    else if constexpr (K::kKind == prims::kBatched)
                        ptx::tma_store_3d(p.tensor_map_d, src, c0, c1, static_cast<int32_t>(tile.group));
                    else ptx::tma_store_2d(p.tensor_map_d, src, c0, c1);
                }
                ptx::bulk_commit_group();
            }
        }
    }

    // kDInRing: once this warpgroup's stores have read D, the producer may refill the ring (the d_free barrier counts
    // one arrival per consumer warpgroup and tile).
    TESSERA_DEVICE static void release_d_tile(SharedStorage& smem, uint32_t warp, uint32_t lane) {
        if (warp == 0) {
            ptx::bulk_wait_group_read<0>();
            if (lane == 0) ptx::mbarrier_arrive(K::d_free_barrier(smem));
        }
    }

    // Split-K epilogue. Each cluster owns exactly one tile (the host launches tiles * kSplitK CTAs) and every CTA of
    // it holds partial sums of that tile:
    //   1. write the partial to the local buffer in fragment order, [wave][chunk][thread] float4 (conflict-free);
    //   2. cluster barrier (release / acquire: the partials are visible cluster-wide; the producer warpgroup takes
    //      part too, see run());
    //   3. CTA r owns the 8-column chunks c with c % kSplitK == r: each thread sums its fragment positions of those
    //      chunks over all CTAs' buffers (ld.shared::cluster, in rank order: deterministic) and stores them, as BF16
    //      or FP32 pairs, for the rows inside M (kReduceAdd: added to D's values, the C the host copied there, and
    //      rounded once);
    //   4. cluster barrier: no CTA exits while a peer still reads its buffer.
    // Threads whose fragment rows are all past M skip both the write and the read of those positions.
    // One element pair of the split-K sum into D (its owner thread alone touches it).
    template <class OutElem>
    TESSERA_DEVICE static void store_sum_pair(OutElem* ptr, float x, float y) {
        if constexpr (kOutF32) {
            if constexpr (kReduceAdd) {
                float cx, cy;
                ptx::ld_global_v2(ptr, cx, cy);
                x += cx;
                y += cy;
            }
            ptx::st_global_v2(ptr, x, y);
        } else {
            if constexpr (kReduceAdd) {
                const uint32_t c = ptx::ld_global_b32(ptr);  // two BF16: the lower half is the first column
                x += __uint_as_float(c << 16);
                y += __uint_as_float(c & 0xffff0000u);
            }
            ptx::st_global_b32(ptr, ptx::pack_bf16x2(x, y));
        }
    }

    TESSERA_DEVICE static void reduce_split_k(const Params& p, SharedStorage& smem,
                                              const float (&acc)[kNumWaves][kFinalRegs], const prims::GemmTile& tile,
                                              uint32_t wg, uint32_t warp, uint32_t lane) {
        constexpr int kChunks = kBlockN / 8;
        using OutElem = conditional_t<kOutF32, float, uint16_t>;
        const uint32_t thread = wg * 128 + warp * 32 + lane;
        const uint32_t buffer = K::d_tile_addr(smem);
        const uint32_t rows = min(static_cast<uint32_t>(kBlockM), shape_m(p) - tile.d_row);
        const uint32_t own_slot = buffer + thread * 16u;  // + (w * kChunks + c) * kNumMathThreads * 16 per float4
        const auto slot = [own_slot](int w, int c) {
            return own_slot + static_cast<uint32_t>(w * kChunks + c) * (kNumMathThreads * 16u);
        };
#pragma unroll
        for (int w = 0; w < kNumWaves; ++w) {
            if (fragment_row(w, 0, wg, warp, lane) >= rows) continue;
#pragma unroll
            for (int c = 0; c < kChunks; ++c)
                ptx::st_shared_v4(slot(w, c), acc[w][c * 4], acc[w][c * 4 + 1], acc[w][c * 4 + 2], acc[w][c * 4 + 3]);
        }
        __syncwarp();
        ptx::cluster_arrive();
        ptx::cluster_wait();

        const uint32_t rank = ptx::cluster_cta_rank();
        const uint32_t n = shape_n(p);
        const uint32_t col0 = tile.coord.n_block * kBlockN + (lane % 4) * 2;
#pragma unroll
        for (int w = 0; w < kNumWaves; ++w) {
            const uint32_t r0 = fragment_row(w, 0, wg, warp, lane);
            if (r0 >= rows) continue;
            const bool second_row = r0 + 8 < rows;
            OutElem* d0 = static_cast<OutElem*>(p.d) + static_cast<uint64_t>(tile.d_row + r0) * p.ld_d;
            // A runtime loop over this CTA's chunks: the sums come from shared memory, not from acc, so nothing
            // register-indexed needs unrolling (a fully unrolled, predicated loop spilled at 64x128).
#pragma unroll 1
            for (int c = static_cast<int>(rank); c < kChunks; c += kSplitK) {
                const uint32_t col = col0 + c * 8;  // even, and N is a multiple of 8: col + 1 < N too
                if (col >= n) continue;
                float x = 0.f, y = 0.f, z = 0.f, t = 0.f;
#pragma unroll
                for (int s = 0; s < kSplitK; ++s) {
                    float vx, vy, vz, vt;
                    ptx::ld_shared_cluster_v4(ptx::map_shared_rank(slot(w, c), s), vx, vy, vz, vt);
                    x += vx;
                    y += vy;
                    z += vz;
                    t += vt;
                }
                store_sum_pair(d0 + d_col(col), x, y);
                if (second_row) store_sum_pair(d0 + 8ull * p.ld_d + d_col(col), z, t);
            }
        }
        __syncwarp();
        ptx::cluster_arrive();
        ptx::cluster_wait();
    }
};

}  // namespace tessera::sm90
