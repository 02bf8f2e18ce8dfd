// BF16 GEMM for SM90 (sm_90a): D (+)= A·Bᵀ, FP32 accumulation; persistent CTAs, warp specialization, TMA + wgmma.
//
// Operands, each K-major or MN-major (wgmma reads BF16 either way, so all four layouts run natively):
//   A [M, K]: K-major = row-major [M][K]; MN-major = the transpose stored row-major, [K][M].
//   B [N, K]: likewise, [N][K] or [K][N].
//   A stage: K-major, one TMA box [64 K][kBlockM rows]; MN-major, kBlockM/64 boxes [64 M][64 K rows], 8 KB apart.
//   B stage: the same over N. 128-byte swizzle everywhere; a k-block is 64 K elements (one 128-byte swizzle row).
//   D [M, N] row-major, BF16 or FP32 (kOutF32); kAccumulate: the tiles are reduce-added into D (the host has copied C
//   there), else stored. TMA clips every load and store at M, N and K (zero fill), so no edge needs code here.
//   Batched (einsum over heads): A, B and D are 3-D maps whose third coordinate is the group, so any batch strides
//   work and each group's edges clip on their own. Batch-sum (einsum 'bmk,bnk->mn'): A [S*M][K] and B [S*N][K], a
//   tile walks its split of the flattened (s, k-block) axis and reduce-adds its FP32 sum into D.
//
// The parts: the tile sequence of each problem kind (prims/gemm_scheduler.cuh), the ring (prims/pipeline.cuh), the
// wgmma descriptors (prims/smem_desc.cuh) and the tile stores (sm90/gemm_epilogue.cuh, shared with the FP8 kernel).
// This file holds the plan's constants, the parameters, shared memory, the producer and the consumers' k-block loop.
//
// Split-K (kSplitK = S > 1: dense; decode shapes whose tiles leave SMs idle): a cluster of S CTAs
// owns one tile (the host launches tiles * S CTAs), CTA r runs the k-blocks [r*kb/S, (r+1)*kb/S), and the cluster sums
// the FP32 partials through distributed shared memory in rank order (GemmEpilogue::reduce_split_k; deterministic).
// The D tile's shared memory then holds the FP32 partial, so it is sized for 4-byte elements.
//
// Warp roles (kNumMathWarpgroups = 1 (kBlockM = 64) or 2 (kBlockM = 128) consumer warpgroups, then a producer
// warpgroup): consumer warpgroup g owns tile rows g*64 .. g*64+63; one elected producer thread issues every TMA.
//
// Consumer k-block loop: wait for the stage, issue its four k16 wgmmas into the accumulator, commit; once the next
// k-block's wgmmas are issued, wait for the previous group and release its stage, so one group is always in flight.
//
// Shared memory (kSmemBytes = sizeof(SharedStorage), 1024-byte aligned): barriers, the D tile, then
// kNumStages * 128 * (kBlockM + kBlockN) bytes of A and B stages.
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/epilogue.cuh>
#include <tessera/prims/gemm_scheduler.cuh>
#include <tessera/prims/pipeline.cuh>
#include <tessera/prims/smem_desc.cuh>
#include <tessera/ptx/mbarrier.cuh>
#include <tessera/ptx/memory.cuh>
#include <tessera/ptx/sync.cuh>
#include <tessera/ptx/tma.cuh>
#include <tessera/ptx/wgmma.cuh>
#include <tessera/ptx/wgmma_bf16.cuh>
#include <tessera/sm90/gemm_epilogue.cuh>

