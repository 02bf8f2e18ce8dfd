// FP8 GEMM with fine-grained scaling for SM90 (sm_90a): persistent CTAs, warp specialization, TMA + wgmma.
//
// Math, kb = 128-wide K block, all sums in FP32:
//   kMode 0 ("1D2D"): D[m,n]  = sum_kb (A_kb B_kb^T)[m,n] * sa[m,kb] * sb[n/128,kb]     D BF16
//   kMode 1 ("1D1D"): D[m,n] += sum_kb (A_kb B_kb^T)[m,n] * sa[m,kb] * sb[n,kb]         D FP32 (TMA reduce-add)
//
// Operands (docs/fp8_gemm_kernel.md has the tensor maps):
//   A e4m3 [M,K] K-major, B e4m3 [N,K] K-major; TMA boxes [128 K][kBlockM or kBlockN rows], 128B swizzle.
//   K % 16 == 0 (16-byte global strides); a partial last K block is zero-filled by TMA, so the math is unaffected.
//   SFA FP32, element (m,kb) at kb*align(M,4) + m: TMA box [kBlockM][1]. 1D1D SFB is the same over N, box [kBlockN][1].
//   1D2D SFB FP32 [ceil(N/128)][ceil(K/128)] row-major, read by the consumers with ordinary loads
//   (sm90/fp8_gemm_scales.cuh).
//   D row-major, written per 64-row slice by TMA stores that clip at M and N; a tile whose rows must stop early
//   (grouped kinds, valid_rows < kBlockM) is written from registers straight to global memory instead.
//
// The parts: the plan every constant below derives from (sm90/fp8_gemm_policy.cuh); the tile sequence of every
// problem kind, dense, m-grouped contiguous / psum / masked and k-grouped (prims/gemm_scheduler.cuh); the ring and
// its barriers (prims/pipeline.cuh); the consumers' k-block loops (sm90/fp8_gemm_mainloop.cuh); the tile stores and
// the split-K reduction (sm90/gemm_epilogue.cuh). This file holds the kernel's parameters, shared memory and the
// two roles.
//
// Split-K (kSplitK = S > 1, dense 1D2D decode shapes whose tiles leave SMs idle): a cluster of S CTAs owns one tile;
// CTA r runs the mainloop over its share of the k-blocks, then the cluster sums the FP32 partials through
// distributed shared memory and each CTA stores 1/S of the tile's columns. No global workspace, deterministic order.
//
// Warp roles (kNumMathWarpgroups = 1 or 2 consumer warpgroups, then one producer warpgroup):
//   threads [0, 128*W)         consumers: wgmma + scale promotion + epilogue; setmaxnreg.inc to kConsumerLiveRegs
//                              (248 with one warpgroup, 232 with two, 240 where kWideConsumers)
//   threads [128*W, 128*W+128) producer: one elected thread issues every TMA; setmaxnreg.dec to kProducerLiveRegs
//   Consumer warpgroup g owns rows w*64*W + g*64 .. +64 of the tile for each wave w < kNumWaves (kBlockM/(64*W)).
//
// Barrier protocol (S = kNumStages; prims/pipeline.cuh; ring state persists across tiles):
//   full[s]  count 1: the producer's arrive.expect_tx(A+B+SFA(+SFB) box bytes, OOB fill included); TMA completes tx.
//   empty[s] count kClusterSize * (math warps): one arrival per consumer warp per CTA of the cluster.
//   Cluster of 2 (A multicast): both rings advance in lock step (prims::release_stage); only rank 0 issues a
//   multicast load and both CTAs expect its bytes; before exit each producer drains the ring (prims::drain_ring).
//   Two-wave tiles with two warpgroups issue their wgmma batches in turns (kOrderedMath, named barriers 3 and 4).
//   Epilogue (named barrier 1 + g per warpgroup): warp 0 waits for the previous tile's stores to have read the D
//   tile, the warpgroup writes its slice (stmatrix / st.shared) into the swizzled tile, fence.proxy.async, warp 0
//   issues the TMA stores. The stores overlap the next tile's mainloop.
//   D over the ring (kDInRing): the A stages hold D; the producer waits for d_free before a CTA's next tile.
//   D in halves (kDHalves): the same steps once per 128-column half through half a D tile.
//
// Shared memory (kSmemBytes = sizeof(SharedStorage), base 1024-byte aligned):
//   align(S*(4*kBlockM + sfb_stage + 16) (+ 8: d_free), 1024) + D tile (kBlockM*kBlockN*out_bytes; none with
//   kDInRing; half with kDHalves) + S*128*(kBlockM + kBlockN)
//   sfb_stage = 4 (1D2D: one reserved float) or 4*align(kBlockN,32) (1D1D); every A/B stage and the D tile start on
//   1 KB.
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/gemm_scheduler.cuh>
#include <tessera/prims/pipeline.cuh>
#include <tessera/prims/smem_desc.cuh>
#include <tessera/ptx/mbarrier.cuh>
#include <tessera/ptx/memory.cuh>
#include <tessera/ptx/sync.cuh>
#include <tessera/ptx/tma.cuh>
#include <tessera/sm90/fp8_gemm_mainloop.cuh>
#include <tessera/sm90/fp8_gemm_policy.cuh>
#include <tessera/sm90/fp8_gemm_scales.cuh>
#include <tessera/sm90/gemm_epilogue.cuh>

