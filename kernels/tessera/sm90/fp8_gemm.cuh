// FP8 dense GEMM with fine-grained scaling for SM90 (sm_90a): persistent CTAs, warp specialization, TMA + wgmma.
//
// Math, kb = 128-wide K block, all sums in FP32:
//   kMode 0 ("1D2D"): D[m,n]  = sum_kb (A_kb B_kb^T)[m,n] * sa[m,kb] * sb[n/128,kb]     D BF16
//   kMode 1 ("1D1D"): D[m,n] += sum_kb (A_kb B_kb^T)[m,n] * sa[m,kb] * sb[n,kb]         D FP32 (TMA reduce-add)
//
// Operands (docs/fp8_gemm_kernel.md has the exact tensor maps):
//   A e4m3 [M,K] K-major, B e4m3 [N,K] K-major; TMA boxes [128 K][kBlockM or kBlockN rows], 128B swizzle.
//   K % 16 == 0 (16-byte global strides); a partial last K block is zero-filled by TMA, so the math is unaffected.
//   SFA FP32, element (m,kb) at kb*align(M,4) + m: TMA box [kBlockM][1]. 1D1D SFB is the same over N, box [kBlockN][1].
//   1D2D SFB FP32 [ceil(N/128)][ceil(K/128)] row-major, read by the consumers with ordinary (L1-cached) loads: a
//   tile needs at most two values per k-block, issued before the full-barrier wait so their latency hides behind it.
//   D row-major, written per 64-row slice by TMA stores that clip at M and N; a tile whose rows must stop early
//   (grouped kinds, valid_rows < kBlockM) is written from registers straight to global memory instead.
//
// Problem kinds (Config::kGemmKind, prims/gemm_scheduler.cuh): dense, m-grouped contiguous / psum / masked (B is
// [G*N, K], SFB offset by the group, A rows addressed by the scheduler), k-grouped (per-group A/B tensor maps in
// the parameters, FP32 accumulate).
//
// Split-K (Config::kSplitK = S > 1, dense 1D2D, decode shapes whose tiles leave SMs idle): a cluster of S CTAs owns
// one tile; CTA r runs the mainloop over its share of the k-blocks, then the cluster sums the FP32 partials through
// distributed shared memory (reduce_split_k) and each CTA stores 1/S of the tile's columns. No global workspace, no
// counters to reset, deterministic summation order.
//
// Warp roles (kNumMathWarpgroups = 1 or 2 consumer warpgroups, then one producer warpgroup):
//   threads [0, 128*W)         consumers: wgmma + scale promotion + epilogue; setmaxnreg.inc to kMathRegs (232/248;
//                              240 in the unrolled contiguous 128x192 and psum/masked 128x256 kernels,
//                              kWideConsumers)
//   threads [128*W, 128*W+128) producer: one elected thread issues every TMA; setmaxnreg.dec to kProducerRegs (40;
//                              24 with kWideConsumers)
//   Consumer warpgroup g owns rows w*64*W + g*64 .. +64 of the tile for each wave w < kNumWaves (kBlockM/(64*W)).
//
// Barrier protocol (S = kNumStages, ring state persists across tiles):
//   full[s]  count 1: the producer's arrive.expect_tx(A+B+SFA(+SFB) box bytes, OOB fill included); TMA completes tx.
//   empty[s] count kClusterSize * (math warps): one arrival per consumer warp per CTA of the cluster.
//   Producer per k-block: wait empty[s] (parity phase^1; a fresh barrier passes), issue TMA, arrive.expect_tx(full[s]).
//   Consumer per k-block (serial): wgmma into a temporary accumulator; after the first batch is issued, release
//   empty[s-1] of the previous k-block (kLateRelease; else empty[s] after the wait below); while the last batch
//   runs, wait full[s+1] and read its scales; wait_group 0, promote. The first k-block's full[s] is waited for
//   before the loop, the last stage released after it.
//   Pipelined (kPipelined, one-wave tiles): kb's batch goes into the other temporary before kb-1's is retired with
//   wait_group 1; empty[s] of kb-1 is released at its retirement. Two-wave tiles with two warpgroups issue their
//   batches in turns (kOrderedMath, named barriers 3 and 4).
//   Cluster of 2: lane i of each consumer warp arrives on CTA i's empty[s] whenever the peer has a tile, even for
//   tiles that do not multicast; this keeps the two rings in lock step, so a multicast into the peer never lands in
//   a stage the peer still reads. Without a peer tile both lanes arrive locally. Only rank 0 issues a multicast
//   load; both CTAs expect its bytes. Before exit each producer waits one more pass over the empty ring, so no CTA
//   leaves while remote arrivals to its barriers are in flight.
//   Epilogue (sm90/fp8_gemm_epilogue.cuh), per consumer warpgroup (named barrier 1 + g): warp 0 waits wait_group.read 0 for the previous tile's
//   stores, bar, write the slice (stmatrix / st.shared) into the swizzled D tile, fence.proxy.async, bar, warp 0
//   issues the TMA stores and commits. The stores overlap the next tile's mainloop.
//   D over the ring (kDInRing): bar across all consumers instead (the A stages hold D), write, store, then warp 0 of
//   each warpgroup waits wait_group.read 0 and arrives on d_free; the producer waits for d_free before a CTA's next
//   tile, so the stores do not overlap its loads (the host plans it where each CTA has one tile).
//   D in halves (kDHalves): the same steps once per 128-column half through half a D tile; before the second half,
//   warp 0 waits wait_group.read 0 for the first half's stores.
//
// Shared memory (kSmemBytes = sizeof(SharedStorage), base 1024-byte aligned):
//   align(S*(4*kBlockM + sfb_stage + 16) (+ 8: d_free), 1024) + D tile (kBlockM*kBlockN*out_bytes; none with
//   kDInRing; half with kDHalves) + S*128*(kBlockM + kBlockN)
//   sfb_stage = 4 (1D2D: one reserved float; the host reserves 8, room for kernels that stage two B scales) or
//   4*align(kBlockN,32) (1D1D); every A/B stage and the D tile start on 1 KB.
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/epilogue.cuh>
#include <tessera/prims/gemm_scheduler.cuh>
#include <tessera/prims/pipeline.cuh>
#include <tessera/prims/promote.cuh>
#include <tessera/prims/scheduler.cuh>
#include <tessera/prims/smem_desc.cuh>
#include <tessera/ptx/mbarrier.cuh>
#include <tessera/ptx/memory.cuh>

// Timeline hooks: empty here; dev/fp8_gemm/timeline_probe.cu defines them to record, per CTA, the first or last time
// one thread (`cond`) reaches an event, so a probe can see where a kernel's time goes without a profiler.
#ifndef TESSERA_TIMELINE_FIRST
#define TESSERA_TIMELINE_FIRST(event, cond)
#endif
#ifndef TESSERA_TIMELINE_LAST
#define TESSERA_TIMELINE_LAST(event, cond)
#endif
// Per-tile hook: empty here; dev/fp8_gemm/tile_gap_probe.cu defines it to record when one consumer thread (`cond`)
// reaches each step of each tile, to see where the time between two tiles' wgmma goes.
#ifndef TESSERA_TILE_MARK
#define TESSERA_TILE_MARK(event, tile, cond)
#endif
#include <tessera/ptx/sync.cuh>
#include <tessera/ptx/tma.cuh>
#include <tessera/ptx/wgmma.cuh>
#include <tessera/ptx/wgmma_e4m3.cuh>
#include <tessera/sm90/fp8_gemm_epilogue.cuh>