namespace tessera::sm90 {

// Config members (rendered by the JIT from the host's spec): kBlockM, kBlockN, kNumStages, kNumSMs, kShapeM/N/K
// (0 = read at run time), kGroupSize, kGemmKind, kNumGroups (k-grouped: the parameter arrays' length), kMajorA,
// kMajorB (0 K-major, 1 MN-major), kOutF32, kAccumulate; optional kSplitK (default 1).
template <class Config>
struct Bf16GemmPolicy {
    static constexpr int kBlockM = Config::kBlockM;
    static constexpr int kBlockN = Config::kBlockN;
    static constexpr int kBlockK = 64;  // BF16 elements in one 128-byte swizzle row
    static constexpr int kNumStages = Config::kNumStages;
    static constexpr int kNumMathWarpgroups = kBlockM / 64;
    static constexpr int kNumMathThreads = 128 * kNumMathWarpgroups;
    static constexpr int kNumThreads = kNumMathThreads + 128;
    static constexpr int kNumSMs = Config::kNumSMs;
    static constexpr prims::GemmKind kKind = static_cast<prims::GemmKind>(Config::kGemmKind);
    static constexpr bool kMGrouped = kKind == prims::kContiguous || kKind == prims::kPsum || kKind == prims::kMasked;
    static constexpr bool kTransA = Config::kMajorA == 1;
    static constexpr bool kTransB = Config::kMajorB == 1;
    static constexpr bool kOutF32 = Config::kOutF32 != 0;
    static constexpr bool kReduceAdd = Config::kAccumulate != 0;
    static constexpr bool kKGrouped = kKind == prims::kKGrouped;
    static constexpr bool kBatched = kKind == prims::kBatched;
    static constexpr bool kBatchSum = kKind == prims::kBatchSum;
    static constexpr int kNumKGroups = kKGrouped ? Config::kNumGroups : 1;

    // The epilogue's view of the plan (sm90/gemm_epilogue.cuh): one wave of 64 rows per warpgroup, whole tiles, no
    // multicast cluster, D over the ring or in halves.
    static constexpr int kWaveRows = 64 * kNumMathWarpgroups;
    static constexpr int kNumWaves = 1;
    static constexpr int kFinalRegs = kBlockN / 2;
    static constexpr int kSplitK = [] {
        if constexpr (requires { Config::kSplitK; }) return static_cast<int>(Config::kSplitK);
        else return 1;
    }();
    static constexpr bool kSplit = kSplitK > 1;
    static constexpr int kClusterSize = 1;  // multicast pairs (none); a split-K launch's clusters are kSplitK wide
    static constexpr int kNumNSplits = 1;
    static constexpr bool kDInRing = false;
    static constexpr bool kDHalves = false;
    static constexpr uint32_t kEpilogueBarrierBase = 1;  // named barriers 1, 2 (0 is __syncthreads)
    static constexpr uint32_t kDInRingBarrier = 0;       // unused (no D over the ring)
    using OutTile = prims::SwizzledOutputTile<kBlockN, kBlockM, kOutF32 ? 4 : 2>;
    // Split-K: the tile's FP32 partial, [chunk][thread] float4 (reduce_split_k), in the D tile's place.
    static constexpr int kDTileBytes = kSplit ? kBlockM * kBlockN * 4 : OutTile::kBytes;

    // A's rows per stage: the tile's, or 8 for a dense problem of at most 8 rows (decode; optional kLoadRowsA): its
    // A box is then one 8-row swizzle group (1 KB instead of 8), read by the wgmma as all 64 rows through a
    // descriptor whose 8-row groups alias (rows 8-63 of the accumulator copy rows 0-7 and are never stored), and the
    // freed shared memory holds more stages of B.
    static constexpr int kLoadRowsA = [] {
        if constexpr (requires { Config::kLoadRowsA; }) return static_cast<int>(Config::kLoadRowsA);
        else return kBlockM;
    }();
    static constexpr bool kNarrowA = kLoadRowsA < kBlockM;
    static constexpr uint32_t kABytes = kLoadRowsA * kBlockK * 2;  // one stage of A
    static constexpr uint32_t kBBytes = kBlockN * kBlockK * 2;
    static constexpr uint32_t kTxBytes = kABytes + kBBytes;
    static constexpr uint32_t kChunkBytes = 64 * 128;  // MN-major: one [64 K rows][128 B] box per 64 MN elements
    // wgmma descriptors carried from stage to stage; MN-major operands step their 128-byte MN chunks kChunkBytes apart.
    using Descs = prims::StageDescs<kABytes, kBBytes, kNumStages, kTransA ? kChunkBytes : 0u,
                                    kTransB ? kChunkBytes : 0u, kNarrowA ? 0u : 1024u>;
    // A k16 step: 32 bytes along a K-major row, two 8-row groups (2 KB) of an MN-major chunk.
    static constexpr uint32_t kStepA = kTransA ? 2048 : 32;
    static constexpr uint32_t kStepB = kTransB ? 2048 : 32;

