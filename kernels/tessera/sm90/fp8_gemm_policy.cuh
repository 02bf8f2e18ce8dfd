// Compile-time plan of the SM90 FP8 GEMM kernel (sm90/fp8_gemm.cuh): everything the kernel derives from the
// generated Config (tile, stages, cluster, split-K, problem kind, shape constants), in one place, with the rules that
// keep a plan legal. The host planner (src/heuristics/fp8_gemm_plan.cpp) mirrors the register and shared-memory
// rules; the CPU tests compare the two where they must agree.
//
// Config members (rendered by the JIT from the host's spec): kMode, kBlockM, kBlockN, kBlockK, kNumStages,
// kNumMathWarpgroups, kClusterM, kClusterN, kNumSMs, kShapeM/N/K (0 = read at run time), kGroupSize; optional, with
// the defaults below: kGemmKind, kNumGroups, kSplitK, kRasterAlongM, kDInRing, kDHalves, kLoadRowsA, kHeadLeft /
// kHeadMid / kHeadRight.
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/epilogue.cuh>
#include <tessera/prims/gemm_scheduler.cuh>
#include <tessera/prims/pipeline.cuh>
#include <tessera/prims/smem_desc.cuh>

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
constexpr int head_split(int which) {  // skip-head-mid (left, mid, right) columns per head; 0: an ordinary D
    if constexpr (requires { C::kHeadMid; }) return which == 0 ? C::kHeadLeft : which == 1 ? C::kHeadMid : C::kHeadRight;
    else return 0;
}
template <class C>
constexpr int load_rows_a() {  // rows of A and SFA each stage's TMA boxes carry (dense M <= 32: 16 or 32)
    if constexpr (requires { C::kLoadRowsA; }) return C::kLoadRowsA;
    else return C::kBlockM;
}

constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }

}  // namespace fp8_gemm_detail

template <class Config>
struct Fp8GemmPolicy {
    static constexpr bool kIs1D1D = Config::kMode == 1;
    // The epilogue's view (sm90/gemm_epilogue.cuh): 1D1D writes FP32 and adds into D (C was copied there).
    static constexpr bool kOutF32 = kIs1D1D;
    static constexpr bool kReduceAdd = kIs1D1D;
    // Skip-head-mid (dense 1D2D only): D columns per head are kHeadLeft result columns, kHeadMid untouched ones, then
    // kHeadRight result columns (sm90/gemm_epilogue.cuh maps the stores).
    static constexpr int kHeadLeft = fp8_gemm_detail::head_split<Config>(0);
    static constexpr int kHeadMid = fp8_gemm_detail::head_split<Config>(1);
    static constexpr int kHeadRight = fp8_gemm_detail::head_split<Config>(2);
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
    static constexpr int kNumSMs = Config::kNumSMs;  // the persistent grid
    static constexpr bool kRasterAlongM = fp8_gemm_detail::raster_along_m<Config>();
    static constexpr prims::GemmKind kKind = fp8_gemm_detail::gemm_kind<Config>();
    static constexpr bool kMGrouped = kKind == prims::kContiguous || kKind == prims::kPsum || kKind == prims::kMasked;
    static constexpr int kNumKGroups = kKind == prims::kKGrouped ? fp8_gemm_detail::num_groups<Config>() : 0;

