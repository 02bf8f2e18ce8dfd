// Mainloops of the SM90 FP8 GEMM kernel (sm90/fp8_gemm.cuh), for K = Fp8GemmKernel<Config>: one tile's k-blocks,
// from the ring's full stages into the FP32 main accumulator acc[wave][kBlockN/2] (wgmma m64 fragment layout).
//
// Per 128-wide k-block: wgmma (e4m3, m64 k32 x 4) into a temporary accumulator that starts from zero, then the
// promotion: acc += tmp * sa[row] * sb (1D2D: one B scale per 128 columns; 1D1D: per column). Two loops:
//   serial     one temporary; each batch is retired before the next issue. The next k-block's full-barrier wait and
//              scales are taken while this k-block's last batch runs (`ahead`), so the path from a wait to the next
//              issue holds only the promotion.
//   pipelined  one-wave tiles whose two temporaries fit the registers: k-block kb+1's batch runs while kb's is
//              promoted (wait_group 1).
// The stage of each k-block is released (prims::release_stage) once its batch is retired, or, with kLateRelease,
// after the next k-block's first batch is issued.
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/gemm_scheduler.cuh>
#include <tessera/prims/pipeline.cuh>
#include <tessera/prims/promote.cuh>
#include <tessera/prims/smem_desc.cuh>
#include <tessera/ptx/mbarrier.cuh>
#include <tessera/ptx/memory.cuh>
#include <tessera/ptx/sync.cuh>
#include <tessera/ptx/wgmma.cuh>
#include <tessera/ptx/wgmma_e4m3.cuh>

namespace tessera::sm90 {

template <class K>
struct Fp8GemmMainloop {
    using SharedStorage = typename K::SharedStorage;
    using BScales = typename K::BScales;
    using Ring = typename K::Ring;
    using Descs = typename K::Descs;
    static constexpr bool kIs1D1D = K::kIs1D1D;
    static constexpr int kBlockM = K::kBlockM;
    static constexpr int kBlockN = K::kBlockN;
    static constexpr int kBlockK = K::kBlockK;
    static constexpr int kNumStages = K::kNumStages;
    static constexpr int kClusterSize = K::kClusterSize;
    static constexpr int kNumWaves = K::kNumWaves;
    static constexpr int kWaveRows = K::kWaveRows;
    static constexpr int kFinalRegs = K::kFinalRegs;
    static constexpr int kNumNSplits = K::kNumNSplits;
    static constexpr int kWgmmaN = K::kWgmmaN;
    static constexpr int kSplitChunks = K::kSplitChunks;
    static constexpr bool kUniformSb = K::kUniformSb;
    static constexpr int kSbStep = K::kSbStep;
    static constexpr bool kSbPadded = K::kSbPadded;
    static constexpr bool kOrderedMath = K::kOrderedMath;
    static constexpr uint32_t kTurnBarrierBase = K::kTurnBarrierBase;
    static constexpr bool kLateRelease = K::kLateRelease;
    static constexpr bool kUnrollStages = K::kUnrollStages;
    static constexpr bool kOnePassTiles = K::kOnePassTiles;

    TESSERA_DEVICE static void release(SharedStorage& smem, uint32_t stage, bool peer_alive, uint32_t lane) {
        prims::release_stage<kClusterSize>(smem.empty_barriers, stage, peer_alive, lane);
    }
    TESSERA_DEVICE static Descs descs_of(SharedStorage& smem, uint32_t stage) {
        const uint32_t a0 = ptx::smem_addr(smem.a[0]);
        const uint32_t b0 = ptx::smem_addr(smem.b[0]);
        return Descs::of(a0, b0, stage);
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

    // Issues one wgmma batch (4 x k32) of wave w, split s, from the stage described by stage_desc, into tmp, and passes
    // the turn; mma_wait retires it.
    template <int kSplit, int kN = kWgmmaN>
    TESSERA_DEVICE static void mma_issue(const Descs& stage_desc, uint32_t a_row, uint32_t wg,
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
    // in one batch of the other warpgroup (256 cycles at 256x128) or the tensor cores idle; measured on the H200:
    // the promotion FFMAs alone fit, with the barrier wait and scale loads they do not.
    template <int kSplit, int kN, int kFormer, class AfterFirst, class Ahead>
    TESSERA_DEVICE static void mma_and_promote(SharedStorage& smem, uint32_t stage, const Descs& stage_desc,
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
        float sa[kNumWaves][2];
        read_sa(smem, ring.stage, row0, sa);
        uint32_t prev_stage = 0;  // the previous k-block's stage, carried: recomputing it cost ~6 instructions
        Descs next_desc = descs_of(smem, ring.stage);
        // One k-block at `at.stage` (RingAt: known only at run time; RingAtConst: a compile-time constant, so the
        // barrier addresses, the ring update and the descriptor adds fold into constants).
        const auto step = [&](uint32_t kb, auto at) {
            const uint32_t stage = at.stage();
            // One-pass tiles rebuild them: at a constant stage the rebuild folds to stage 0's descriptor plus a
            // constant.
            const Descs stage_desc = kOnePassTiles ? descs_of(smem, stage) : next_desc;
            at.advance(ring);
            if (!kOnePassTiles) next_desc.advance(ring.stage == 0);
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
};

}  // namespace tessera::sm90