    // Registers: the producer warpgroup gives up what the consumers take, within the launch pool (two math
    // warpgroups: 64512). Tiles of 192+ columns need 232 per consumer (128 x 40 + 256 x 232); narrower ones leave the
    // producer 56 (128 x 56 + 256 x 224), which the grouped schedulers' producer code needs (it spilled at 40).
    static constexpr bool kWideTile = kNumMathWarpgroups == 2 && kBlockN >= 192;
    static constexpr int kProducerLiveRegs = kWideTile ? 40 : 56;
    static constexpr int kConsumerLiveRegs = kNumMathWarpgroups == 1 ? 248 : kWideTile ? 232 : 224;
    static_assert(kProducerLiveRegs * 128 + kConsumerLiveRegs * kNumMathThreads <=
                      launch_regs_per_thread(kNumThreads) * kNumThreads,
                  "the warp roles' registers must fit the CTA's launch pool, or setmaxnreg.inc waits forever");

    using Scheduler =
        prims::GemmScheduler<kKind, kBlockM, kBlockN, Config::kGroupSize, 1, true, kSplitK, false, kBlockK>;
    using ConsumerScheduler =
        prims::GemmScheduler<kKind, kBlockM, kBlockN, Config::kGroupSize, 1, true, kSplitK, true, kBlockK>;
    using Ring = prims::RingState<kNumStages>;

    static_assert(kBlockM == 64 || kBlockM == 128, "BF16 tiles are one or two 64-row warpgroups tall");
    static_assert(kBlockN % 16 == 0 && kBlockN >= 16 && kBlockN <= 256, "wgmma N: a multiple of 16 up to 256");
    static_assert(!kTransB || kBlockN % 64 == 0, "MN-major B comes in 64-column boxes");
    static_assert(kNumStages >= 2, "the k-block loop keeps one stage in flight while it waits for the next");
    static_assert(!kKGrouped || (kTransA && kTransB && kReduceAdd),
                  "k-grouped BF16 (TN): MN-major A [sum K][M] and B [sum K][N], D[g] = C[g] + A_gᵀ B_g (FP32 or BF16)");
    static_assert(!kMGrouped || (!kTransA && !kOutF32 && !kReduceAdd),
                  "m-grouped BF16: K-major A, BF16 D stored (not accumulated)");
    static_assert(!kBatched || (!kTransA && !kReduceAdd), "batched BF16: K-major A, D stored through its 3-D map");
    static_assert(!kBatchSum || (!kTransA && !kTransB && kOutF32 && kReduceAdd),
                  "batch-sum BF16: K-major A [S*M][K] and B [S*N][K], FP32 tiles reduce-added into D");
    static_assert(!kSplit || (kKind == prims::kDense && kSplitK <= 8),
                  "split-K BF16: dense, 2 to 8 CTAs per cluster (the portable cluster limit)");
    static_assert(Config::kNumSMs % kSplitK == 0, "split-K: the grid is whole clusters");
    static_assert(!kNarrowA || (kLoadRowsA == 8 && kBlockM == 64 && kKind == prims::kDense && !kTransA),
                  "an 8-row A stage: dense, K-major A, one 64-row warpgroup");
};

template <class Config>
struct Bf16GemmKernel : Bf16GemmPolicy<Config>, prims::GemmShape<Config> {
    using Policy = Bf16GemmPolicy<Config>;
    using prims::GemmShape<Config>::shape_m;
    using prims::GemmShape<Config>::shape_n;
    using prims::GemmShape<Config>::shape_k;
    using Policy::kABytes; using Policy::kBBytes; using Policy::kBlockK; using Policy::kBlockM; using Policy::kBlockN;
    using Policy::kChunkBytes; using Policy::kConsumerLiveRegs; using Policy::kFinalRegs; using Policy::kKind;
    using Policy::kMGrouped; using Policy::kNumMathThreads; using Policy::kNumMathWarpgroups; using Policy::kNumStages;
    using Policy::kProducerLiveRegs; using Policy::kSplit; using Policy::kSplitK; using Policy::kStepA;
    using Policy::kStepB; using Policy::kTransA; using Policy::kTransB; using Policy::kTxBytes;
    using typename Policy::ConsumerScheduler;
    using typename Policy::Descs;
    using typename Policy::OutTile;
    using typename Policy::Ring;
    using typename Policy::Scheduler;
    using Epilogue = GemmEpilogue<Bf16GemmKernel>;