    static constexpr int kWaveRows = 64 * kNumMathWarpgroups;  // rows covered by one wgmma per consumer warpgroup
    static constexpr int kNumWaves = kBlockM / kWaveRows;
    static constexpr int kNumMathThreads = 128 * kNumMathWarpgroups;
    static constexpr int kNumThreads = kNumMathThreads + 128;
    // One-warpgroup tiles leave the pool half empty: their producer takes 56, since the masked and psum schedulers'
    // producer code spilled at 40 (64-row masked tiles at K = 1536).
    static constexpr int kProducerRegs = kNumMathWarpgroups == 1 ? 56 : 40;
    static constexpr int kMathRegs = kNumMathWarpgroups == 1 ? 248 : 232;

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
                                           !kIs1D1D && kNumStages <= 4 &&
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
    // 1 %. Only where the saving is at least 1 % of the N work: at N = 32768 (0.2 %) the second loop cost dense
    // 4096x32768x512 2.8 %. Not psum: its loops lost their uniform wgmma descriptors. One-wave tiles only: masked
    // 256x128 at N = 576 spilled with the tail loop (found by the sweep in tests/cpu/test_pick_sweep.cpp).
    static constexpr int kNTail = Config::kShapeN == kDynamic ? 0 : static_cast<int>(Config::kShapeN % kBlockN);
    static constexpr int kTailN =
        kNTail > 0 && !kIs1D1D && kNumNSplits == 1 && kNumWaves == 1 && kKind != prims::kPsum &&
                (kBlockN - kNTail) * 100 >= kBlockN * ceil_div(static_cast<int>(Config::kShapeN), kBlockN)
            ? kNTail
            : 0;
    // Pipelined mainloop (one wave, one N split): two temporaries, so k-block kb+1's wgmma batch runs while kb's is
    // promoted. With a single temporary the promotion overlaps only the other warpgroup's batch, and only if the
    // warpgroups take turns and the path from a wait to the next issue is short.
    // Needs the main accumulator, two temporaries and (1D1D) two k-blocks of B scales in the register budget, plus
    // room for the split-K reduction's addressing (64x136 split 8 spilled 8 bytes without it).
    static constexpr bool kPipelined =
        kNumWaves == 1 && kNumNSplits == 1 &&
        kFinalRegs + kBlockN + (kIs1D1D ? kBlockN / 2 : 0) + (kSplitK > 1 ? 16 : 0) <= kAccumBudget;