namespace tessera::sm90 {

namespace fp8_gemm_detail {

// Optional Config members, each with its default when the generated Config leaves it out (dense specs keep their
// original text, and so their cache keys).
template <class C>
constexpr bool raster_along_m() {  // default: along M unless A is multicast, which needs pairs along N
    if constexpr (requires { C::kRasterAlongM; }) return C::kRasterAlongM != 0;
    else return C::kClusterN == 1;
}
template <class C>
constexpr prims::GemmKind gemm_kind() {  // default dense
    if constexpr (requires { C::kGemmKind; }) return static_cast<prims::GemmKind>(C::kGemmKind);
    else return prims::kDense;
}
template <class C>
constexpr int num_groups() {  // k-grouped: number of per-group tensor maps
    if constexpr (requires { C::kNumGroups; }) return C::kNumGroups;
    else return 1;
}
template <class C>
constexpr int split_k() {  // CTAs per cluster that share one tile along K (dense 1D2D only)
    if constexpr (requires { C::kSplitK; }) return C::kSplitK;
    else return 1;
}
template <class C>
constexpr bool math_order() {  // two consumer warpgroups of a two-wave tile take turns issuing wgmma
    if constexpr (requires { C::kMathOrder; }) return C::kMathOrder != 0;
    else return true;
}
template <class C>
constexpr bool pipelined() {  // one wgmma batch in flight while the previous one is promoted, where registers allow
    if constexpr (requires { C::kPipelined; }) return C::kPipelined != 0;
    else return true;
}

template <class C>
constexpr int ctas_per_sm() {  // 2: two CTAs share each SM (one consumer warpgroup each, half the shared memory)
    if constexpr (requires { C::kCtasPerSm; }) return C::kCtasPerSm;
    else return 1;
}

template <class C>
constexpr bool stream_k() {  // dense: the partial last wave is spread over every CTA (prims/stream_k.cuh)
    if constexpr (requires { C::kStreamK; }) return C::kStreamK != 0;
    else return false;
}

template <class C>
constexpr bool d_in_ring() {  // the D tile is staged over the A ring, not in shared memory of its own (one-wave plans)
    if constexpr (requires { C::kDInRing; }) return C::kDInRing != 0;
    else return false;
}

template <class C>
constexpr bool d_halves() {  // the D tile is staged one N half at a time (128x256: the other half's bytes are a stage)
    if constexpr (requires { C::kDHalves; }) return C::kDHalves != 0;
    else return false;
}

template <class C>
constexpr int load_rows_a() {  // rows of A and SFA each stage's TMA boxes carry (dense M <= 32: 16 or 32)
    if constexpr (requires { C::kLoadRowsA; }) return C::kLoadRowsA;
    else return C::kBlockM;
}

// The D tile's own shared memory: [atom][kBlockM][atom bytes] in the store swizzle (split-K: the partials); none
// when it is staged over the A ring (kDInRing).
template <int kBytes>
struct DTileSlot {
    alignas(1024) uint8_t d[kBytes];
};
template <>
struct DTileSlot<0> {};

constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }

}  // namespace fp8_gemm_detail

template <class Config>
struct Fp8GemmKernel {
    static constexpr bool kIs1D1D = Config::kMode == 1;
    static constexpr int kBlockM = Config::kBlockM;
    static constexpr int kBlockN = Config::kBlockN;
    static constexpr int kBlockK = Config::kBlockK;
    static constexpr int kNumStages = Config::kNumStages;
    static constexpr int kNumMathWarpgroups = Config::kNumMathWarpgroups;
    static constexpr int kClusterM = Config::kClusterM;  // 2: the pair shares B (same n, adjacent m)
    static constexpr int kClusterN = Config::kClusterN;  // 2: the pair shares A (same m, adjacent n)
    static constexpr int kClusterSize = kClusterM * kClusterN;  // multicast pair
    static constexpr int kSplitK = fp8_gemm_detail::split_k<Config>();
    static constexpr bool kSplit = kSplitK > 1;
    static constexpr int kClusterCtas = kClusterSize * kSplitK;  // the launch's cluster size
    static constexpr bool kStreamK = fp8_gemm_detail::stream_k<Config>();
    static constexpr int kNumSMs = Config::kNumSMs;  // the persistent grid
    static constexpr bool kRasterAlongM = fp8_gemm_detail::raster_along_m<Config>();
    static constexpr prims::GemmKind kKind = fp8_gemm_detail::gemm_kind<Config>();
    static constexpr bool kMGrouped = kKind == prims::kContiguous || kKind == prims::kPsum || kKind == prims::kMasked;
    static constexpr int kNumKGroups = kKind == prims::kKGrouped ? fp8_gemm_detail::num_groups<Config>() : 0;

    static constexpr int kWaveRows = 64 * kNumMathWarpgroups;  // rows covered by one wgmma per consumer warpgroup
    static constexpr int kNumWaves = kBlockM / kWaveRows;
    static constexpr int kNumMathThreads = 128 * kNumMathWarpgroups;
    static constexpr int kNumThreads = kNumMathThreads + 128;
    static constexpr int kProducerRegs = 40;
    // Two CTAs per SM (kCtasPerSm = 2, one consumer warpgroup each): __launch_bounds__ caps every thread at 128
    // registers (2 x 256 threads fill the 64K file); the producer's 88 given back raise the consumers to 216.
    static constexpr int kCtasPerSm = fp8_gemm_detail::ctas_per_sm<Config>();
    static constexpr int kMinBlocksPerSm = kCtasPerSm;
    static constexpr int kMathRegs = kCtasPerSm == 2 ? 216 : kNumMathWarpgroups == 1 ? 248 : 232;

    // Registers per consumer thread: the FP32 main accumulator (kNumWaves * kBlockN/2), one temporary wgmma
    // accumulator, and for 1D1D the B scales of one wgmma. If that exceeds the budget, each k-block's wgmma is split
    // along N into kNumNSplits batches that reuse one smaller temporary.
    static constexpr int kFinalRegs = kBlockN / 2;
    // Registers kept for addressing, scales and the scheduler (the host's Fp8GemmProblem::consumer_reserved_regs
    // mirrors this). Two-warpgroup tiles of every kind fit in 32, so psum, masked and k-grouped 128x192 / 128x152 run
    // whole; one-warpgroup tiles of the kinds that walk groups keep 48 (with 32, masked 64x144 became pipelined and
    // spilled).
    static constexpr int kReservedRegs =
        kKind == prims::kDense || kKind == prims::kContiguous || kNumMathWarpgroups == 2 ? 32 : 48;
    static constexpr int kAccumBudget = kMathRegs - kReservedRegs;
    // Psum and masked 128x256 tiles (two N halves) past K = 2048 take the unrolled loop too (kUnrollStages), with the
    // contiguous kernels' register split below; at K = 2048 the masked one spilled 8 B with it.
    static constexpr bool wide_grouped_unroll() {
        return (kKind == prims::kPsum || kKind == prims::kMasked) && kBlockM == 128 && kBlockN == 256 &&
               Config::kShapeK != kDynamic && Config::kShapeK > 2048;
    }
    // The contiguous 128x192 kernels with the unrolled loop (kUnrollStages) spilled 64-72 B at 232 registers: their
    // tile keeps more state across the mainloop than a dense one. Their producer fits in 24, which lets the consumers
    // have 240 (24 x 128 + 240 x 256 = the 64512 of the launch). The plan (kAccumBudget) stays at 232's.
    static constexpr bool kWideConsumers = (kKind == prims::kContiguous || wide_grouped_unroll()) &&
                                           kNumMathWarpgroups == 2 &&
                                           kCtasPerSm == 1 && !kIs1D1D && kNumStages <= 4 &&
                                           Config::kShapeK != kDynamic &&
                                           ceil_div(static_cast<int>(Config::kShapeK), 128) > 2 * kNumStages;
    static constexpr int kProducerLiveRegs = kWideConsumers ? 24 : kProducerRegs;
    static constexpr int kConsumerLiveRegs = kWideConsumers ? 240 : kMathRegs;
    static_assert(kProducerLiveRegs * 128 + kConsumerLiveRegs * 128 * kNumMathWarpgroups <=
                  kProducerRegs * 128 + kMathRegs * 128 * kNumMathWarpgroups);
    static constexpr int pick_num_n_splits() {
        for (int s = 1; s <= 4; s *= 2) {
            const int regs = kNumWaves * kFinalRegs + kBlockN / (2 * s) + (kIs1D1D ? kBlockN / (4 * s) : 0);
            if (kBlockN % (8 * s) == 0 && regs <= kAccumBudget) return s;
        }
        return 0;
    }
    static constexpr int kNumNSplits = pick_num_n_splits();
    static constexpr int kWgmmaN = kNumNSplits > 0 ? kBlockN / kNumNSplits : 8;
    static constexpr int kSplitChunks = kWgmmaN / 8;  // 8-column accumulator chunks per wgmma
    // A compile-time N that is not a multiple of kBlockN leaves the last n-block kTailN columns wide (4096 at 128x192:
    // 64 of 192). Serial 1D2D tiles with one N split run that block's wgmma at width kTailN, into a temporary of its
    // own, and promote only its chunks: the columns past N are never stored (TMA clips them), so computing them was
    // tensor and FFMA time lost. Contiguous at N = 4096 (3 % of the work) ran 1.7-2.6 % faster, at N = 7168 (1.7 %)
    // 1 % (docs/perf/fp8_grouped.md v14). Only where the saving is at least 1 % of the N work: at N = 32768 (0.2 %) the
    // second loop cost dense 4096x32768x512 2.8 %. Not psum: its loops lost their uniform wgmma descriptors. One-wave
    // tiles only: masked 256x128 at N = 576 spilled with the tail loop (a sweep of 1086 heuristic picks, v18).
    static constexpr int kNTail = Config::kShapeN == kDynamic ? 0 : static_cast<int>(Config::kShapeN % kBlockN);
    static constexpr int kTailN =
        kNTail > 0 && !kIs1D1D && kNumNSplits == 1 && kNumWaves == 1 && kKind != prims::kPsum &&
                (kBlockN - kNTail) * 100 >= kBlockN * ceil_div(static_cast<int>(Config::kShapeN), kBlockN)
            ? kNTail
            : 0;
    // Pipelined mainloop (one wave, one N split): two temporaries, so k-block kb+1's wgmma batch runs while kb's is
    // promoted. With a single temporary the promotion overlaps only the other warpgroup's batch, and only if the
    // warpgroups take turns and the path from a wait to the next issue is short (docs/perf/fp8_gemm.md v6).
    // Needs the main accumulator, two temporaries and (1D1D) two k-blocks of B scales in the register budget, plus
    // room for the split-K reduction's addressing (64x136 split 8 spilled 8 bytes without it).
    static constexpr bool kPipelined =
        fp8_gemm_detail::pipelined<Config>() && kNumWaves == 1 && kNumNSplits == 1 &&
        kFinalRegs + kBlockN + (kIs1D1D ? kBlockN / 2 : 0) + (kSplitK > 1 ? 16 : 0) <= kAccumBudget;