namespace tessera::sm90 {

// The D tile's own shared memory: [atom][kBlockM][atom bytes] in the store swizzle (split-K: the partials); none
// when it is staged over the A ring (kDInRing).
template <int kBytes>
struct DTileSlot {
    alignas(1024) uint8_t d[kBytes];
};
template <>
struct DTileSlot<0> {};

template <class Config>
struct Fp8GemmKernel : Fp8GemmPolicy<Config>, prims::GemmShape<Config> {
    using Policy = Fp8GemmPolicy<Config>;
    using prims::GemmShape<Config>::shape_m;
    using prims::GemmShape<Config>::shape_n;
    using prims::GemmShape<Config>::shape_k;
    using Policy::kBlockK; using Policy::kBlockM; using Policy::kBlockN; using Policy::kClusterCtas;
    using Policy::kClusterM; using Policy::kClusterN; using Policy::kClusterSize; using Policy::kConsumerLiveRegs;
    using Policy::kDInRing; using Policy::kDTileOwnBytes; using Policy::kEarlyScales; using Policy::kFinalRegs;
    using Policy::kHoistFormer; using Policy::kIs1D1D; using Policy::kKind; using Policy::kMGrouped;
    using Policy::kNumKGroups; using Policy::kNumMathThreads; using Policy::kNumMathWarpgroups; using Policy::kNumSMs;
    using Policy::kNumStages; using Policy::kNumWaves; using Policy::kOrderedMath; using Policy::kPipelined;
    using Policy::kProducerLiveRegs; using Policy::kSbStep; using Policy::kSfbStageFloats;
    using Policy::kSkipIdleHalf; using Policy::kSplit; using Policy::kSplitK; using Policy::kTailN;
    using Policy::kTileKb; using Policy::kTurnBarrierBase; using Policy::kTxBytes; using Policy::kWaveRows;
    using Policy::kWgmmaN;
    using typename Policy::OutTile;
    using typename Policy::Scheduler;
    using typename Policy::ConsumerScheduler;
    using typename Policy::Ring;
    using BScales = Fp8GemmBScales<Policy>;
    using Mainloop = Fp8GemmMainloop<Fp8GemmKernel>;
    using Epilogue = GemmEpilogue<Fp8GemmKernel>;