    // 1D2D: a tile spans one or two 128-wide B-scale blocks. kSbStep = chunks between possible block boundaries.
    static constexpr bool kUniformSb = 128 % kBlockN == 0;
    static constexpr int kSbStep = fp8_gemm_detail::gcd(kBlockN, 128) / 8;
    // 1D2D with a compile-time K of at most 128 k-blocks per tile (split-K: per CTA share): each consumer warp loads
    // the tile's B scales once, at the tile's start, lane l holding k-blocks l, l+32, ... (kSbRegs registers per B
    // scale row), and takes each later k-block's scale from its lane by shuffle; k-blocks 0 and 1 are loaded
    // directly, so no shuffle waits for the tile's loads before the first batches run. No global load is left in the
    // k-block loop, and no shared memory or barrier protocol is involved (variants staging the scales through shared
    // memory were racy or slower). Longer K (or a runtime K) keeps the global loads two k-blocks ahead.
    static constexpr int kTileKb =
        Config::kShapeK == kDynamic ? 0 : ceil_div(ceil_div(static_cast<int>(Config::kShapeK), 128), kSplitK);
    // 256-row tiles take the lanes only up to 62 k-blocks (two registers per row, read without a bound test, below):
    // measured on the H200, 1.4-1.5 % faster at K = 2048 and 7168, 1.2 % slower at K = 16384 with four registers and
    // the bound test.
    static constexpr int kSbRegs = !kIs1D1D && kTileKb > 0 && kTileKb <= (kBlockM < 256 ? 128 : 62)
                                       ? ceil_div(kTileKb, 32)
                                       : 0;
    // The lanes hold zeros past the tile's k-blocks: when they hold two more than the longest tile, the serial loop
    // reads k-block kb + 2 without testing it against the tile's count (a compare and a branch per k-block).
    static constexpr bool kSbPadded = kSbRegs > 0 && kSbRegs * 32 >= kTileKb + 2;
    // Contiguous consumers load the next tile's B scales into the lanes before this tile's epilogue (the scheduler's
    // lookahead ids name its expert), and take k-blocks 0 and 1 from the lanes too. ptxas keeps a contiguous tile's
    // B scales in uniform registers and moved k-blocks 0 and 1's there right after their loads (R2UR), so the
    // prologue waited out the loads' latency: ~380-440 cycles against dense's ~115 (H200). Only the lanes' registers
    // cross the epilogue: with the whole next tile carried across it, ptxas ran out of uniform registers and moved the
    // mainloop's wgmma descriptors to vector registers.
    // Tiles of up to 16 k-blocks only: on the H200 (128x192 tiles) the K = 2048 suite rows ran 0.6-1.8 % faster in
    // two A/Bs, K = 3072 and 4096 level, K = 7168 1.0-1.3 % slower.
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
    // second half waits for the TMA to have read the first.
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
    // 1D2D one-wave tiles and 3-stage rings measured 0.5-2 % slower in turns.
    static constexpr bool kOrderedMath =
        kNumMathWarpgroups == 2 && !kPipelined && (kNumWaves == 2 || (kIs1D1D && kNumStages >= 4));
    static constexpr uint32_t kTurnBarrierBase = 3;
    static constexpr uint32_t kDInRingBarrier = 6;  // every consumer thread, before D is written over the ring
    // Serial mainloop: release a stage after the next k-block's first wgmma issue instead of between the stage's last
    // wgmma wait and its promotion, which takes the release off the wait-to-issue path (H200: 256x128 1-2 % faster
    // at M = 4096, 128x192 4 stages 1 %). The refill then starts one promotion later, which short k-blocks on a
    // 3-stage ring do not absorb: 1D1D 128x160 3 stages ran 11-17 % slower (576x4096x7168, 24576x4096x1536).
    static constexpr bool kLateRelease = kNumWaves == 2 || kNumStages >= 4;
    // Masked and psum one-wave tiles of two warpgroups: a warpgroup whose 64 rows all lie past the tile's group end
    // skips its wgmma (consume). Only up to K = 2048: on the H200 masked e192 and e1024 4096x2048 ran 2.0 % and 1.8 %
    // faster with it; ungated, e192 6144x7168 ran 2.6 % slower.
    static constexpr bool kSkipIdleHalf = (kKind == prims::kMasked || kKind == prims::kPsum) && kNumWaves == 1 &&
                                          kNumMathWarpgroups == 2 && Config::kShapeK != kDynamic &&
                                          Config::kShapeK <= 2048;

    // ---------------------------------------------------------------------------------------------------------------
    // A tile whose columns straddle two 128-wide B-scale blocks promotes chunks [0, former) with the first block's
    // scales. When the boundary can fall at 4 or 8 places (gcd(kBlockN, 128) of 32 or 16: 160, 96, 144, ...), choosing
    // per k-block took a chain of compares and branches through the promotion FFMAs (22 % of the stall samples of
    // 4096x576x7168 at 128x144 were at branches); here the choice is made once per tile, for one copy of the k-block
    // loop per place: 2.6 % faster on the H200, and 3.7 % more with mma_issue not rebuilding the descriptors from the
    // stage's address (ptxas moved those through vector registers in these loops). Dense serial tiles of one N split
    // and one wave only: extra loops cost the grouped kinds their uniform descriptors (as the tail-N loop did).
    static constexpr bool kHoistFormer = !kIs1D1D && !kUniformSb && kBlockN % 128 != 0 &&
                                         (kSbStep == 2 || kSbStep == 4) && !kPipelined && kNumNSplits == 1 &&
                                         kNumWaves == 1 && kSplitK == 1 && kKind == prims::kDense;
    // The serial loop unrolled over one pass of the ring, from stage 0: kNumStages copies of the k-block, each at a
    // constant stage. Only where the copies stay few and short (the hoisted 128x144 loops are 8 copies already), and
    // 1D2D dense, contiguous, and psum/masked 128x256 past K = 2048: the 1D1D kernels (per-column B scales) and the
    // psum and masked 128x192 kernels spilled with it; contiguous takes it with its consumers at 240 registers
    // (kWideConsumers; 1.3 % faster), psum and masked 128x256 too (psum 1.4-4 % faster at K = 3072-7168, masked e1024
    // at K = 7168 1.7 %). Tiles of more than two passes: with the three loops around a tile of one pass (K = 512) ptxas
    // unrolled the whole tile and moved its wgmma descriptors through vector registers (30-35 R2UR per loop); such
    // tiles take kOnePassTiles instead.
    static constexpr bool kUnrollStages = kNumStages <= 4 && !kHoistFormer && !kIs1D1D &&
                                          (kKind == prims::kDense || kKind == prims::kContiguous ||
                                           (wide_grouped_unroll() && kNumNSplits == 2)) &&
                                          kTileKb > 2 * kNumStages;
    // Tiles of exactly one pass of the ring (dense 128x192 and 64x256 at K = 512): every tile of these kernels has
    // kTileKb k-blocks (dense without split: num_k_blocks is ceil(kShapeK / 128) of the compile-time K, and cluster
    // zero tiles pass the same count through the ring), so each starts and ends at stage 0 and the whole tile is one
    // unrolled pass, with no loop and each k-block's descriptors folded from the constant stage. 4096x32768x512
    // 3.8 % faster, 1x32768x512 2 %.
    static constexpr bool kOnePassTiles = kNumStages <= 4 && !kHoistFormer && !kIs1D1D && !kSplit &&
                                          !kPipelined && kKind == prims::kDense && kTileKb == kNumStages;