    // 1D2D: a tile spans one or two 128-wide B-scale blocks. kSbStep = chunks between possible block boundaries.
    static constexpr bool kUniformSb = 128 % kBlockN == 0;
    static constexpr int kSbStep = fp8_gemm_detail::gcd(kBlockN, 128) / 8;
    // 1D2D with a compile-time K of at most 128 k-blocks per tile (split-K: per CTA share): each consumer warp loads
    // the tile's B scales once, at the tile's start, lane l holding k-blocks l, l+32, ... (kSbRegs registers per B
    // scale row), and takes each later k-block's scale from its lane by shuffle; k-blocks 0 and 1 are loaded
    // directly, so no shuffle waits for the tile's loads before the first batches run. No global load is left in the
    // k-block loop, and no shared memory or barrier protocol is involved (the stage-staged variants were racy or
    // slower, docs/perf/fp8_gemm.md v7-v8). Longer K (or a runtime K) keeps the global loads two k-blocks ahead.
    static constexpr int kTileKb =
        Config::kShapeK == kDynamic ? 0 : ceil_div(ceil_div(static_cast<int>(Config::kShapeK), 128), kSplitK);
    // 256-row tiles take the lanes only up to 62 k-blocks (two registers per row, read without a bound test, below):
    // measured on the H200 (fp8_gemm.md v20), 1.4-1.5 % faster at K = 2048 and 7168, 1.2 % slower at K = 16384 with
    // four registers and the bound test (v9 had found them 1 % slower before the loop lost its other overheads).
    // Stream-K kernels keep the loads too: their partition state needs the registers (the 128x192 kernel spilled).
    static constexpr int kSbRegs = !kIs1D1D && !kStreamK && kTileKb > 0 && kTileKb <= (kBlockM < 256 ? 128 : 62)
                                       ? ceil_div(kTileKb, 32)
                                       : 0;
    // The lanes hold zeros past the tile's k-blocks: when they hold two more than the longest tile, the serial loop
    // reads k-block kb + 2 without testing it against the tile's count (a compare and a branch per k-block).
    static constexpr bool kSbPadded = kSbRegs > 0 && kSbRegs * 32 >= kTileKb + 2;
    // Contiguous consumers load the next tile's B scales into the lanes before this tile's epilogue (the scheduler's
    // lookahead ids name its expert), and take k-blocks 0 and 1 from the lanes too. ptxas keeps a contiguous tile's
    // B scales in uniform registers and moved k-blocks 0 and 1's there right after their loads (R2UR), so the
    // prologue waited out the loads' latency: ~380-440 cycles against dense's ~115 (tile_gap_probe,
    // docs/perf/fp8_grouped.md v22). Only the lanes' registers cross the epilogue: with the whole next tile carried
    // across it, ptxas ran out of uniform registers and moved the mainloop's wgmma descriptors to vector registers.
    // Tiles of up to 16 k-blocks only: on the H200 (128x192 tiles) the K = 2048 suite rows ran 0.6-1.8 % faster in
    // two A/Bs (fp8_grouped.md v23), K = 3072 and 4096 level, K = 7168 1.0-1.3 % slower.
    static constexpr bool kEarlyScales = kKind == prims::kContiguous && kClusterSize == 1 && kSbRegs > 0 &&
                                         kTileKb <= 16;

    static constexpr int kOutBytes = kIs1D1D ? 4 : 2;
    using OutTile = prims::SwizzledOutputTile<kBlockN, kBlockM, kOutBytes>;
    // Split-K reuses the D tile as its FP32 partial-sum buffer: [wave][chunk][consumer thread] float4.
    static constexpr int kDTileBytes = kSplit ? kBlockM * kBlockN * 4 : OutTile::kBytes;
    // D staged over the A ring (kDInRing, dense 1D2D serial tiles): the shared memory of the D tile goes to one more
    // stage. The epilogue writes D only after both consumer warpgroups have finished the tile's last wgmma, and the
    // producer loads a CTA's next tile only after that tile's stores have read D (the d_free barrier), so a CTA with
    // several tiles is correct but does not overlap its epilogue with the next loads: the planner asks for it only
    // where every CTA has at most one tile (4096x576x7168 at 128x144: 6 stages instead of 5).
    static constexpr bool kDInRing = fp8_gemm_detail::d_in_ring<Config>();
    // D staged in halves (kDHalves, BF16 128x256 masked tiles at 1536 < K <= 2048): the epilogue writes and stores
    // the tile's two 128-column halves in turn through half a tile of shared memory, which buys a fourth ring stage
    // (3 x 48 KB + 64 KB of D leaves no room for one; 4 x 48 KB + 32 KB + the barriers fill the 227 KB exactly). The
    // second half waits for the TMA to have read the first (docs/perf/fp8_grouped.md v26).
    static constexpr bool kDHalves = fp8_gemm_detail::d_halves<Config>();
    static constexpr int kDTileOwnBytes = kDInRing ? 0 : kDHalves ? kDTileBytes / 2 : kDTileBytes;
    static constexpr int kStoreBoxM = 64;  // one TMA store box per (consumer warpgroup, wave, atom)
    static constexpr int kStoreBoxN = OutTile::kAtomCols;
    static constexpr int kSwizzleDBytes = OutTile::kSwizzleBytes;

    // 1D1D: a TMA destination, padded to 128 bytes so every stage's box starts 128-byte aligned.
    static constexpr int kSfbStageFloats = kIs1D1D ? align_up(kBlockN, 32) : 1;
    // A small dense problem (M <= 32) on 64-row tiles may load only kLoadRowsA rows of A and SFA per stage: the
    // stage keeps 64 rows, the wgmma reads all of them, and the rows past the box (stale shared memory, never written
    // by any stage) only produce accumulator rows that no epilogue stores.
    static constexpr int kLoadRowsA = fp8_gemm_detail::load_rows_a<Config>();
    static constexpr uint32_t kTxBytes =
        (kLoadRowsA + kBlockN) * kBlockK + kLoadRowsA * 4 + (kIs1D1D ? kBlockN * 4 : 0);
    static constexpr uint32_t kEpilogueBarrierBase = 1;  // named barrier ids 1, 2; id 0 is __syncthreads
    // Two consumer warpgroups issue their wgmma batches in strict turns (named barriers 3 and 4: "warpgroup g may
    // issue"). Without an order both wait on the same full barrier, issue together, the tensor cores interleave the
    // two batches, both finish together and both promote together while the tensor cores idle. In turns, one
    // warpgroup's batch queues behind the other's, so each promotion overlaps the other warpgroup's wgmma.
    // One-wave tiles (each warpgroup 64 rows of a 128-row tile) take turns only in 1D1D with a ring of >= 4 stages:
    // there the per-column promotion is long enough to gain (H200, 7168x4096x16384 128x152: 981 -> 962 us), while
    // 1D2D one-wave tiles and 3-stage rings measured 0.5-2 % slower in turns (docs/perf/fp8_gemm.md v7).
    static constexpr bool kOrderedMath =
        kNumMathWarpgroups == 2 && !kPipelined && (kNumWaves == 2 || (kIs1D1D && kNumStages >= 4)) &&
        fp8_gemm_detail::math_order<Config>();
    static constexpr uint32_t kTurnBarrierBase = 3;
    static constexpr uint32_t kStreamKBarrier = 5;  // every consumer thread, around the stream-K arrivals
    static constexpr uint32_t kDInRingBarrier = 6;  // every consumer thread, before D is written over the ring
    // Serial mainloop: release a stage after the next k-block's first wgmma issue instead of between the stage's last
    // wgmma wait and its promotion, which takes the release off the wait-to-issue path (H200: 256x128 1-2 % faster
    // at M = 4096, 128x192 4 stages 1 %). The refill then starts one promotion later, which short k-blocks on a
    // 3-stage ring do not absorb: 1D1D 128x160 3 stages ran 11-17 % slower (576x4096x7168, 24576x4096x1536).
    static constexpr bool kLateRelease = kNumWaves == 2 || kNumStages >= 4;
    // Masked and psum one-wave tiles of two warpgroups: a warpgroup whose 64 rows all lie past the tile's group end
    // skips its wgmma (consume). Only up to K = 2048: on the H200 masked e192 and e1024 4096x2048 ran 2.0 % and 1.8 %
    // faster with it (fp8_grouped.md v19); ungated, e192 6144x7168 ran 2.6 % slower (v18).
    static constexpr bool kSkipIdleHalf = (kKind == prims::kMasked || kKind == prims::kPsum) && kNumWaves == 1 &&
                                          kNumMathWarpgroups == 2 && Config::kShapeK != kDynamic &&
                                          Config::kShapeK <= 2048;