    struct BaseParams {
        TmaDescriptor tensor_map_a;     // K-major: [M][K], box [64][kBlockM]; MN-major: [K][M], box [64][64]
        TmaDescriptor tensor_map_b;     // likewise over N (m-grouped: all groups' rows, [G*N][K] or [K][G*N])
        TmaDescriptor tensor_map_d;     // D [rows][N], BF16 or FP32, box [store atom][64]
        uint32_t m, n, k;               // read only where the Config shape constant is kDynamic
        const int32_t* grouped_layout;  // contiguous: expert per row; psum: end rows; masked: masked_m
        void* d;                        // D base, for the row-clipped direct stores of grouped tiles
        uint32_t ld_d;                  // D row stride in elements
        uint32_t num_groups;
        uint32_t alignment;             // psum: rows a group start is aligned to
        uint32_t k_blocks_per_split;    // batch-sum: flattened (s, k-block) steps per tile
    };
    // The host mirrors BaseParams byte for byte (src/ops/bf16_gemm_common.hpp: three 128-byte maps, m/n/k at 384..395;
    // batched: the maps are 3-D, [G][rows][K] and [G][M][N]).
    static_assert(sizeof(BaseParams) == 448 && alignof(BaseParams) == 64, "Params layout is part of the host contract");
    // k-grouped: the groups are row ranges of A [sum K][M] and B [sum K][N]; group g's K and its start in 128-K blocks.
    struct KGroupedParams : BaseParams {
        uint32_t group_k[Policy::kNumKGroups];      // k_g, multiples of 128
        uint32_t group_sf_k0[Policy::kNumKGroups];  // sum over h < g of k_h / 128
    };
    using Params = conditional_t<Policy::kKGrouped, KGroupedParams, BaseParams>;

    struct SharedStorage {
        uint64_t full_barriers[kNumStages];
        uint64_t empty_barriers[kNumStages];
        alignas(1024) uint8_t d[Policy::kDTileBytes];
        alignas(1024) uint8_t a[kNumStages][kABytes];
        alignas(1024) uint8_t b[kNumStages][kBBytes];
    };
    static constexpr int kSmemBytes = static_cast<int>(sizeof(SharedStorage));
    // The host planner's formula (heuristics::bf16_gemm_smem_bytes) must match the struct exactly.
    static_assert(kSmemBytes == 1024 + align_up(Policy::kDTileBytes, 1024) + kNumStages * (kABytes + kBBytes),
                  "shared-memory plan drifted from the documented formula");
    static_assert(kSmemBytes <= 232448, "exceeds the 227 KB of dynamic shared memory per block on SM90");

    TESSERA_DEVICE static uint32_t d_tile_addr(SharedStorage& smem) { return ptx::smem_addr(smem.d); }
    TESSERA_DEVICE static uint32_t d_free_barrier(SharedStorage&) { return 0; }  // (no D over the ring)