    // Preconditions
    static_assert(Config::kMode == 0 || Config::kMode == 1, "kMode: 0 = 1D2D (BF16 out), 1 = 1D1D (FP32 accumulate)");
    static_assert(kHeadMid == 0 || (Config::kMode == 0 && kKind == prims::kDense &&
                                    kHeadLeft + kHeadRight > 0),
                  "skip-head-mid: dense 1D2D (BF16 D stored), heads of left + right result columns");
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
    static_assert(kKind != prims::kKGrouped || (kIs1D1D && kNumKGroups > 0), "k-grouped is 1D1D with kNumGroups maps");
    static_assert(!kMGrouped || !kIs1D1D, "m-grouped GEMMs are 1D2D (BF16 out)");
    static_assert(kKind != prims::kBatched || (!kIs1D1D && kClusterSize == 1 && !kSplit),
                  "batched (fp8_einsum): 1D2D without clusters or split-K; A and D through 3-D maps");
    static_assert(kKind != prims::kBatchSum, "batch-sum is a BF16 kernel kind");
    static_assert(kKind != prims::kContiguous || kRasterAlongM, "contiguous multicast pairs adjacent m-blocks");
    static_assert(kSplitK >= 1 && kSplitK <= 8, "split-K: 1 to 8 CTAs per cluster (the portable cluster limit)");
    static_assert(!kSplit || (kKind == prims::kDense && !kIs1D1D && kClusterSize == 1),
                  "split-K: dense 1D2D without multicast");
    static_assert(Config::kNumSMs % kClusterCtas == 0, "the grid must be whole clusters");
    static_assert(!kDInRing || (kKind == prims::kDense && !kIs1D1D && !kSplit && kClusterSize == 1 &&
                                kDTileBytes <= kNumStages * kBlockM * kBlockK),
                  "D over the ring: dense 1D2D serial tiles without cluster, and a ring of A that holds the D tile");

    using Scheduler =
        prims::GemmScheduler<kKind, kBlockM, kBlockN, Config::kGroupSize, kClusterSize, kRasterAlongM, kSplitK>;
    // The consumers' instance runs in whole warps (prims::GemmScheduler's kWarpAhead).
    using ConsumerScheduler =
        prims::GemmScheduler<kKind, kBlockM, kBlockN, Config::kGroupSize, kClusterSize, kRasterAlongM, kSplitK, true>;
    using Ring = prims::RingState<kNumStages>;
    using Descs = prims::StageDescs<kBlockM * kBlockK, kBlockN * kBlockK, kNumStages>;
};

}  // namespace tessera::sm90