    // ---------------------------------------------------------------------------------------------------------------
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
        void* workspace;               // stream-K: uint32 counters (align(grid, 64)), then [grid][kBlockM*kBlockN] fp32
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
        [[no_unique_address]] fp8_gemm_detail::DTileSlot<kDTileOwnBytes> d_slot;
        alignas(1024) uint8_t a[kNumStages][kBlockM * kBlockK];  // [stage][kBlockM][128] e4m3, 128B swizzle
        alignas(1024) uint8_t b[kNumStages][kBlockN * kBlockK];  // [stage][kBlockN][128] e4m3, 128B swizzle
    };
    static constexpr int kSmemBytes = static_cast<int>(sizeof(SharedStorage));
    // The formula docs/fp8_gemm_kernel.md gives the host heuristic must match the struct exactly.
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
    // Preconditions
    static_assert(Config::kMode == 0 || Config::kMode == 1, "kMode: 0 = 1D2D (BF16 out), 1 = 1D1D (FP32 accumulate)");
    static_assert(kBlockK == 128, "one wgmma batch per 128-K scale block: kBlockK must equal the scale granularity");
    static_assert(kNumMathWarpgroups == 1 || kNumMathWarpgroups == 2, "one or two consumer warpgroups");
    static_assert(kBlockM % kWaveRows == 0 && (kNumWaves == 1 || kNumWaves == 2),
                  "kBlockM = 64 * kNumMathWarpgroups * (1 or 2): wgmma rows are 64 per warpgroup");
    static_assert(kBlockN % 8 == 0 && kBlockN >= 8 && kBlockN <= 256, "wgmma N is a multiple of 8 in [8, 256]");
    static_assert(kIs1D1D || kBlockN <= 128 || kBlockN - 128 <= fp8_gemm_detail::gcd(kBlockN, 128),
                  "1D2D: a tile may span at most two 128-wide B-scale blocks (legal above 128: 136,144,160,192,256)");
    static_assert(kNumNSplits > 0, "accumulators do not fit the consumer register budget: lower kBlockN or kBlockM");
    static_assert(kNumStages >= 2, "the ring needs at least two stages to overlap TMA with wgmma");
    static_assert(kClusterM >= 1 && kClusterN >= 1 && kClusterSize <= 2, "clusters of at most two CTAs");
    static_assert(Config::kNumSMs % kClusterSize == 0, "the grid must be whole clusters");
    static_assert(kClusterSize == 1 || Config::kGroupSize % 2 == 0, "pairs must not straddle rasterization groups");
    static_assert(kClusterM == 1 || kRasterAlongM, "B multicast pairs adjacent m-blocks: raster along M");
    static_assert(kClusterN == 1 || !kRasterAlongM, "A multicast pairs adjacent n-blocks: raster along N");
    static_assert(Config::kShapeK == kDynamic || Config::kShapeK % 16 == 0, "K rows need 16-byte strides for TMA");
    static_assert(Config::kShapeN == kDynamic || Config::kShapeN % (kIs1D1D ? 4 : 8) == 0,
                  "D rows need 16-byte strides for TMA");
    static_assert(kTxBytes < (1u << 20), "mbarrier transaction counts are 20-bit");
    static_assert(kLoadRowsA == kBlockM ||
                      (kBlockM == 64 && (kLoadRowsA == 16 || kLoadRowsA == 32) && kKind == prims::kDense && !kIs1D1D),
                  "short A boxes: dense 1D2D 64-row tiles only, 16 or 32 rows");
    static_assert(kSmemBytes <= 232448, "exceeds the 227 KB of dynamic shared memory per block on SM90");
    // Two CTAs per SM: half the SM's 228 KB each, less the 1 KB the hardware reserves per block.
    static_assert(kCtasPerSm == 1 || kSmemBytes <= 233472 / 2 - 1024, "two CTAs per SM: at most 112 KB each");
    static_assert(kCtasPerSm == 1 || (kCtasPerSm == 2 && kNumMathWarpgroups == 1 && kClusterCtas == 1),
                  "two CTAs per SM: one consumer warpgroup, no cluster, no split-K");
    // The host mirrors Params byte for byte (docs/fp8_gemm_kernel.md: five 128-byte maps at 0..639, sfb at 640,
    // m/n/k at 648/652/656). NVRTC has no offsetof, so the size and alignment stand guard for the layout.
    static_assert(sizeof(BaseParams) == 704 && alignof(BaseParams) == 64, "Params layout is part of the host contract");
    static_assert(kKind != prims::kKGrouped || (kIs1D1D && kNumKGroups > 0), "k-grouped is 1D1D with kNumGroups maps");
    static_assert(!kMGrouped || !kIs1D1D, "m-grouped GEMMs are 1D2D (BF16 out)");
    static_assert(kKind != prims::kContiguous || kRasterAlongM, "contiguous multicast pairs adjacent m-blocks");
    static_assert(kSplitK >= 1 && kSplitK <= 8, "split-K: 1 to 8 CTAs per cluster (the portable cluster limit)");
    static_assert(!kSplit || (kKind == prims::kDense && !kIs1D1D && kClusterSize == 1),
                  "split-K: dense 1D2D without multicast");
    static_assert(Config::kNumSMs % kClusterCtas == 0, "the grid must be whole clusters");
    static_assert(!kDInRing || (kKind == prims::kDense && !kIs1D1D && !kSplit && !kStreamK && kClusterSize == 1 &&
                                kCtasPerSm == 1 && kDTileBytes <= kNumStages * kBlockM * kBlockK),
                  "D over the ring: dense 1D2D serial tiles without cluster, and a ring of A that holds the D tile");
    static_assert(!kStreamK || (kKind == prims::kDense && !kSplit && kCtasPerSm == 1),
                  "stream-K: dense, without split-K, one CTA per SM (every CTA resident: owners spin on arrivals)");

    using Scheduler =
        prims::GemmScheduler<kKind, kBlockM, kBlockN, Config::kGroupSize, kClusterSize, kRasterAlongM, kSplitK,
                             kStreamK>;
    // The consumers' instance runs in whole warps (prims::GemmScheduler's kWarpAhead).
    using ConsumerScheduler =
        prims::GemmScheduler<kKind, kBlockM, kBlockN, Config::kGroupSize, kClusterSize, kRasterAlongM, kSplitK,
                             kStreamK, true>;
    using Ring = prims::RingState<kNumStages>;
    using Epilogue = Fp8GemmEpilogue<Fp8GemmKernel>;  // tile stores and the split-K reduction (fp8_gemm_epilogue.cuh)

    TESSERA_DEVICE static uint32_t shape_m(const Params& p) {
        if constexpr (Config::kShapeM != kDynamic) return Config::kShapeM;
        else return p.m;
    }
    TESSERA_DEVICE static uint32_t shape_n(const Params& p) {
        if constexpr (Config::kShapeN != kDynamic) return Config::kShapeN;
        else return p.n;
    }
    TESSERA_DEVICE static uint32_t shape_k(const Params& p) {
        if constexpr (Config::kShapeK != kDynamic) return Config::kShapeK;
        else return p.k;
    }

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
    TESSERA_DEVICE static void prefetch_d_tile(const Params& p, const prims::GemmTile& tile) {
        const int32_t n0 = static_cast<int32_t>(tile.coord.n_block * kBlockN);
#pragma unroll
        for (int w = 0; w < kNumWaves; ++w)
#pragma unroll
            for (int g = 0; g < kNumMathWarpgroups; ++g)
#pragma unroll
                for (int atom = 0; atom < OutTile::kNumAtoms; ++atom)
                    ptx::tma_prefetch_l2_2d(p.tensor_map_d, n0 + atom * OutTile::kAtomCols,
                                            static_cast<int32_t>(tile.d_row + w * kWaveRows + g * 64));
    }

    // One thread. Walks the same tile sequence as the consumers and fills the ring.
    TESSERA_DEVICE static void produce(const Params& p, SharedStorage& smem) {
        const uint32_t n = shape_n(p);
        TESSERA_TIMELINE_FIRST(kProducerStart, true);
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
            const int32_t b_row = static_cast<int32_t>(kMGrouped ? tile.group * n : 0u) + n0;
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
                const uint32_t s = ring.stage;
                ptx::mbarrier_wait(ptx::smem_addr(&smem.empty_barriers[s]), ring.phase ^ 1u);
                const uint32_t full = ptx::smem_addr(&smem.full_barriers[s]);
                if (!tile.loads) {
                    // Zero tile in a cluster: the stage passes empty so both rings stay in step; nothing is read.
                    ptx::mbarrier_arrive(full);
                    ring.advance();
                    continue;
                }
                const int32_t k0 = static_cast<int32_t>((tile.k_begin + kb) * kBlockK);
                const int32_t sf_kb = static_cast<int32_t>(tile.sf_k0 + tile.k_begin + kb);
                if (issue_a) {
                    load(multicast_a, smem.a[s], desc_a, full, k0, a_row);
                    load(multicast_a, smem.sfa[s], p.tensor_map_sfa, full, static_cast<int32_t>(tile.sfa_col), sf_kb);
                }
                if (issue_b) {
                    load(multicast_b, smem.b[s], desc_b, full, k0, b_row);
                    if constexpr (kIs1D1D) load(multicast_b, smem.sfb[s], p.tensor_map_sfb, full, n0, sf_kb);
                }
                ptx::mbarrier_arrive_expect_tx(full, kTxBytes);
                ring.advance();
                // 1D1D: the tile's D is reduce-added by TMA, which reads it from DRAM (in L2, the TMA unit's
                // read-modify-writes queue in front of the next tile's loads). Fetch it into L2 a few k-blocks
                // before the epilogue, while the mainloop still runs.
                if constexpr (kIs1D1D && !kSplit)
                    if (kb + kDPrefetchLead == tile.num_k_blocks ||
                        (kb == 0 && tile.num_k_blocks < kDPrefetchLead))
                        prefetch_d_tile(p, tile);
            }
        }
        TESSERA_TIMELINE_LAST(kProducerLastLoad, true);
        if constexpr (kClusterSize > 1) {
            // Wait for the release of every stage still in use: after this no remote arrival can target this CTA.
            for (int i = 0; i < kNumStages; ++i) {
                ptx::mbarrier_wait(ptx::smem_addr(&smem.empty_barriers[ring.stage]), ring.phase ^ 1u);
                ring.advance();
            }
        }
    }
    // ---------------------------------------------------------------------------------------------------------------
    TESSERA_DEVICE static void release(SharedStorage& smem, uint32_t stage, bool peer_alive, uint32_t lane) {
        const uint32_t bar = ptx::smem_addr(&smem.empty_barriers[stage]);
        if constexpr (kClusterSize == 1) {
            if (lane == 0) ptx::mbarrier_arrive(bar);
        } else if (lane < 2) {
            const uint32_t target = peer_alive ? lane : ptx::cluster_cta_rank();
            ptx::mbarrier_arrive_cluster(ptx::map_shared_rank(bar, target));
        }
    }

    // Fold split `s` of wave `w`'s temporary accumulator into the main one.
    // kChunks: the batch's 8-column chunks (kSplitChunks, or a tail block's kTailN / 8). kFormer > 0: the tile's
    // B-scale boundary (`former`) is known at compile time (kHoistFormer); 0: it is dispatched here, per k-block.
    template <int kSplit, int kChunks = kSplitChunks, int kFormer = 0>
    TESSERA_DEVICE static void promote(float* dst, const float* tmp, float sa0, float sa1, float sb_lo, float sb_hi,
                                       const float* sb_cols, uint32_t former) {
        constexpr int kBase = kSplit * kSplitChunks;
        if constexpr (kIs1D1D) {
            prims::promote_per_column<kChunks>(dst, tmp, sa0, sa1, sb_cols);
        } else if constexpr (kUniformSb) {
            prims::promote_uniform<kChunks>(dst, tmp, sa0 * sb_lo, sa1 * sb_lo);
        } else if constexpr (kBlockN % 128 == 0) {
            // The boundary sits at tile column 128 for every tile.
            constexpr int kLocal = 16 - kBase < 0 ? 0 : (16 - kBase > kChunks ? kChunks : 16 - kBase);
            prims::promote_two_blocks<kChunks, kLocal>(dst, tmp, sa0 * sb_lo, sa1 * sb_lo, sa0 * sb_hi, sa1 * sb_hi);
        } else if constexpr (kFormer > 0) {
            constexpr int kLocal = kFormer - kBase < 0 ? 0 : (kFormer - kBase > kChunks ? kChunks : kFormer - kBase);
            prims::promote_two_blocks<kChunks, kLocal>(dst, tmp, sa0 * sb_lo, sa1 * sb_lo, sa0 * sb_hi, sa1 * sb_hi);
        } else {
            prims::promote_two_blocks_dispatch<kChunks, kBase, kSbStep>(former, dst, tmp, sa0 * sb_lo, sa1 * sb_lo,
                                                                        sa0 * sb_hi, sa1 * sb_hi);
        }
    }

    // The wgmma descriptors of one stage's A and B (row 0, k 0). The serial loop carries them from k-block to k-block
    // with one add each: ptxas rebuilt them from the shared-memory base every k-block (~20 uniform instructions
    // between the promotion and the next issue), even when written as stage 0's descriptor plus an offset.
    struct StageDescs {
        uint64_t a, b;
        TESSERA_DEVICE static StageDescs of(SharedStorage& smem, uint32_t stage) {
            return {prims::advance_desc(prims::make_desc_kmajor_sw128(ptx::smem_addr(smem.a[0])), stage * kABytes),
                    prims::advance_desc(prims::make_desc_kmajor_sw128(ptx::smem_addr(smem.b[0])), stage * kBBytes)};
        }
        // To the next stage (`wrap`: the ring went back to stage 0). Only the start-address field, in the low word,
        // changes: no stage's address carries out of it.
        TESSERA_DEVICE void advance(bool wrap) {
            a = add_low(a, wrap ? 0u - (kNumStages - 1) * (kABytes >> 4) : kABytes >> 4);
            b = add_low(b, wrap ? 0u - (kNumStages - 1) * (kBBytes >> 4) : kBBytes >> 4);
        }
        TESSERA_DEVICE static uint64_t add_low(uint64_t desc, uint32_t delta) {
            return (desc & ~0xffffffffull) | static_cast<uint32_t>(static_cast<uint32_t>(desc) + delta);
        }
        static constexpr uint32_t kABytes = kBlockM * kBlockK, kBBytes = kBlockN * kBlockK;
    };

    // Issues one wgmma batch (4 x k32) of wave w, split s, from the stage described by stage_desc, into tmp, and passes
    // the turn; mma_wait retires it.
    template <int kSplit, int kN = kWgmmaN>
    TESSERA_DEVICE static void mma_issue(const StageDescs& stage_desc, uint32_t a_row, uint32_t wg,
                                         float (&tmp)[kN / 2]) {
        if constexpr (kOrderedMath) ptx::named_barrier_sync(kTurnBarrierBase + wg, 256);
        const uint64_t desc_a = prims::advance_desc(stage_desc.a, a_row * kBlockK);
        const uint64_t desc_b = prims::advance_desc(stage_desc.b, kSplit * kWgmmaN * kBlockK);
        ptx::wgmma_fence();
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) ptx::fence_operand(tmp[i]);
#pragma unroll
        for (int k = 0; k < kBlockK / 32; ++k) {
            // The first k32 step overwrites tmp (scale-d = 0): each 128-K block starts from zero.
            ptx::wgmma_m64k32_e4m3(tmp, prims::advance_desc(desc_a, k * 32), prims::advance_desc(desc_b, k * 32), k);
        }
        ptx::wgmma_commit_group();
        if constexpr (kOrderedMath) ptx::named_barrier_arrive(kTurnBarrierBase + (wg ^ 1u), 256);
    }

    template <int kN = kWgmmaN>
    TESSERA_DEVICE static void mma_wait(float (&tmp)[kN / 2]) {
        ptx::wgmma_wait_group<0>();
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) ptx::fence_operand(tmp[i]);
    }

    // All waves and N splits of one k-block. `ahead` runs once, after the k-block's last batch is issued and before
    // it is waited for: work for the next k-block (its full-barrier wait, its scales) done there runs while the
    // tensor cores are busy, not between this warpgroup's last wgmma wait and its next issue. That path must fit
    // in one batch of the other warpgroup (256 cycles at 256x128) or the tensor cores idle; measured on the H200
    // (dev/fp8_gemm/overlap_probe.cu): the promotion FFMAs alone fit, with the barrier wait and scale loads they do
    // not.
    template <int kSplit, int kN, int kFormer, class AfterFirst, class Ahead>
    TESSERA_DEVICE static void mma_and_promote(SharedStorage& smem, uint32_t stage, const StageDescs& stage_desc,
                                               uint32_t wg, uint32_t lane,
                                               bool peer_alive, uint32_t former, const float (&sa)[kNumWaves][2],
                                               float sb_lo, float sb_hi, float (&acc)[kNumWaves][kFinalRegs],
                                               float (&tmp)[kN / 2], const AfterFirst& after_first,
                                               const Ahead& ahead) {
#pragma unroll
        for (int w = 0; w < kNumWaves; ++w) {
            // 1D1D: this thread's B scales for the split, read before the stage's release lets TMA overwrite them.
            float sb_cols[kIs1D1D ? 2 * kSplitChunks : 1];
            if constexpr (kIs1D1D) {
#pragma unroll
                for (int i = 0; i < kSplitChunks; ++i) {
                    const uint32_t col = kSplit * kWgmmaN + i * 8 + (lane % 4) * 2;
                    sb_cols[2 * i + 0] = smem.sfb[stage][col];
                    sb_cols[2 * i + 1] = smem.sfb[stage][col + 1];
                }
            }
            mma_issue<kSplit, kN>(stage_desc, w * kWaveRows + wg * 64, wg, tmp);
            if (w == 0 && kSplit == 0) after_first();
            const bool last = w == kNumWaves - 1 && kSplit == kNumNSplits - 1;
            if (last) ahead();
            mma_wait<kN>(tmp);
            if (!kLateRelease && last) release(smem, stage, peer_alive, lane);
            promote<kSplit, kN / 8, kFormer>(acc[w] + kSplit * kSplitChunks * 4, tmp, sa[w][0], sa[w][1], sb_lo,
                                             sb_hi, sb_cols, former);
        }
        if constexpr (kSplit + 1 < kNumNSplits) {
            mma_and_promote<kSplit + 1, kN, kFormer>(smem, stage, stage_desc, wg, lane, peer_alive, former, sa, sb_lo,
                                                     sb_hi, acc, tmp, after_first, ahead);
        }
    }

    TESSERA_DEVICE static void read_sa(SharedStorage& smem, uint32_t stage, uint32_t row0, float (&sa)[kNumWaves][2]) {
#pragma unroll
        for (int w = 0; w < kNumWaves; ++w) {
            sa[w][0] = smem.sfa[stage][w * kWaveRows + row0];
            sa[w][1] = smem.sfa[stage][w * kWaveRows + row0 + 8];
        }
    }

    // 1D2D B scales of one tile: its first and (straddling tiles) second SFB row, offset to the tile's first k-block;
    // with kSbRegs > 0 also the first two k-blocks' values and the rest in registers across the warp's lanes.
    struct BScales {
        const float* lo_row;
        const float* hi_row;
        float first_lo[2], first_hi[2];
        float lo_regs[kSbRegs > 0 ? kSbRegs : 1];
        float hi_regs[kSbRegs > 0 && !kUniformSb ? kSbRegs : 1];

        // The SFB rows of the tile at column n0 of `group`, from k-block k_begin.
        TESSERA_DEVICE void set_rows(const float* sfb, uint32_t n, uint32_t sf_k, uint32_t group, uint32_t n0,
                                     uint32_t k_begin) {
            const uint32_t n_sf_blocks = ceil_div(n, 128u);
            lo_row = sfb + (static_cast<uint64_t>(group) * n_sf_blocks + n0 / 128) * sf_k + k_begin;
            const bool straddles = (n0 % 128) + kBlockN > 128 && (n0 / 128 + 1) * 128 < n;
            hi_row = straddles ? lo_row + sf_k : lo_row;
        }
        TESSERA_DEVICE void load_tile(uint32_t num_kb, uint32_t lane) {
            if constexpr (kEarlyScales) {
                // Volatile: issued where written, before the epilogue, not sunk to the values' first use.
                static_assert(kSbRegs == 1);
                lo_regs[0] = lane < num_kb ? ptx::ld_global_nc_volatile(lo_row + lane) : 0.f;
                if constexpr (!kUniformSb) hi_regs[0] = lane < num_kb ? ptx::ld_global_nc_volatile(hi_row + lane) : 0.f;
            } else if constexpr (kSbRegs > 0) {
#pragma unroll
                for (uint32_t i = 0; i < 2; ++i) {
                    first_lo[i] = i < num_kb ? __ldg(lo_row + i) : 0.f;
                    first_hi[i] = kUniformSb ? first_lo[i] : i < num_kb ? __ldg(hi_row + i) : 0.f;
                }
#pragma unroll
                for (int j = 0; j < kSbRegs; ++j) {
                    const uint32_t kb = lane + 32u * j;
                    lo_regs[j] = kb < num_kb ? __ldg(lo_row + kb) : 0.f;
                    if constexpr (!kUniformSb) hi_regs[j] = kb < num_kb ? __ldg(hi_row + kb) : 0.f;
                }
            }
        }
        template <int kN>
        TESSERA_DEVICE static float from_lanes(const float (&regs)[kN], uint32_t kb) {
            float v = regs[0];
#pragma unroll
            for (int j = 1; j < kN; ++j) v = kb >= 32u * j ? regs[j] : v;
            return __shfl_sync(0xffffffffu, v, kb & 31u);
        }
        // The scales of k-block kb (relative to the tile's first). kb is warp-uniform; kLater: kb >= 2 is known (the
        // serial loop's reads two k-blocks ahead), so no test of it is left on the loop's path.
        template <bool kLater = false>
        TESSERA_DEVICE void at(uint32_t kb, float& lo, float& hi) const {
            if constexpr (kIs1D1D) {
                return;
            } else if constexpr (kSbRegs > 0) {
                if (!kEarlyScales && !kLater && kb < 2) {
                    lo = kb == 0 ? first_lo[0] : first_lo[1];
                    hi = kb == 0 ? first_hi[0] : first_hi[1];
                } else {
                    lo = from_lanes(lo_regs, kb);
                    hi = kUniformSb ? lo : from_lanes(hi_regs, kb);
                }
            } else {
                lo = ptx::ld_global_nc_volatile(lo_row + kb);
                hi = kUniformSb ? lo : ptx::ld_global_nc_volatile(hi_row + kb);
            }
        }
    };

    // A tile whose columns straddle two 128-wide B-scale blocks promotes chunks [0, former) with the first block's
    // scales. When the boundary can fall at 4 or 8 places (gcd(kBlockN, 128) of 32 or 16: 160, 96, 144, ...), choosing
    // per k-block took a chain of compares and branches through the promotion FFMAs (22 % of the stall samples of
    // 4096x576x7168 at 128x144 were at branches); here the choice is made once per tile, for one copy of the k-block
    // loop per place: 2.6 % faster (docs/perf/fp8_gemm.md v19), and 3.7 % more once mma_issue stopped rebuilding the
    // descriptors from the stage's address, which ptxas had moved through vector registers in these loops (v20).
    // Dense serial tiles of one N split and one wave only: the grouped kinds lost their uniform descriptors to extra
    // loops before, and at a cost (tail-N, v18).
    static constexpr bool kHoistFormer = !kIs1D1D && !kUniformSb && kBlockN % 128 != 0 &&
                                         (kSbStep == 2 || kSbStep == 4) && !kPipelined && kNumNSplits == 1 &&
                                         kNumWaves == 1 && kSplitK == 1 && !kStreamK && kKind == prims::kDense;
    template <int kFormer>
    TESSERA_DEVICE static void mainloop_serial_at(SharedStorage& smem, Ring& ring, const prims::GemmTile& tile,
                                                  const BScales& sb, uint32_t former, uint32_t wg, uint32_t row0,
                                                  uint32_t lane, float (&acc)[kNumWaves][kFinalRegs],
                                                  float (&tmp)[kWgmmaN / 2]) {
        // former is a multiple of kSbStep in [kSbStep, 16]: the last value needs no compare.
        if constexpr (kFormer >= 16) {
            mainloop_serial<kWgmmaN, 16>(smem, ring, tile, sb, former, wg, row0, lane, acc, tmp);
        } else if (former == static_cast<uint32_t>(kFormer)) {
            mainloop_serial<kWgmmaN, kFormer>(smem, ring, tile, sb, former, wg, row0, lane, acc, tmp);
        } else {
            mainloop_serial_at<kFormer + kSbStep>(smem, ring, tile, sb, former, wg, row0, lane, acc, tmp);
        }
    }

    // Stage positions for the serial loop's step: one read at run time, or a compile-time constant (then the ring's
    // update is a constant store: the stage after it and, at the ring's end, the phase flip).
    struct RingAt {
        uint32_t value;
        TESSERA_DEVICE uint32_t stage() const { return value; }
        TESSERA_DEVICE static void advance(Ring& ring) { ring.advance(); }
    };
    template <uint32_t kStage>
    struct RingAtConst {
        TESSERA_DEVICE static constexpr uint32_t stage() { return kStage; }
        TESSERA_DEVICE static void advance(Ring& ring) {
            ring.stage = (kStage + 1) % kNumStages;
            if (kStage + 1 == kNumStages) ring.phase ^= 1u;
        }
    };
    // The serial loop unrolled over one pass of the ring, from stage 0: kNumStages copies of the k-block, each at a
    // constant stage. Only where the copies stay few and short (the hoisted 128x144 loops are 8 copies already), and
    // 1D2D dense, contiguous, and psum/masked 128x256 past K = 2048: the 1D1D kernels (per-column B scales) and the
    // psum and masked 128x192 kernels spilled with it, and so did the stream-K 128x192 kernel (92 B); contiguous takes
    // it with its consumers at 240 registers (kWideConsumers; 1.3 % faster, fp8_grouped.md v18), psum and masked
    // 128x256 too (psum 1.4-4 % faster at K = 3072-7168, masked e1024 at K = 7168 1.7 %, v25). Tiles of more than
    // two passes: with the three loops around a tile of one pass (K = 512) ptxas unrolled the whole tile and moved
    // its wgmma descriptors through vector registers (30-35 R2UR per loop); such tiles take kOnePassTiles instead.
    static constexpr bool kUnrollStages = kNumStages <= 4 && !kHoistFormer && !kIs1D1D && !kStreamK &&
                                          (kKind == prims::kDense || kKind == prims::kContiguous ||
                                           (wide_grouped_unroll() && kNumNSplits == 2)) &&
                                          kTileKb > 2 * kNumStages;
    // Tiles of exactly one pass of the ring (dense 128x192 and 64x256 at K = 512): every tile of these kernels has
    // kTileKb k-blocks (dense without split: num_k_blocks is ceil(kShapeK / 128) of the compile-time K, and cluster
    // zero tiles pass the same count through the ring), so each starts and ends at stage 0 and the whole tile is one
    // unrolled pass, with no loop and each k-block's descriptors folded from the constant stage. 4096x32768x512
    // 3.8 % faster, 1x32768x512 2 % (fp8_gemm.md v21).
    static constexpr bool kOnePassTiles = kNumStages <= 4 && !kHoistFormer && !kIs1D1D && !kStreamK && !kSplit &&
                                          !kPipelined && kKind == prims::kDense && kTileKb == kNumStages;
    template <uint32_t kStage, class Step>
    TESSERA_DEVICE static void unrolled_round(const Step& step, uint32_t kb) {
        step(kb + kStage, RingAtConst<kStage>{});
        if constexpr (kStage + 1 < kNumStages) unrolled_round<kStage + 1>(step, kb);
    }

    // Serial mainloop of one tile (tile.loads, not kPipelined): one temporary, each batch retired before the next.
    // The next k-block's full barrier and A scales are taken while this k-block's last batch runs (see `ahead`
    // above), and the 1D2D B scales are loaded two k-blocks ahead (volatile loads, issued early: an L2 hit outlasts
    // one k-block's promotion, and ncu showed the scale FMULs waiting on plain loads the compiler had sunk).
    template <int kN, int kFormer = 0>
    TESSERA_DEVICE static void mainloop_serial(SharedStorage& smem, Ring& ring, const prims::GemmTile& tile,
                                               const BScales& sb, uint32_t former,
                                               uint32_t wg, uint32_t row0, uint32_t lane,
                                               float (&acc)[kNumWaves][kFinalRegs], float (&tmp)[kN / 2]) {
        const uint32_t num_kb = tile.num_k_blocks;
        const bool peer_alive = tile.coord.peer_alive;
        float lo = 0.f, hi = 0.f, lo_next = 0.f, hi_next = 0.f;  // 1D2D B scales of kb and kb + 1
        sb.at(0, lo, hi);
        if (num_kb > 1) sb.at(1, lo_next, hi_next);
        const auto load_sb = [&](uint32_t kb, float& l, float& h) { sb.template at<true>(kb, l, h); };
        ptx::mbarrier_wait(ptx::smem_addr(&smem.full_barriers[ring.stage]), ring.phase);
        TESSERA_TIMELINE_FIRST(kFirstFull, row0 == 0 && lane == 0);
        float sa[kNumWaves][2];
        read_sa(smem, ring.stage, row0, sa);
        uint32_t prev_stage = 0;  // the previous k-block's stage, carried: recomputing it cost ~6 instructions
        StageDescs next_desc = StageDescs::of(smem, ring.stage);
        // One k-block at `at.stage` (RingAt: known only at run time; RingAtConst: a compile-time constant, so the
        // barrier addresses, the ring update and the descriptor adds fold into constants).
        const auto step = [&](uint32_t kb, auto at) {
            const uint32_t stage = at.stage();
            // Stream-K kernels rebuild them: their partition state leaves no registers to carry them (16 B spilled).
            // One-pass tiles too: at a constant stage the rebuild folds to stage 0's descriptor plus a constant.
            const StageDescs stage_desc = kStreamK || kOnePassTiles ? StageDescs::of(smem, stage) : next_desc;
            at.advance(ring);
            if (!kStreamK && !kOnePassTiles) next_desc.advance(ring.stage == 0);
            float sa_next[kNumWaves][2];
            float lo_after = 0.f, hi_after = 0.f;
            const auto ahead = [&] {
                if (kSbPadded) load_sb(kb + 2, lo_after, hi_after);
                if (kb + 1 < num_kb) {
                    if (!kSbPadded && kb + 2 < num_kb) load_sb(kb + 2, lo_after, hi_after);
                    ptx::mbarrier_wait(ptx::smem_addr(&smem.full_barriers[ring.stage]), ring.phase);
                }
                // Unconditional: after the last k-block the values are unused, and a select per scale is saved.
                read_sa(smem, ring.stage, row0, sa_next);
            };
            // kLateRelease: the previous k-block's stage is released once this k-block's first batch is issued.
            const auto after_first = [&] {
                if (kLateRelease && kb > 0) release(smem, prev_stage, peer_alive, lane);
            };
            mma_and_promote<0, kN, kFormer>(smem, stage, stage_desc, wg, lane, peer_alive, former, sa, lo, hi, acc,
                                            tmp, after_first, ahead);
#pragma unroll
            for (int w = 0; w < kNumWaves; ++w) {
                sa[w][0] = sa_next[w][0];
                sa[w][1] = sa_next[w][1];
            }
            lo = lo_next;
            hi = hi_next;
            lo_next = lo_after;
            hi_next = hi_after;
            prev_stage = stage;
        };
        if constexpr (kOnePassTiles) {
            unrolled_round<0>(step, 0);  // the ring is at stage 0: each tile before took one whole pass
        } else {
            uint32_t kb = 0;
            if constexpr (kUnrollStages && kN == kWgmmaN) {
                // Generic k-blocks until the ring is at stage 0, then whole passes, then the generic rest: three
                // loops, each with a single path (one loop holding both kinds of step let ptxas lay out paths through
                // the tile loop whose wgmma descriptors went through vector registers).
                for (; kb < num_kb && ring.stage != 0; ++kb) step(kb, RingAt{ring.stage});
                for (; kb + kNumStages <= num_kb; kb += kNumStages) unrolled_round<0>(step, kb);
            }
            for (; kb < num_kb; ++kb) step(kb, RingAt{ring.stage});
        }
        if constexpr (kLateRelease) release(smem, prev_stage, peer_alive, lane);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Pipelined mainloop of one tile (kPipelined, tile.loads): step kb issues kb's batch into tmp[kb % 2], then waits
    // for kb-1's batch only (wait_group 1), releases kb-1's stage and promotes it while kb's batch runs. The last batch
    // is drained after the loop. Scales are read when a batch is issued and kept until its promotion.
    struct Pending {
        uint32_t stage;
        float sa0, sa1, sb_lo, sb_hi;
        float sb_cols[kIs1D1D ? 2 * kSplitChunks : 1];
    };

    TESSERA_DEVICE static void issue_batch(SharedStorage& smem, uint32_t stage, uint32_t wg, float (&tmp)[kWgmmaN / 2]) {
        const uint64_t desc_a = prims::advance_desc(prims::make_desc_kmajor_sw128(ptx::smem_addr(smem.a[0])),
                                                    stage * sizeof(smem.a[0]) + wg * 64 * kBlockK);
        const uint64_t desc_b =
            prims::advance_desc(prims::make_desc_kmajor_sw128(ptx::smem_addr(smem.b[0])), stage * sizeof(smem.b[0]));
#pragma unroll
        for (int i = 0; i < kWgmmaN / 2; ++i) ptx::fence_operand(tmp[i]);
        ptx::wgmma_fence();
#pragma unroll
        for (int k = 0; k < kBlockK / 32; ++k)
            ptx::wgmma_m64k32_e4m3(tmp, prims::advance_desc(desc_a, k * 32), prims::advance_desc(desc_b, k * 32), k);
        ptx::wgmma_commit_group();
    }

    // Waits until at most kInFlight batches are pending, then releases and promotes `done` (the older batch).
    template <int kInFlight>
    TESSERA_DEVICE static void retire_batch(SharedStorage& smem, const Pending& done, float (&tmp)[kWgmmaN / 2],
                                            bool peer_alive, uint32_t lane, uint32_t former,
                                            float (&acc)[kNumWaves][kFinalRegs]) {
        ptx::wgmma_wait_group<kInFlight>();
#pragma unroll
        for (int i = 0; i < kWgmmaN / 2; ++i) ptx::fence_operand(tmp[i]);
        release(smem, done.stage, peer_alive, lane);
        promote<0>(acc[0], tmp, done.sa0, done.sa1, done.sb_lo, done.sb_hi, done.sb_cols, former);
    }

    // Waits for kb's stage, reads its scales and issues its batch into `tmp`; returns what its retirement needs.
    TESSERA_DEVICE static Pending issue_step(SharedStorage& smem, Ring& ring, float (&tmp)[kWgmmaN / 2], float sb_lo,
                                             float sb_hi, uint32_t wg, uint32_t row0, uint32_t lane) {
        const uint32_t stage = ring.stage;
        ptx::mbarrier_wait(ptx::smem_addr(&smem.full_barriers[stage]), ring.phase);
        Pending next;
        next.stage = stage;
        next.sa0 = smem.sfa[stage][row0];
        next.sa1 = smem.sfa[stage][row0 + 8];
        next.sb_lo = sb_lo;
        next.sb_hi = sb_hi;
        if constexpr (kIs1D1D) {
#pragma unroll
            for (int i = 0; i < kSplitChunks; ++i) {
                const uint32_t col = i * 8 + (lane % 4) * 2;
                next.sb_cols[2 * i + 0] = smem.sfb[stage][col];
                next.sb_cols[2 * i + 1] = smem.sfb[stage][col + 1];
            }
        }
        issue_batch(smem, stage, wg, tmp);
        ring.advance();
        return next;
    }

    // The loop is written so that every wait is unconditional and the temporaries alternate in a fixed pattern
    // (prologue issues tmp0; each iteration issues tmp1 then tmp0): ptxas must see that no accumulator of an
    // in-flight batch is read, or it serializes every wgmma (warning C7514).
    TESSERA_DEVICE static void mainloop_pipelined(SharedStorage& smem, Ring& ring, const prims::GemmTile& tile,
                                                  const BScales& sb, uint32_t former,
                                                  uint32_t wg, uint32_t row0, uint32_t lane,
                                                  float (&acc)[kNumWaves][kFinalRegs]) {
        float tmp0[kWgmmaN / 2], tmp1[kWgmmaN / 2];  // the two temporaries, k-blocks alternate between them
        const uint32_t num_kb = tile.num_k_blocks;
        const bool peer_alive = tile.coord.peer_alive;
        // 1D2D B scales one k-block ahead, as in the serial loop.
        float sb_lo_next = 0.f, sb_hi_next = 0.f;
        sb.at(0, sb_lo_next, sb_hi_next);
        float lo = 0.f, hi = 0.f;
        const auto scales = [&](uint32_t kb) {
            lo = sb_lo_next;
            hi = kUniformSb ? sb_lo_next : sb_hi_next;
            if (kb + 1 < num_kb) sb.at(kb + 1, sb_lo_next, sb_hi_next);
        };
        scales(0);
        Pending older = issue_step(smem, ring, tmp0, lo, hi, wg, row0, lane);
        TESSERA_TIMELINE_FIRST(kFirstFull, row0 == 0 && lane == 0);
        uint32_t kb = 1;
        for (; kb + 1 < num_kb; kb += 2) {
            scales(kb);
            Pending newer = issue_step(smem, ring, tmp1, lo, hi, wg, row0, lane);
            retire_batch<1>(smem, older, tmp0, peer_alive, lane, former, acc);
            scales(kb + 1);
            older = issue_step(smem, ring, tmp0, lo, hi, wg, row0, lane);
            retire_batch<1>(smem, newer, tmp1, peer_alive, lane, former, acc);
        }
        if (kb < num_kb) {
            scales(kb);
            Pending newer = issue_step(smem, ring, tmp1, lo, hi, wg, row0, lane);
            retire_batch<1>(smem, older, tmp0, peer_alive, lane, former, acc);
            retire_batch<0>(smem, newer, tmp1, peer_alive, lane, former, acc);
        } else {
            retire_batch<0>(smem, older, tmp0, peer_alive, lane, former, acc);
        }
    }

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
            TESSERA_TILE_MARK(kTileStart, tile, row0 == 0 && lane == 0);
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
            TESSERA_TILE_MARK(kLoopEnter, tile, row0 == 0 && lane == 0);
            if (pipelined) {
                mainloop_pipelined(smem, ring, tile, sb, former, wg, row0, lane, acc);
            } else if (computes && tile.num_k_blocks > 0) {
                if (kTailN > 0 && n0 + kBlockN > n) {
                    constexpr int kN = kTailN > 0 ? kTailN : kWgmmaN;
                    float tail_tmp[kN / 2];  // the tail's own temporary; its first batch overwrites it (scale-d = 0)
                    mainloop_serial<kN>(smem, ring, tile, sb, former, wg, row0, lane, acc, tail_tmp);
                } else if constexpr (kHoistFormer) {
                    mainloop_serial_at<kSbStep>(smem, ring, tile, sb, former, wg, row0, lane, acc, tmp);
                } else {
                    mainloop_serial<kWgmmaN>(smem, ring, tile, sb, former, wg, row0, lane, acc, tmp);
                }
            } else {
                // Zero tile of a cluster, or an idle half: the stages pass through (the rings stay in step, and the
                // producer gets every release it waits for); nothing is read.
                for (uint32_t kb = 0; kb < tile.num_k_blocks; ++kb) {
                    ptx::mbarrier_wait(ptx::smem_addr(&smem.full_barriers[ring.stage]), ring.phase);
                    release(smem, ring.stage, tile.coord.peer_alive, lane);
                    ring.advance();
                }
            }
            TESSERA_TIMELINE_LAST(kMainloopDone, row0 == 0 && lane == 0);
            TESSERA_TILE_MARK(kLoopDone, tile, row0 == 0 && lane == 0);
            if constexpr (kStreamK) {
                const prims::StreamKTag tag = scheduler.sk_tag;
                if (tag.role() == prims::StreamKTag::kContributor) {
                    Epilogue::stream_k_contribute(p, acc, tag);
                    continue;  // the owner stores the tile
                }
                if (tag.role() == prims::StreamKTag::kOwner && tag.count() > 0)
                    Epilogue::stream_k_gather(p, acc, tag);
            }
            if constexpr (kEarlyScales) {
                uint32_t next_n_block, next_expert;
                early_ready = scheduler.peek_next(next_n_block, next_expert);
                if (early_ready) {
                    early_sb.set_rows(p.sfb, n, sf_k, next_expert, next_n_block * kBlockN, 0);
                    early_sb.load_tile(kTileKb, lane);
                }
            }
            // Stream-K and masked kernels take the warp index afresh here, so that it need not survive their mainloop
            // in a register (the stream-K 256x128 and masked 128x192 kernels spilled it). Through a shuffle: ptxas
            // must see it warp-uniform, or the epilogue's warp-0 branches count as divergent and the mainloop's
            // wgmma descriptors move to vector registers (R2UR before every wgmma).
            const uint32_t ewarp = kStreamK || kKind == prims::kMasked ? ptx::warp_id_uniform() % 4 : warp;
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
            TESSERA_TIMELINE_LAST(kStoreIssued, row0 == 0 && lane == 0);
            TESSERA_TILE_MARK(kStored, tile, row0 == 0 && lane == 0);
        }
        // Warpgroup 1 granted one more turn than warpgroup 0 takes: take it, so no barrier is left half-arrived.
        if (kOrderedMath && wg == 0) ptx::named_barrier_sync(kTurnBarrierBase, 256);
        // the last stores complete before the CTA (and its smem) retires
        if ((kStreamK ? (threadIdx.x / 32) % 4 : warp) == 0) ptx::bulk_wait_group<0>();
        TESSERA_TIMELINE_LAST(kExit, row0 == 0 && lane == 0);
    }
    // ---------------------------------------------------------------------------------------------------------------
    static __device__ void run(const Params& p) {
        extern __shared__ __attribute__((aligned(1024))) uint8_t tessera_smem[];
        SharedStorage& smem = *reinterpret_cast<SharedStorage*>(tessera_smem);
        const uint32_t warp = ptx::warp_id_uniform();
        const uint32_t lane = ptx::lane_id();
        constexpr uint32_t kProducerWarp = kNumMathThreads / 32;
        TESSERA_TIMELINE_FIRST(kEntry, threadIdx.x == 0);

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
            for (int s = 0; s < kNumStages; ++s) {
                ptx::mbarrier_init(ptx::smem_addr(&smem.full_barriers[s]), 1);
                ptx::mbarrier_init(ptx::smem_addr(&smem.empty_barriers[s]), kClusterSize * kNumMathThreads / 32);
            }
            if constexpr (kDInRing) ptx::mbarrier_init(d_free_barrier(smem), kNumMathWarpgroups);
            ptx::fence_mbarrier_init();
        }
        // Every barrier of the cluster is initialised before any thread (or peer multicast) uses one.
        if constexpr (kClusterCtas > 1) {
            ptx::cluster_arrive();
            ptx::cluster_wait();
        } else {
            __syncthreads();
        }

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