    TESSERA_DEVICE static prims::GemmSchedulerArgs scheduler_args(const Params& p) {
        prims::GemmSchedulerArgs a{};
        a.m = shape_m(p);
        a.n = shape_n(p);
        a.num_k_blocks = ceil_div(shape_k(p), static_cast<uint32_t>(kBlockK));
        if constexpr (Policy::kBatchSum) {
            a.num_k_blocks *= p.num_groups;  // the batch entries' k-blocks, one after another
            a.k_blocks_per_split = p.k_blocks_per_split;
        }
        a.grouped_layout = p.grouped_layout;
        a.num_groups = p.num_groups;
        a.alignment = p.alignment;
        if constexpr (Policy::kKGrouped) {
            a.group_k = p.group_k;
            a.group_sf_k0 = p.group_sf_k0;
        }
        return a;
    }

    // The tile's first K row: a k-grouped tile's group start (the scheduler gives it in 128-K blocks), a split-K
    // CTA's share; 0 for the other kinds.
    TESSERA_DEVICE static uint32_t tile_k_start(const prims::GemmTile& tile) {
        if constexpr (Policy::kKGrouped) return tile.sf_k0 * 128;
        else if constexpr (kSplit) return tile.k_begin * kBlockK;
        else return 0u;
    }

    // One operand's stage: a K-major box of `rows` rows at (k0, row0), or rows/64 MN-major boxes at (row0 + 64 j, k0);
    // batched kernels add the group as the maps' third coordinate.
    template <int kRows, bool kTrans>
    TESSERA_DEVICE static void load_operand(uint8_t* dst, const TmaDescriptor& desc, uint32_t bar, int32_t k0,
                                            int32_t row0, int32_t group) {
        if constexpr (kTrans) {
#pragma unroll
            for (int j = 0; j < kRows / 64; ++j) {
                const uint32_t addr = ptx::smem_addr(dst + j * kChunkBytes);
                if constexpr (Policy::kBatched) ptx::tma_load_3d(addr, desc, bar, row0 + 64 * j, k0, group);
                else ptx::tma_load_2d(addr, desc, bar, row0 + 64 * j, k0);
            }
        } else {
            if constexpr (Policy::kBatched) ptx::tma_load_3d(ptx::smem_addr(dst), desc, bar, k0, row0, group);
            else ptx::tma_load_2d(ptx::smem_addr(dst), desc, bar, k0, row0);
        }
    }

    // Batch-sum: the tile's k-blocks run over (s, k-block) pairs from tile.k_begin on; A and B rows of entry s start
    // at s*M and s*N.
    TESSERA_DEVICE static void produce_batch_sum(const Params& p, SharedStorage& smem, Ring& ring,
                                                 const prims::GemmTile& tile) {
        const uint32_t m = shape_m(p), n = shape_n(p);
        const uint32_t k_blocks = ceil_div(shape_k(p), static_cast<uint32_t>(kBlockK));
        uint32_t s = tile.k_begin / k_blocks, kb = tile.k_begin - s * k_blocks;
#pragma unroll 1
        for (uint32_t i = 0; i < tile.num_k_blocks; ++i) {
            const int32_t k0 = static_cast<int32_t>(kb * kBlockK);
            const int32_t a_row = static_cast<int32_t>(s * m + tile.a_row);
            const int32_t b_row = static_cast<int32_t>(s * n + tile.coord.n_block * kBlockN);
            prims::produce_stage(ring, smem.full_barriers, smem.empty_barriers, true, kTxBytes,
                                 [&](uint32_t st, uint32_t full) {
                                     load_operand<kBlockM, false>(smem.a[st], p.tensor_map_a, full, k0, a_row, 0);
                                     load_operand<kBlockN, false>(smem.b[st], p.tensor_map_b, full, k0, b_row, 0);
                                 });
            if (++kb == k_blocks) kb = 0, ++s;
        }
    }

    // With C (kReduceAdd), D's region is prefetched into L2 (GemmEpilogue::prefetch_d_tile) kDPrefetchAhead
    // k-blocks before the tile ends: unprefetched, on the wgrad rows our time was cuBLAS's plus D's bytes at about
    // 3.5 TB/s. (The producer runs at most kNumStages k-blocks ahead of the consumers.)
    static constexpr bool kPrefetchD = Policy::kReduceAdd && !kSplit && !Policy::kBatchSum;
    static constexpr uint32_t kDPrefetchAhead = 16;