    struct BaseParams {
        TmaDescriptor tensor_map_a;    // A e4m3 [M, K] (m-grouped: all rows; masked [G*M_max, K]; k-grouped: unused)
        TmaDescriptor tensor_map_b;    // B e4m3 [N, K] (m-grouped: [G*N, K]; k-grouped: unused)
        TmaDescriptor tensor_map_sfa;  // SFA fp32 [sf_k][align(M,4)] (masked: [G*ceil(K/128)][align(M_max,4)])
        TmaDescriptor tensor_map_sfb;  // 1D1D: SFB fp32 [sf_k][align(N,4)]; 1D2D: unused
        TmaDescriptor tensor_map_d;    // D [rows, N], bf16 (1D2D) or fp32 (1D1D); k-grouped rows = G*M
        const float* sfb;              // 1D2D: SFB fp32 [G][ceil(N/128)][ceil(K/128)] row-major; 1D1D: unused
        uint32_t m, n, k;              // read only where the Config shape constant is kDynamic (masked: M_max)
        const int32_t* grouped_layout; // contiguous: expert per row; psum: end rows; masked: masked_m
        void* d;                       // D base, for the row-clipped direct stores
        uint32_t ld_d;                 // D row stride in elements
        uint32_t num_groups;
        uint32_t alignment;            // psum: rows a group start is aligned to
    };
    // k-grouped: A_g [M, k_g] and B_g [N, k_g] are separate row-major blocks, so each group has its own maps.
    struct KGroupedParams : BaseParams {
        TmaDescriptor group_maps[2 * (kNumKGroups > 0 ? kNumKGroups : 1)];  // [A_0..A_{G-1}, B_0..B_{G-1}]
        uint32_t group_k[kNumKGroups > 0 ? kNumKGroups : 1];                // k_g, multiples of 128
        uint32_t group_sf_k0[kNumKGroups > 0 ? kNumKGroups : 1];            // sum over h < g of k_h / 128
    };
    using Params = conditional_t<kKind == prims::kKGrouped, KGroupedParams, BaseParams>;

    // Small arrays first, then the 1 KB-aligned tiles: sizeof has no tail padding because every tile is a multiple of
    // 1 KB.
    struct SharedStorage {
        float sfa[kNumStages][kBlockM];          // [stage][kBlockM] fp32, TMA
        float sfb[kNumStages][kSfbStageFloats];  // 1D1D: [stage][align(kBlockN,32)] fp32, TMA; 1D2D: reserved
        uint64_t full_barriers[kNumStages];
        uint64_t empty_barriers[kNumStages + (kDInRing ? 1 : 0)];  // kDInRing: [kNumStages] is d_free
        [[no_unique_address]] DTileSlot<kDTileOwnBytes> d_slot;
        alignas(1024) uint8_t a[kNumStages][kBlockM * kBlockK];  // [stage][kBlockM][128] e4m3, 128B swizzle
        alignas(1024) uint8_t b[kNumStages][kBlockN * kBlockK];  // [stage][kBlockN][128] e4m3, 128B swizzle
    };
    static constexpr int kSmemBytes = static_cast<int>(sizeof(SharedStorage));
    // The host planner's formula (heuristics::fp8_gemm_smem_bytes) must match the struct exactly.
    static_assert(kSmemBytes == align_up(kNumStages * (4 * kBlockM + 4 * kSfbStageFloats + 16) + (kDInRing ? 8 : 0),
                                         1024) +
                                    kDTileOwnBytes + kNumStages * kBlockK * (kBlockM + kBlockN),
                  "shared-memory plan drifted from the documented formula");
    // Where the epilogue stages D (the store swizzle needs 1 KB alignment: every stage of A starts on 1 KB).
    TESSERA_DEVICE static uint32_t d_tile_addr(SharedStorage& smem) {
        if constexpr (kDInRing) return ptx::smem_addr(smem.a[0]);
        else return ptx::smem_addr(smem.d_slot.d);
    }
    // kDInRing: each consumer warpgroup arrives once per tile, after its stores have read D; the producer waits for
    // it before loading the CTA's next tile.
    TESSERA_DEVICE static uint32_t d_free_barrier(SharedStorage& smem) {
        return ptx::smem_addr(&smem.empty_barriers[kNumStages]);
    }