    // One thread. Walks the same tile sequence as the consumers and fills the ring.
    TESSERA_DEVICE static void produce(const Params& p, SharedStorage& smem) {
        const uint32_t n = shape_n(p), k = shape_k(p);
        Scheduler scheduler(scheduler_args(p), blockIdx.x, Config::kNumSMs);
        Ring ring;
        prims::GemmTile tile;
        while (scheduler.next(tile)) {
            if constexpr (Policy::kBatchSum) {
                produce_batch_sum(p, smem, ring, tile);
                continue;
            }
            const int32_t k_base = static_cast<int32_t>(tile_k_start(tile));
            const int32_t a_row = static_cast<int32_t>(tile.a_row);
            // m-grouped B holds the groups one after another: K-major [G*N][K] (the group's rows start at g*N), or
            // MN-major [G*K][N] (its K rows start at g*K; the host requires K % 64 == 0, so no k-block crosses into
            // the next group).
            const uint32_t group = kMGrouped ? tile.group : 0u;  // (batched: the maps' third coordinate instead)
            const int32_t batch = static_cast<int32_t>(tile.group);
            const int32_t b_row = static_cast<int32_t>((kTransB ? 0u : group * n) + tile.coord.n_block * kBlockN);
            const int32_t b_k0 = static_cast<int32_t>(kTransB && kMGrouped ? group * k : 0u) + k_base;
#pragma unroll 1
            for (uint32_t kb = 0; kb < tile.num_k_blocks; ++kb) {
                const int32_t k0 = static_cast<int32_t>(kb * kBlockK);
                if constexpr (kPrefetchD)
                    if (kb + kDPrefetchAhead == tile.num_k_blocks || (kb == 0 && tile.num_k_blocks < kDPrefetchAhead))
                        Epilogue::prefetch_d_tile(p, tile);
                prims::produce_stage(ring, smem.full_barriers, smem.empty_barriers, tile.loads, kTxBytes,
                                     [&](uint32_t s, uint32_t full) {
                                         load_operand<kBlockM, kTransA>(smem.a[s], p.tensor_map_a, full,
                                                                        k_base + k0, a_row, batch);
                                         load_operand<kBlockN, kTransB>(smem.b[s], p.tensor_map_b, full, b_k0 + k0,
                                                                        b_row, batch);
                                     });
            }
        }
    }

    TESSERA_DEVICE static void release(SharedStorage& smem, uint32_t stage, uint32_t lane) {
        prims::release_stage<1>(smem.empty_barriers, stage, false, lane);
    }

    // The tile's k-blocks into acc (FP32, the wgmma m64nN fragment layout), one commit group per k-block.
    TESSERA_DEVICE static void mainloop(SharedStorage& smem, Ring& ring, const prims::GemmTile& tile, uint32_t wg,
                                        uint32_t lane, float (&acc)[kFinalRegs]) {
        // This warpgroup's 64 rows of A: 64 K-major rows further, or the next MN-major chunk.
        const uint32_t a_offset = wg * (kTransA ? kChunkBytes : 64 * 128);
        Descs descs = Descs::of(ptx::smem_addr(smem.a[0]) + a_offset, ptx::smem_addr(smem.b[0]), ring.stage);
        uint32_t prev_stage = 0;
        for (uint32_t kb = 0; kb < tile.num_k_blocks; ++kb) {
            ptx::mbarrier_wait(ptx::smem_addr(&smem.full_barriers[ring.stage]), ring.phase);
            ptx::wgmma_fence();
#pragma unroll
            for (int k = 0; k < kBlockK / 16; ++k)
                ptx::wgmma_m64k16_bf16<kTransA, kTransB>(acc, prims::advance_desc(descs.a, k * kStepA),
                                                         prims::advance_desc(descs.b, k * kStepB), 1u);
            ptx::wgmma_commit_group();
            if (kb > 0) {
                ptx::wgmma_wait_group<1>();
                release(smem, prev_stage, lane);
            }
            prev_stage = ring.stage;
            ring.advance();
            descs.advance(ring.stage == 0);
        }
        ptx::wgmma_wait_group<0>();
        if (tile.num_k_blocks > 0) release(smem, prev_stage, lane);
        // The accumulator is read from here on: keep those reads after the wait.
#pragma unroll
        for (int i = 0; i < kFinalRegs; ++i) ptx::fence_operand(acc[i]);
    }

    TESSERA_DEVICE static void consume(const Params& p, SharedStorage& smem, uint32_t wg, uint32_t warp,
                                       uint32_t lane) {
        ConsumerScheduler scheduler(scheduler_args(p), blockIdx.x, Config::kNumSMs);
        Ring ring;
        prims::GemmTile tile;
        while (scheduler.next(tile)) {
            float acc[1][kFinalRegs];
#pragma unroll
            for (int i = 0; i < kFinalRegs; ++i) acc[0][i] = 0.f;
            if (tile.loads) {
                mainloop(smem, ring, tile, wg, lane, acc[0]);
            } else {
                // A padding block of a contiguous layout: its stages pass through unread.
                for (uint32_t kb = 0; kb < tile.num_k_blocks; ++kb) {
                    ptx::mbarrier_wait(ptx::smem_addr(&smem.full_barriers[ring.stage]), ring.phase);
                    release(smem, ring.stage, lane);
                    ring.advance();
                }
            }
            if constexpr (kSplit) {
                Epilogue::reduce_split_k(p, smem, acc, tile, wg, warp, lane);
                break;  // one tile per cluster (the host launches tiles * kSplitK CTAs)
            }
            if constexpr (kKind == prims::kContiguous) {
                if (tile.row_mask) Epilogue::mask_padding_rows(p, acc, tile, wg, warp, lane);
            }
            if constexpr (kKind == prims::kDense || kKind == prims::kContiguous || Policy::kBatched ||
                          Policy::kBatchSum) {
                Epilogue::store_tile(p, smem, acc, tile, wg, warp, lane);
            } else {
                if (tile.valid_rows == kBlockM) Epilogue::store_tile(p, smem, acc, tile, wg, warp, lane);
                else Epilogue::store_rows_direct(p, acc, tile, wg, warp, lane);
            }
        }
        if (warp == 0) ptx::bulk_wait_group<0>();  // the last stores complete before the CTA's shared memory retires
    }

    static __device__ void run(const Params& p) {
        extern __shared__ __attribute__((aligned(1024))) uint8_t tessera_smem[];
        SharedStorage& smem = *reinterpret_cast<SharedStorage*>(tessera_smem);
        prims::run_warp_roles<kNumMathThreads, kProducerLiveRegs, kConsumerLiveRegs>(
            [&] {
                ptx::prefetch_tensormap(p.tensor_map_a);
                ptx::prefetch_tensormap(p.tensor_map_b);
                ptx::prefetch_tensormap(p.tensor_map_d);
            },
            [&] { prims::init_ring<kNumStages>(smem.full_barriers, smem.empty_barriers, kNumMathThreads / 32); },
            [&](uint32_t) {
                if (ptx::elect_one()) produce(p, smem);
            },
            [&](uint32_t wg, uint32_t warp, uint32_t lane) { consume(p, smem, wg, warp, lane); },
            [&](uint32_t, uint32_t) {
                if constexpr (kSplit) {
                    // barrier.cluster counts every thread of the cluster: the producer warpgroup joins the
                    // reduction's two barriers (the consumers' are in reduce_split_k) when its cluster has a tile.
                    __syncwarp();
                    const uint32_t num_tiles = ceil_div(shape_m(p), uint32_t{kBlockM}) *
                                               ceil_div(shape_n(p), uint32_t{kBlockN});
                    if (blockIdx.x / kSplitK < num_tiles) {
                        ptx::cluster_arrive();
                        ptx::cluster_wait();
                        ptx::cluster_arrive();
                        ptx::cluster_wait();
                    }
                }
            });
    }
};

}  // namespace tessera::sm90