    // ---------------------------------------------------------------------------------------------------------------

    static_assert(kSmemBytes <= 232448, "exceeds the 227 KB of dynamic shared memory per block on SM90");
    // The host mirrors Params byte for byte (src/ops/fp8_gemm_common.hpp: five 128-byte maps at 0..639, sfb at 640,
    // m/n/k at 648/652/656). NVRTC has no offsetof, so the size and alignment stand guard for the layout.
    static_assert(sizeof(BaseParams) == 704 && alignof(BaseParams) == 64, "Params layout is part of the host contract");


    // ---------------------------------------------------------------------------------------------------------------
    TESSERA_DEVICE static void load(bool multicast, void* dst, const TmaDescriptor& desc, uint32_t bar, int32_t c0,
                                    int32_t c1) {
        if (multicast) ptx::tma_load_2d_multicast(ptx::smem_addr(dst), desc, bar, c0, c1, 0b11);
        else ptx::tma_load_2d(ptx::smem_addr(dst), desc, bar, c0, c1);
    }

    TESSERA_DEVICE static prims::GemmSchedulerArgs scheduler_args(const Params& p) {
        prims::GemmSchedulerArgs a{};
        a.m = shape_m(p);
        a.n = shape_n(p);
        a.num_k_blocks = ceil_div(shape_k(p), 128u);
        a.grouped_layout = p.grouped_layout;
        a.num_groups = p.num_groups;
        a.alignment = p.alignment;
        if constexpr (kKind == prims::kKGrouped) {
            a.group_k = p.group_k;
            a.group_sf_k0 = p.group_sf_k0;
        }
        return a;
    }

    // k-grouped operands have one map per group; every other kind one map for all tiles.
    TESSERA_DEVICE static const TmaDescriptor& map_a(const Params& p, uint32_t group) {
        if constexpr (kKind == prims::kKGrouped) return p.group_maps[group];
        else return p.tensor_map_a;
    }
    TESSERA_DEVICE static const TmaDescriptor& map_b(const Params& p, uint32_t group) {
        if constexpr (kKind == prims::kKGrouped) return p.group_maps[kNumKGroups + group];
        else return p.tensor_map_b;
    }

    // k-blocks before a tile's last at which the producer prefetches its D into L2 (1D1D); the producer runs up to
    // kNumStages k-blocks ahead of the consumers, so the lines arrive ~(lead + stages) k-blocks before the epilogue.
    static constexpr uint32_t kDPrefetchLead = 4;

    // One thread. Walks the same tile sequence as the consumers and fills the ring.
    TESSERA_DEVICE static void produce(const Params& p, SharedStorage& smem) {
        const uint32_t n = shape_n(p);
        const uint32_t rank = kClusterSize > 1 ? ptx::cluster_cta_rank() : 0;
        Scheduler scheduler(scheduler_args(p), blockIdx.x, Config::kNumSMs);
        Ring ring;
        prims::GemmTile tile;
        uint32_t d_free_phase = 0;  // kDInRing
        bool first_tile = true;
        while (scheduler.next(tile)) {
            if constexpr (kDInRing) {
                // The previous tile's D is staged over the ring: its stores must have read it first.
                if (!first_tile) {
                    ptx::mbarrier_wait(d_free_barrier(smem), d_free_phase);
                    d_free_phase ^= 1u;
                }
                first_tile = false;
            }
            const int32_t a_row = static_cast<int32_t>(tile.a_row);
            const int32_t n0 = static_cast<int32_t>(tile.coord.n_block * kBlockN);
            // m-grouped and batched B: the groups' [N][K] one after another.
            const int32_t b_row = static_cast<int32_t>(kMGrouped || kKind == prims::kBatched ? tile.group * n : 0u) + n0;
            const TmaDescriptor& desc_a = map_a(p, tile.group);
            const TmaDescriptor& desc_b = map_b(p, tile.group);
            // With multicast, rank 0 loads the shared operand for both CTAs and rank 1 skips it.
            const bool multicast_a = kClusterN == 2 && tile.coord.multicast;
            const bool multicast_b = kClusterM == 2 && tile.coord.multicast;
            const bool issue_a = !multicast_a || rank == 0;
            const bool issue_b = !multicast_b || rank == 0;
            // Not unrolled: the producer runs in 40 registers, and an unrolled constant trip count (split-K shares of
            // a fixed K) spilled there.
#pragma unroll 1
            for (uint32_t kb = 0; kb < tile.num_k_blocks; ++kb) {
                const auto issue = [&](uint32_t s, uint32_t full) {
                    const int32_t k0 = static_cast<int32_t>((tile.k_begin + kb) * kBlockK);
                    const int32_t sf_kb = static_cast<int32_t>(tile.sf_k0 + tile.k_begin + kb);
                    if (issue_a) {
                        if constexpr (kKind == prims::kBatched)  // A [G][M][K] with free batch strides: a 3-D map
                            ptx::tma_load_3d(ptx::smem_addr(smem.a[s]), desc_a, full, k0, a_row,
                                             static_cast<int32_t>(tile.group));
                        else load(multicast_a, smem.a[s], desc_a, full, k0, a_row);
                        load(multicast_a, smem.sfa[s], p.tensor_map_sfa, full, static_cast<int32_t>(tile.sfa_col),
                             sf_kb);
                    }
                    if (issue_b) {
                        load(multicast_b, smem.b[s], desc_b, full, k0, b_row);
                        if constexpr (kIs1D1D) load(multicast_b, smem.sfb[s], p.tensor_map_sfb, full, n0, sf_kb);
                    }
                };
                // A zero tile in a cluster passes the stage through, so that both rings stay in step.
                if (!prims::produce_stage(ring, smem.full_barriers, smem.empty_barriers, tile.loads, kTxBytes, issue))
                    continue;
                // 1D1D: the tile's D is reduce-added by TMA, which reads it from DRAM (in L2, the TMA unit's
                // read-modify-writes queue in front of the next tile's loads). Fetch it into L2 a few k-blocks
                // before the epilogue, while the mainloop still runs.
                if constexpr (kIs1D1D && !kSplit)
                    if (kb + kDPrefetchLead == tile.num_k_blocks ||
                        (kb == 0 && tile.num_k_blocks < kDPrefetchLead))
                        Epilogue::prefetch_d_tile(p, tile);
            }
        }
        if constexpr (kClusterSize > 1) prims::drain_ring(ring, smem.empty_barriers);
    }
    // ---------------------------------------------------------------------------------------------------------------
    TESSERA_DEVICE static void consume(const Params& p, SharedStorage& smem, uint32_t wg, uint32_t warp,
                                       uint32_t lane) {
        const uint32_t n = shape_n(p);
        const uint32_t sf_k = ceil_div(shape_k(p), 128u);  // 1D2D: SFB row length
        const uint32_t row0 = wg * 64 + warp * 16 + lane / 4;  // this thread's first fragment row within a wave
        ConsumerScheduler scheduler(scheduler_args(p), blockIdx.x, Config::kNumSMs);
        Ring ring;
        prims::GemmTile tile;
        float tmp[kWgmmaN / 2];  // [kWgmmaN/2] fp32 wgmma accumulator of one 128-K block
#pragma unroll
        for (int i = 0; i < kWgmmaN / 2; ++i) tmp[i] = 0.f;
        // Turns start with warpgroup 0: warpgroup 1 grants it the first one.
        if (kOrderedMath && wg == 1) ptx::named_barrier_arrive(kTurnBarrierBase, 256);
        BScales early_sb;          // kEarlyScales: the next tile's B scales, loaded before this tile's epilogue
        bool early_ready = false;  // early_sb holds the tile that next() returns
        while (scheduler.next(tile)) {
            float acc[kNumWaves][kFinalRegs];  // [wave][kBlockN/2] fp32 main accumulator, wgmma fragment layout
#pragma unroll
            for (int w = 0; w < kNumWaves; ++w)
#pragma unroll
                for (int i = 0; i < kFinalRegs; ++i) acc[w][i] = 0.f;
            const uint32_t n0 = tile.coord.n_block * kBlockN;
            // 1D2D: 8-column chunks of this tile that fall in its first B-scale block (>= tile width: uniform), and
            // the SFB rows of its first and (if it straddles a 128 boundary inside N) second block.
            const uint32_t former = (128 - n0 % 128) / 8;
            BScales sb;
            sb.lo_row = sb.hi_row = nullptr;
            if constexpr (!kIs1D1D) {
                if (kEarlyScales && early_ready) {
                    sb = early_sb;
                } else {
                    sb.set_rows(p.sfb, n, sf_k, tile.group, n0, tile.k_begin);
                    if (tile.loads) sb.load_tile(tile.num_k_blocks, lane);
                }
            }

            if constexpr (kKind == prims::kContiguous) {
                // Each thread read the expert id from grouped_layout; through a shuffle ptxas sees the choice
                // warp-uniform (else the unrolled loop's wgmma descriptors went through vector registers, 16 R2UR
                // per k-block).
                tile.loads = __shfl_sync(0xffffffffu, tile.loads ? 1u : 0u, 0) != 0u;
            }
            // A masked or psum tile whose rows end within the first warpgroup's 64: the second warpgroup's rows are
            // all past its group's end and nothing of them is stored, so it passes the stages through instead of
            // computing them, leaving the tensor cores to the first one. (Through a shuffle: ptxas must see the
            // choice warp-uniform, or the mainloop's wgmma descriptors go through vector registers.)
            bool computes = tile.loads;
            if constexpr (kSkipIdleHalf)
                computes = computes && __shfl_sync(0xffffffffu, wg * 64 < tile.valid_rows ? 1u : 0u, 0) != 0u;
            const bool pipelined = kPipelined && computes && tile.num_k_blocks > 0;
            if (pipelined) {
                Mainloop::mainloop_pipelined(smem, ring, tile, sb, former, wg, row0, lane, acc);
            } else if (computes && tile.num_k_blocks > 0) {
                if (kTailN > 0 && n0 + kBlockN > n) {
                    constexpr int kN = kTailN > 0 ? kTailN : kWgmmaN;
                    float tail_tmp[kN / 2];  // the tail's own temporary; its first batch overwrites it (scale-d = 0)
                    Mainloop::template mainloop_serial<kN>(smem, ring, tile, sb, former, wg, row0, lane, acc, tail_tmp);
                } else if constexpr (kHoistFormer) {
                    Mainloop::template mainloop_serial_at<kSbStep>(smem, ring, tile, sb, former, wg, row0, lane, acc, tmp);
                } else {
                    Mainloop::template mainloop_serial<kWgmmaN>(smem, ring, tile, sb, former, wg, row0, lane, acc, tmp);
                }
            } else {
                // Zero tile of a cluster, or an idle half: the stages pass through (the rings stay in step, and the
                // producer gets every release it waits for); nothing is read.
                for (uint32_t kb = 0; kb < tile.num_k_blocks; ++kb) {
                    ptx::mbarrier_wait(ptx::smem_addr(&smem.full_barriers[ring.stage]), ring.phase);
                    Mainloop::release(smem, ring.stage, tile.coord.peer_alive, lane);
                    ring.advance();
                }
            }
            if constexpr (kEarlyScales) {
                uint32_t next_n_block, next_expert;
                early_ready = scheduler.peek_next(next_n_block, next_expert);
                if (early_ready) {
                    early_sb.set_rows(p.sfb, n, sf_k, next_expert, next_n_block * kBlockN, 0);
                    early_sb.load_tile(kTileKb, lane);
                }
            }
            // Masked kernels take the warp index afresh here, so that it need not survive their mainloop in a
            // register (the masked 128x192 kernel spilled it). Through a shuffle: ptxas must see it warp-uniform, or
            // the epilogue's warp-0 branches count as divergent and the mainloop's wgmma descriptors move to vector
            // registers (R2UR before every wgmma).
            const uint32_t ewarp = kKind == prims::kMasked ? ptx::warp_id_uniform() % 4 : warp;
            if constexpr (kKind == prims::kContiguous) {
                if (tile.row_mask) Epilogue::mask_padding_rows(p, acc, tile, wg, ewarp, lane);
            }
            if constexpr (kSplit) {
                Epilogue::reduce_split_k(p, smem, acc, tile, wg, ewarp, lane);
                break;  // one tile per cluster (the host launches tiles * kSplitK CTAs)
            } else if (tile.valid_rows == kBlockM || Epilogue::kStagedRows) {
                Epilogue::store_tile(p, smem, acc, tile, wg, ewarp, lane);
            } else {
                Epilogue::store_rows_direct(p, acc, tile, wg, ewarp, lane);  // (an idle half's rows: none stored)
            }
            if constexpr (kDInRing) Epilogue::release_d_tile(smem, ewarp, lane);
        }
        // Warpgroup 1 granted one more turn than warpgroup 0 takes: take it, so no barrier is left half-arrived.
        if (kOrderedMath && wg == 0) ptx::named_barrier_sync(kTurnBarrierBase, 256);
        // the last stores complete before the CTA (and its smem) retires
        if (warp == 0) ptx::bulk_wait_group<0>();
    }
    // ---------------------------------------------------------------------------------------------------------------
    static __device__ void run(const Params& p) {
        extern __shared__ __attribute__((aligned(1024))) uint8_t tessera_smem[];
        SharedStorage& smem = *reinterpret_cast<SharedStorage*>(tessera_smem);
        const uint32_t warp = ptx::warp_id_uniform();
        const uint32_t lane = ptx::lane_id();
        constexpr uint32_t kProducerWarp = kNumMathThreads / 32;

        if (warp == kProducerWarp && ptx::elect_one()) {
            if constexpr (kKind != prims::kKGrouped) {  // k-grouped reads per-group maps instead
                ptx::prefetch_tensormap(p.tensor_map_a);
                ptx::prefetch_tensormap(p.tensor_map_b);
            }
            ptx::prefetch_tensormap(p.tensor_map_sfa);
            if constexpr (kIs1D1D) ptx::prefetch_tensormap(p.tensor_map_sfb);
            ptx::prefetch_tensormap(p.tensor_map_d);
        }
        if (warp == kProducerWarp + 1 && ptx::elect_one()) {
            prims::init_ring<kNumStages>(smem.full_barriers, smem.empty_barriers, kClusterSize * kNumMathThreads / 32);
            if constexpr (kDInRing) ptx::mbarrier_init(d_free_barrier(smem), kNumMathWarpgroups);
            ptx::fence_mbarrier_init();
        }
        prims::sync_after_init<kClusterCtas>();

        if (warp >= kProducerWarp) {
            ptx::setmaxnreg_dec<kProducerLiveRegs>();
            if (warp == kProducerWarp && ptx::elect_one()) produce(p, smem);
            if constexpr (kSplit) {
                // barrier.cluster counts every thread of the cluster: the producer warpgroup joins the reduction's
                // two barriers (the consumers' are in reduce_split_k) when its cluster has a tile.
                __syncwarp();
                const uint32_t num_tiles = ceil_div(shape_m(p), uint32_t{kBlockM}) * ceil_div(shape_n(p), uint32_t{kBlockN});
                if (blockIdx.x / kSplitK < num_tiles) {  // the scheduler's test, without its registers
                    ptx::cluster_arrive();
                    ptx::cluster_wait();
                    ptx::cluster_arrive();
                    ptx::cluster_wait();
                }
            }
        } else {
            ptx::setmaxnreg_inc<kConsumerLiveRegs>();
            consume(p, smem, warp / 4, warp % 4, lane);
        }
    }
};

}  // namespace tessera::sm90
