// FP8 MQA logits for SM90 (the lightning indexer, non-paged): for query i and KV row j in [ks[i], ke[i]),
//     logits[i, j] = sum_h weights[i, h] * ReLU(kv_scale[j] * sum_d Q[i, h, d] * KV[j, d]),
// Q [S, H, D] and KV [S_kv, D] E4M3, FP32 accumulation, FP32 or BF16 logits. Only in-range entries are written; the
// clean kernel (sm90/clean_logits.cuh) fills the rest with -inf when asked.
//
// Work split. A unit is one block of kBlockQ = 256 / H consecutive queries (8 for H = 32, 4 for H = 64) over the
// union of their KV ranges (optionally cut into KV splits by the host when there are few query blocks). Its KV rows
// stream through a TMA ring in tiles of 128 rows, each read once from L2 for all kBlockQ queries.
// Four math warpgroups split a tile 2 x 2: warpgroup g takes KV rows (g % 2) * 64 .. +63 (the wgmma A operand,
// M = 64) against q-group g / 2: kBlockQ / 2 queries x H heads = 128 (query, head) columns (B, N = 128). So each KV
// tile is shared by twice the queries of one m64n128 tile, halving the L2 traffic per FLOP against 128 columns.
//
// Head permutation. Q's B tile is loaded by a 4-D TMA box (D, 2, queries, H/2) from Q viewed as [i][query][e][D]
// with head h = 2i + e, so tile column 8i + 2c + e holds (query c, head 2i + e) for H = 32, and (query c % 2, head
// 4i + 2 (c / 2) + e) for H = 64. The wgmma fragment gives lane l the columns 8i + 2 (l % 4) + e, so a thread holds
// every head of one query (H = 32) or half of them (H = 64, one shuffle with lane ^ 2): the head reduction needs no
// quad shuffles and each lane stores its own logits (rows r0, r1), no redundant stores.
//
// Per element, the reduction is two FFMAs (mqa_head_reduction.cuh: sum w s and sum w |s|); the KV scale multiplies once per
// row after the reduction, exact for either sign of the scale. With kQueryPieces (the planner's choice at head dims 32
// and 64, where these FFMAs and not the tensor cores bound a tile) the linear sum sum w s runs on the tensor cores
// instead (mqa_query_pieces.cuh): each q-group's B tile carries, after its 128 head rows, four FP8 piece rows per
// query of its weighted query sum, read by a second wgmma (m64n16 at 32 heads, m64n8 at 64), and one FFMA per element
// is left. At head dim 128 the tensor cores bound a tile already and the extra columns would cost more than the
// FFMAs they save.
//
// Scheduling: persistent CTAs take units from an atomic counter (zeroed by the host before the launch), the first
// one statically (blockIdx.x), highest unit first: causal ranges grow with the query index, so the longest units go
// first and the short tail balances the SMs. Each unit is computed by exactly one CTA in a fixed order, so results
// are bitwise identical whichever CTA takes it.
//
// Warp roles: warpgroups 0-3 math, warpgroup 4 producer (its warp 0; the lanes read the unit's ks/ke together, lane
// 0 issues every TMA; with query pieces its warps 1-3 build them once a unit's Q stage has landed, one query per warp
// at a time). Rings: two Q stages (Q tile and piece rows, weights, the unit's metadata written by the producer, the
// pieces' scales) and kNumStages KV stages (128 x D bytes + 128 scales). q_full publishes a Q stage's TMA and
// metadata; pieces_full (the 96 builder threads' arrivals) its pieces, and the consumers wait for it even when a unit
// has no tiles, so a stage goes back (q_empty) only once its builders are done with it.
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/pipeline.cuh>
#include <tessera/prims/smem_desc.cuh>
#include <tessera/ptx/mbarrier.cuh>
#include <tessera/ptx/memory.cuh>
#include <tessera/ptx/tma.cuh>
#include <tessera/ptx/wgmma.cuh>
#include <tessera/ptx/wgmma_e4m3.cuh>
#include <tessera/sm90/mqa_head_reduction.cuh>
#include <tessera/sm90/mqa_query_pieces.cuh>

namespace tessera::sm90 {

// Config members (rendered by the JIT from the host's spec): kHeads (32, 64), kHeadDim (32, 64, 128), kNumStages,
// kOutBf16 (logits BF16, else FP32), kQueryPieces (the head sum's linear half on the tensor cores, see above).
template <class Config>
struct MqaLogitsKernel {
    static constexpr int kHeads = Config::kHeads;
    static constexpr int kHeadDim = Config::kHeadDim;
    static constexpr int kNumStages = Config::kNumStages;
    static constexpr bool kOutBf16 = Config::kOutBf16 != 0;

    static constexpr int kNumKvGroups = 2;   // math warpgroups along a tile's KV rows
    static constexpr int kNumQGroups = 2;    // and along its queries
    static constexpr int kGroupCols = 128;   // wgmma N: (query, head) columns of one q-group
    static constexpr int kGroupQ = kGroupCols / kHeads;
    static constexpr int kBlockQ = kNumQGroups * kGroupQ;
    static constexpr int kBlockKv = 64 * kNumKvGroups;
    static constexpr int kLanesPerQuery = kHeads / 32;  // lanes of a quad that share one query
    static constexpr int kNumMathThreads = 128 * kNumKvGroups * kNumQGroups;
    static constexpr int kNumThreads = kNumMathThreads + 128;
    static constexpr int kNumMathWarps = kNumMathThreads / 32;
    static constexpr bool kQueryPieces = Config::kQueryPieces != 0;
    using Pieces = mqa::QueryPieces<kHeads, kHeadDim, kGroupQ, kGroupCols>;
    static constexpr int kPieceRows = kQueryPieces ? Pieces::kRows : 0;
    static constexpr int kGroupRows = kGroupCols + kPieceRows;  // B rows of a q-group: 128, 136 or 144
    static constexpr int kHeadChunks = kGroupCols / 8;          // accumulator chunks of the head columns
    static constexpr int kAccRegs = kGroupCols / 2;             // m64n128 FP32 fragment of the heads per thread
    // The pieces' own m64n16 / m64n8 fragment: a second wgmma, since ptxas places a wgmma's accumulators below the
    // launch's 96 registers and one m64n144 fragment (72) leaves too few there for the values live across it.
    static constexpr int kPieceAccRegs = kQueryPieces ? kPieceRows / 2 : 4;
    static constexpr int kNumBuilderThreads = 96;               // the producer warpgroup's warps 1-3
    static constexpr int kLaneWeightRows = 8;                   // (query, lane class) pairs of a unit
    static constexpr int kLaneWeightStride = 36;
    static constexpr int kWeightRegs = 32;              // weights of the thread's 32 columns (one per column pair)
    // Registers. setmaxnreg only moves registers within the CTA's pool, which holds what the launch allocated:
    // __launch_bounds__(640, 1) gives every thread 96 (ptxas: 65536 / 640, rounded down to the allocation unit of 8;
    // warps count in fours, one per SM sub-partition), 61440 in all. An .inc beyond what the .decs freed blocks
    // forever, so the split must sum to at most that: 128 x 32 + 512 x 112 = 61440 (512 x 120 would need 65536, and
    // six consumer warps would wait forever in setmaxnreg.inc).
    static constexpr int kLaunchRegs = launch_regs_per_thread(kNumThreads);
    static constexpr int kProducerRegs = 32;
    static constexpr int kConsumerRegs = 112;

    static constexpr uint32_t kGroupQBytes = kGroupCols * kHeadDim;  // the TMA's part of a q-group's B tile
    // A q-group's B tile: its head rows, its piece rows, padded so the next starts on a 1024-byte boundary (TMA and
    // the wgmma descriptors both take swizzled tiles from there).
    static constexpr uint32_t kGroupBytes = align_up(static_cast<uint32_t>(kGroupRows * kHeadDim), 1024u);
    static constexpr uint32_t kQBytes = kNumQGroups * kGroupBytes;
    static constexpr uint32_t kWeightBytes = kBlockQ * kHeads * 4;
    static constexpr uint32_t kKvBytes = kBlockKv * kHeadDim;
    static constexpr uint32_t kScaleBytes = kBlockKv * 4;
    static constexpr int kMaxBlockQ = 8;

    static_assert(kHeads == 32 || kHeads == 64, "SM90 heads: 32 or 64");
    static_assert(kHeadDim == 32 || kHeadDim == 64 || kHeadDim == 128, "head dim: one 32/64/128-byte swizzle row");
    static_assert(kNumStages >= 2 && kNumStages <= 32, "KV ring stages");
    static_assert(kBlockQ <= kMaxBlockQ && kBlockQ <= 32, "the producer's lanes each read one query");
    static_assert(kWeightBytes == 1024, "the weights of a unit are 256 (query, head) floats");
    static_assert(kProducerRegs * 128 + kConsumerRegs * kNumMathThreads <= kLaunchRegs * kNumThreads,
                  "setmaxnreg split exceeds the CTA's register pool: the consumers' .inc would never return");

    struct Params {
        TmaDescriptor tensor_map_q;          // 4-D (D, 2, S, H/2), box (D, 2, kGroupQ, H/2), swizzle D bytes
        TmaDescriptor tensor_map_kv;         // (D, S_kv), box (D, 128), swizzle D bytes
        TmaDescriptor tensor_map_kv_scales;  // (S_kv, 1) FP32, box (128, 1)
        TmaDescriptor tensor_map_weights;    // (H, S) FP32, box (H, kBlockQ)
        void* logits;                        // row i of the output at logits + i * logits_stride elements
        int64_t logits_stride;
        const int32_t* ks;
        const int32_t* ke;
        uint32_t* unit_counter;              // zero at launch: units taken after each CTA's first
        uint32_t seq_len, seq_len_kv;
        uint32_t max_seqlen_k;               // > 0: compressed output, column = j - ks[i], width max_seqlen_k
        uint32_t num_units;                  // query blocks x KV splits
        uint32_t num_kv_splits, split_len;   // split s covers KV rows [s * split_len, + split_len)
    };
    // The host mirrors Params byte for byte (src/ops/mqa_logits.cpp).
    static_assert(sizeof(Params) == 576 && alignof(Params) == 64, "Params layout is part of the host contract");

    // A unit as the producer hands it to the consumers, in its Q stage.
    struct UnitMeta {
        int32_t unit;                        // < 0: no more units
        int32_t kv_begin;                    // first KV row of the first tile
        int32_t num_tiles;
        int32_t pad;
        int32_t group_lo[kNumQGroups];       // KV rows some query of the q-group writes: [lo, hi)
        int32_t group_hi[kNumQGroups];
        int32_t lo[kMaxBlockQ];              // per query: the KV rows it writes, [lo, hi)
        int32_t hi[kMaxBlockQ];
        int32_t shift[kMaxBlockQ];           // output column = KV row - shift
    };
    static_assert(sizeof(UnitMeta) == 128, "two metadata records fill 256 bytes of the shared-memory plan");

    struct SharedStorage {
        alignas(1024) uint8_t q[2][kQBytes];
        alignas(1024) uint8_t kv[kNumStages][kKvBytes];
        float weights[2][kBlockQ * kHeads];
        float scales[kNumStages][kBlockKv];
        UnitMeta meta[2];
        float piece_scale[2][kMaxBlockQ];  // per query: 1 / s of its pieces (mqa_query_pieces.cuh)
        // With query pieces: each lane's 32 weights in the order its columns hold the heads (lane_head; written by
        // the piece builders), one row per (query, lane class); rows kLaneWeightStride floats apart, so the four rows
        // a warp reads at once start in different banks.
        alignas(16) float lane_weights[2][kLaneWeightRows][kLaneWeightStride];
        uint64_t q_full[2], q_empty[2], pieces_full[2];
        uint64_t kv_full[kNumStages], kv_empty[kNumStages];
    };
    static constexpr int kSmemBytes = static_cast<int>(sizeof(SharedStorage));
    // The host planner's formula (heuristics::mqa_logits_smem_bytes) must match the struct exactly.
    static_assert(kSmemBytes == align_up(2 * kQBytes + kNumStages * (kKvBytes + kScaleBytes) + 2 * kWeightBytes +
                                             2 * 128 + 2 * 4 * kMaxBlockQ + 2 * 4 * kLaneWeightRows * kLaneWeightStride +
                                             8 * (6 + 2 * kNumStages),
                                         1024u),
                  "shared-memory plan drifted from the documented formula");
    static_assert(kSmemBytes <= 232448, "exceeds the 227 KB of dynamic shared memory per block on SM90");

    using Ring = prims::RingState<kNumStages>;
    using OutT = conditional_t<kOutBf16, uint16_t, float>;

    // ---------------------------------------------------------------------------------------------------------------
    // Producer (one warp).

    // The unit's KV ranges, read by the warp (lane q < kBlockQ: query q of the block), written into `meta`.
    TESSERA_DEVICE static void describe_unit(const Params& p, UnitMeta& meta, uint32_t unit, uint32_t lane) {
        const uint32_t q_block = unit / p.num_kv_splits, split = unit - q_block * p.num_kv_splits;
        const uint32_t q = q_block * kBlockQ + lane;
        const int64_t split_lo = static_cast<int64_t>(split) * p.split_len;
        const int64_t split_hi = split_lo + p.split_len < p.seq_len_kv ? split_lo + p.split_len : p.seq_len_kv;
        int64_t lo = 0, hi = 0, shift = 0;
        if (lane < static_cast<uint32_t>(kBlockQ) && q < p.seq_len) {
            const int64_t s = ptx::ld_global_nc(p.ks + q), e = ptx::ld_global_nc(p.ke + q);
            lo = s > split_lo ? s : split_lo;
            hi = e < split_hi ? e : split_hi;
            if (p.max_seqlen_k > 0) {
                shift = s;
                hi = hi < s + p.max_seqlen_k ? hi : s + p.max_seqlen_k;
            }
            if (hi < lo) hi = lo;
        }
        const bool any = hi > lo;
        const uint32_t group = lane / kGroupQ;
        int32_t group_lo[kNumQGroups], group_hi[kNumQGroups];
#pragma unroll
        for (int g = 0; g < kNumQGroups; ++g) {
            const bool mine = any && group == static_cast<uint32_t>(g);
            group_lo[g] = __reduce_min_sync(0xffffffffu, mine ? static_cast<int32_t>(lo) : 0x7fffffff);
            group_hi[g] = __reduce_max_sync(0xffffffffu, mine ? static_cast<int32_t>(hi) : 0);
        }
        const int32_t union_lo = group_lo[0] < group_lo[1] ? group_lo[0] : group_lo[1];
        const int32_t union_hi = group_hi[0] > group_hi[1] ? group_hi[0] : group_hi[1];
        // Lane 0 writes every field, the lanes' ranges gathered by shuffles: the thread whose arrival on q_full
        // publishes the metadata wrote all of it (racecheck flagged the other lanes' stores, ordered before that
        // arrival by __syncwarp only).
#pragma unroll
        for (int j = 0; j < kBlockQ; ++j) {
            const int32_t lo_j = __shfl_sync(0xffffffffu, static_cast<int32_t>(lo), j);
            const int32_t hi_j = __shfl_sync(0xffffffffu, static_cast<int32_t>(hi), j);
            const int32_t shift_j = __shfl_sync(0xffffffffu, static_cast<int32_t>(shift), j);
            if (lane == 0) {
                meta.lo[j] = lo_j;
                meta.hi[j] = hi_j;
                meta.shift[j] = shift_j;
            }
        }
        if (lane == 0) {
            // Tiles start 16-row aligned (whole 32-byte sectors of FP32 output rows); never below the split start,
            // which is a multiple of 128.
            const int32_t begin = union_lo & ~15;
            meta.unit = static_cast<int32_t>(unit);
            meta.kv_begin = begin;
            meta.num_tiles = union_hi > union_lo ? (union_hi - begin + kBlockKv - 1) / kBlockKv : 0;
#pragma unroll
            for (int g = 0; g < kNumQGroups; ++g) {
                meta.group_lo[g] = group_lo[g];
                meta.group_hi[g] = group_hi[g];
            }
        }
    }

    TESSERA_DEVICE static void produce(const Params& p, SharedStorage& smem, uint32_t lane) {
        Ring ring;
        uint32_t q_stage = 0, q_phase = 0;
        uint32_t ticket = blockIdx.x;  // each CTA's first unit is static; the counter hands out the rest
        while (true) {
            const bool done = ticket >= p.num_units;
            // The next ticket's round trip overlaps this unit's loads.
            uint32_t next = 0;
            if (!done && lane == 0) next = gridDim.x + atomicAdd(p.unit_counter, 1u);
            const uint32_t q_full = ptx::smem_addr(&smem.q_full[q_stage]);
            ptx::mbarrier_wait(ptx::smem_addr(&smem.q_empty[q_stage]), q_phase ^ 1u);
            UnitMeta& meta = smem.meta[q_stage];
            if (done) {
                if (lane == 0) {
                    meta.unit = -1;
                    ptx::mbarrier_arrive(q_full);
                }
                return;
            }
            const uint32_t unit = p.num_units - 1 - ticket;  // highest (longest causal) units first
            describe_unit(p, meta, unit, lane);
            __syncwarp();  // the lanes' metadata before lane 0's arrival (release) publishes it
            if (lane == 0) {
                const int32_t num_tiles = meta.num_tiles;
                const int32_t kv_begin = meta.kv_begin;
                if (num_tiles > 0) {
                    const int32_t q0 = static_cast<int32_t>(unit / p.num_kv_splits) * kBlockQ;
                    const uint32_t q_dst = ptx::smem_addr(smem.q[q_stage]);
#pragma unroll
                    for (int g = 0; g < kNumQGroups; ++g)
                        ptx::tma_load_4d(q_dst + g * kGroupBytes, p.tensor_map_q, q_full, 0, 0, q0 + g * kGroupQ, 0);
                    ptx::tma_load_2d(ptx::smem_addr(smem.weights[q_stage]), p.tensor_map_weights, q_full, 0, q0);
                    ptx::mbarrier_arrive_expect_tx(q_full, kNumQGroups * kGroupQBytes + kWeightBytes);
                } else {
                    ptx::mbarrier_arrive(q_full);
                }
#pragma unroll 1
                for (int32_t t = 0; t < num_tiles; ++t) {
                    const int32_t row = kv_begin + t * kBlockKv;
                    prims::produce_stage(ring, smem.kv_full, smem.kv_empty, true, kKvBytes + kScaleBytes,
                                         [&](uint32_t s, uint32_t full) {
                                             ptx::tma_load_2d(ptx::smem_addr(smem.kv[s]), p.tensor_map_kv, full, 0,
                                                              row);
                                             ptx::tma_load_2d(ptx::smem_addr(smem.scales[s]),
                                                              p.tensor_map_kv_scales, full, row, 0);
                                         });
                }
            }
            __syncwarp();
            ticket = __shfl_sync(0xffffffffu, next, 0);
            if (++q_stage == 2) q_stage = 0, q_phase ^= 1u;
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Piece builders (the producer warpgroup's warps 1-3, with query pieces).

    TESSERA_DEVICE static void build_pieces(SharedStorage& smem, uint32_t builder_warp, uint32_t lane) {
        uint32_t q_stage = 0, q_phase = 0;
        while (true) {
            ptx::mbarrier_wait(ptx::smem_addr(&smem.q_full[q_stage]), q_phase);
            const UnitMeta& meta = smem.meta[q_stage];
            if (__shfl_sync(0xffffffffu, meta.unit, 0) < 0) return;
            if (__shfl_sync(0xffffffffu, meta.num_tiles, 0) > 0) {  // else no Q was loaded and no tile reads pieces
#pragma unroll 1
                for (uint32_t q = builder_warp; q < static_cast<uint32_t>(kBlockQ); q += kNumBuilderThreads / 32) {
                    uint8_t* tile = smem.q[q_stage] + (q / kGroupQ) * kGroupBytes;
                    const float* weights = smem.weights[q_stage] + q * kHeads;
                    const float inv_s = Pieces::build(tile, weights, q % kGroupQ, lane);
                    if (lane == 0) smem.piece_scale[q_stage][q] = inv_s;
#pragma unroll
                    for (int half = 0; half < kLanesPerQuery; ++half)
                        smem.lane_weights[q_stage][q * kLanesPerQuery + half][lane] =
                            weights[lane_head(static_cast<uint32_t>(half), lane)];
                }
                ptx::fence_proxy_async();  // the piece rows, written by this thread, before the wgmmas read them
            }
            ptx::mbarrier_arrive(ptx::smem_addr(&smem.pieces_full[q_stage]));
            if (++q_stage == 2) q_stage = 0, q_phase ^= 1u;
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Consumers (four warpgroups).

    // The head of a thread's weight k (k = 2j + e for its columns 8j + 2c + e) when (c / 2) % kLanesPerQuery = half.
    TESSERA_DEVICE static constexpr uint32_t lane_head(uint32_t half, uint32_t k) {
        return kLanesPerQuery == 1 ? k : 4 * (k >> 1) + 2 * half + (k & 1);
    }

    // The thread's 32 weights: column pair j of its columns is head 2j (H = 32), or head 4 (j / 2) + 2 (c / 2) + j % 2
    // of the shared query (H = 64), as the Q permutation above lays them out.
    TESSERA_DEVICE static void load_weights(const float* row, uint32_t c, float (&w)[kWeightRegs]) {
#pragma unroll
        for (int j = 0; j < kWeightRegs / 2; ++j) {
            const uint32_t head = kLanesPerQuery == 1 ? 2 * j : 4 * j + 2 * (c >> 1);
            const float2 v = *reinterpret_cast<const float2*>(row + head);
            w[2 * j] = v.x;
            w[2 * j + 1] = v.y;
        }
    }

    // One warpgroup's m64n128 scores of a tile (A = its 64 KV rows, B = its q-group's 128 head columns, k32 x D/32)
    // and, with query pieces, the m64n16 / m64n8 sums of its pieces (B = the piece rows after the head rows).
    // a_lo / b_lo: the low words of the descriptors (start addresses), desc_hi: their common high word. Issues the
    // wgmmas; score_wait retires them.
    TESSERA_DEVICE static void score_issue(float (&acc)[kAccRegs], float (&piece_acc)[kPieceAccRegs], uint32_t a_lo,
                                           uint32_t b_lo, uint32_t desc_hi) {
        ptx::wgmma_fence();
#pragma unroll
        for (int i = 0; i < kAccRegs; ++i) ptx::fence_operand(acc[i]);
        if constexpr (kQueryPieces) {
#pragma unroll
            for (int i = 0; i < kPieceAccRegs; ++i) ptx::fence_operand(piece_acc[i]);
        }
#pragma unroll
        for (int k = 0; k < kHeadDim / 32; ++k) {  // a k32 step is 32 bytes along the row; the first overwrites acc
            const uint64_t desc_a = static_cast<uint64_t>(desc_hi) << 32 | (a_lo + 2 * k);
            const uint64_t desc_b = static_cast<uint64_t>(desc_hi) << 32 | (b_lo + 2 * k);
            ptx::wgmma_m64k32_e4m3(acc, desc_a, desc_b, static_cast<uint32_t>(k));
        }
        if constexpr (kQueryPieces) {
#pragma unroll
            for (int k = 0; k < kHeadDim / 32; ++k) {
                const uint64_t desc_a = static_cast<uint64_t>(desc_hi) << 32 | (a_lo + 2 * k);
                const uint64_t desc_b = static_cast<uint64_t>(desc_hi) << 32 | (b_lo + (kGroupQBytes >> 4) + 2 * k);
                ptx::wgmma_m64k32_e4m3(piece_acc, desc_a, desc_b, static_cast<uint32_t>(k));
            }
        }
        ptx::wgmma_commit_group();
    }

    TESSERA_DEVICE static void score_wait(float (&acc)[kAccRegs], float (&piece_acc)[kPieceAccRegs]) {
        ptx::wgmma_wait_group<0>();
#pragma unroll
        for (int i = 0; i < kAccRegs; ++i) ptx::fence_operand(acc[i]);
        if constexpr (kQueryPieces) {
#pragma unroll
            for (int i = 0; i < kPieceAccRegs; ++i) ptx::fence_operand(piece_acc[i]);
        }
    }

    TESSERA_DEVICE static void store(bool pred, OutT* ptr, float x) {
        if constexpr (kOutBf16) ptx::st_global_bf16_if(pred, ptr, x);
        else ptx::st_global_f32_if(pred, ptr, x);
    }

    TESSERA_DEVICE static void consume(const Params& p, SharedStorage& smem, uint32_t wg, uint32_t warp,
                                       uint32_t lane) {
        const uint32_t kv_group = wg % kNumKvGroups, q_group = wg / kNumKvGroups;
        const uint32_t c = lane & 3u;
        const uint32_t q_local = q_group * kGroupQ + c % kGroupQ;
        const int32_t r0 = static_cast<int32_t>(kv_group * 64 + warp * 16 + lane / 4);  // row in the tile; r1 = r0 + 8
        // Descriptors of stage 0 (A: this warpgroup's KV rows; B: its q-group's columns in Q stage 0); a stage adds its
        // offset to the start address field of the low word, which no offset carries out of (smem < 256 KB).
        const uint64_t desc_a0 = prims::make_desc_kmajor<kHeadDim>(ptx::smem_addr(smem.kv[0]) + kv_group * 64 * kHeadDim);
        const uint64_t desc_b0 = prims::make_desc_kmajor<kHeadDim>(ptx::smem_addr(smem.q[0]) + q_group * kGroupBytes);
        const uint32_t desc_hi = static_cast<uint32_t>(desc_a0 >> 32);
        const uint32_t kv_full0 = ptx::smem_addr(&smem.kv_full[0]), kv_empty0 = ptx::smem_addr(&smem.kv_empty[0]);
        // H = 64: lanes c and c ^ 2 share a query; each stores one of the two rows.
        const bool upper_lane = kLanesPerQuery == 2 && (c >> 1) != 0;
        Ring ring;
        uint32_t q_stage = 0, q_phase = 0;
        while (true) {
            ptx::mbarrier_wait(ptx::smem_addr(&smem.q_full[q_stage]), q_phase);
            const UnitMeta& meta = smem.meta[q_stage];
            // Broadcast from lane 0: ptxas then knows the unit's control flow is warp-uniform.
            const int32_t unit = __shfl_sync(0xffffffffu, meta.unit, 0);
            if (unit < 0) break;
            const int32_t kv_begin = __shfl_sync(0xffffffffu, meta.kv_begin, 0);
            const int32_t num_tiles = __shfl_sync(0xffffffffu, meta.num_tiles, 0);
            const int32_t group_lo = __shfl_sync(0xffffffffu, meta.group_lo[q_group], 0);
            const int32_t group_hi = __shfl_sync(0xffffffffu, meta.group_hi[q_group], 0);
            const int32_t lo = meta.lo[q_local], hi = meta.hi[q_local];
            // The output row, indexed by KV row (shift: compressed rows start at ks). A query past S has lo == hi and
            // stores nothing; its row index is clamped so no pointer leaves the output.
            uint32_t q = static_cast<uint32_t>(unit) / p.num_kv_splits * kBlockQ + q_local;
            q = q < p.seq_len ? q : p.seq_len - 1;
            OutT* out = static_cast<OutT*>(p.logits) + static_cast<int64_t>(q) * p.logits_stride - meta.shift[q_local];
            float w[kQueryPieces ? 1 : kWeightRegs];  // with query pieces the weights stay in shared memory
            if constexpr (!kQueryPieces) load_weights(smem.weights[q_stage] + q_local * kHeads, c, w);
            const float* lane_w = smem.lane_weights[q_stage][q_local * kLanesPerQuery + (c >> 1) % kLanesPerQuery];
            float piece_scale = 0.f;
            if constexpr (kQueryPieces) {
                ptx::mbarrier_wait(ptx::smem_addr(&smem.pieces_full[q_stage]), q_phase);
                if (num_tiles > 0) piece_scale = Pieces::lane_scale(smem.piece_scale[q_stage][q_local], lane);
            }
            const uint32_t b_lo = static_cast<uint32_t>(desc_b0) + q_stage * (kQBytes >> 4);
#pragma unroll 1
            for (int32_t t = 0; t < num_tiles; ++t) {
                const int32_t row0 = kv_begin + t * kBlockKv + static_cast<int32_t>(kv_group * 64);
                // Rows no query of this q-group writes are skipped (the stage is still released).
                const bool active = row0 < group_hi && row0 + 64 > group_lo;
                const uint32_t s = ring.stage;
                ptx::mbarrier_wait(kv_full0 + 8 * s, ring.phase);
                if (active) {
                    float acc[kAccRegs], piece_acc[kPieceAccRegs];
                    score_issue(acc, piece_acc, static_cast<uint32_t>(desc_a0) + s * (kKvBytes >> 4), b_lo, desc_hi);
                    const float sf0 = smem.scales[s][r0], sf1 = smem.scales[s][r0 + 8];  // while the wgmma runs
                    score_wait(acc, piece_acc);
                    float lin0, abs0, lin1, abs1;
                    if constexpr (kQueryPieces) {
                        mqa::weighted_abs_sums<kHeadChunks>(acc, lane_w, abs0, abs1);
                        Pieces::sums(piece_acc, piece_scale, lin0, lin1);
                    } else {
                        mqa::weighted_relu_sums<kHeadChunks>(acc, w, lin0, abs0, lin1, abs1);
                    }
                    const float v0 = mqa::relu_pair(lin0, abs0, sf0), v1 = mqa::relu_pair(lin1, abs1, sf1);
                    const int32_t j0 = kv_begin + t * kBlockKv + r0, j1 = j0 + 8;
                    if constexpr (kLanesPerQuery == 2) {
                        // Each lane sends its partner the half the partner stores (the lower lane stores row r0, the
                        // upper r1): one shuffle, and fewer live values than reducing both rows in both lanes. With the
                        // four-chain head reduction this keeps the H = 64 consumers within their 112 registers (NVRTC
                        // or NVCC spilled 4 bytes without either change).
                        const float v = (upper_lane ? v1 : v0) + __shfl_xor_sync(0xffffffffu, upper_lane ? v0 : v1, 2);
                        const int32_t j = upper_lane ? j1 : j0;
                        store(j >= lo && j < hi, out + j, mqa::finish_logit(v, upper_lane ? sf1 : sf0));
                    } else {
                        store(j0 >= lo && j0 < hi, out + j0, mqa::finish_logit(v0, sf0));
                        store(j1 >= lo && j1 < hi, out + j1, mqa::finish_logit(v1, sf1));
                    }
                }
                // The stage goes back once the tile's logits are computed: every value a lane read from it (the
                // scales) has then been consumed by an instruction, so the refill cannot overtake a pending load,
                // and __syncwarp orders the lanes before lane 0's release. No warpgroup waits for another: while
                // one reduces its tile, the others' wgmmas run on the tensor cores. (Releasing right after the wgmma
                // with a load of the scales still in flight gave, on the H200, the last tile of some query blocks
                // the next fill's scales; a barrier of all consumers per tile hid that at the cost of the overlap.)
                __syncwarp();
                if (lane == 0) ptx::mbarrier_arrive(kv_empty0 + 8 * s);
                ring.advance();
            }
            // Done with the Q stage (its wgmmas were waited for, its weights and metadata read). As above, __syncwarp
            // orders every lane's loads of the weights and metadata before lane 0's release (a unit without tiles has
            // no other warp-wide synchronisation after them).
            __syncwarp();
            if (lane == 0) ptx::mbarrier_arrive(ptx::smem_addr(&smem.q_empty[q_stage]));
            if (++q_stage == 2) q_stage = 0, q_phase ^= 1u;
        }
    }

    static __device__ void run(const Params& p) {
        extern __shared__ __attribute__((aligned(1024))) uint8_t tessera_smem[];
        SharedStorage& smem = *reinterpret_cast<SharedStorage*>(tessera_smem);
        prims::run_warp_roles<kNumMathThreads, kProducerRegs, kConsumerRegs>(
            [&] {
                ptx::prefetch_tensormap(p.tensor_map_q);
                ptx::prefetch_tensormap(p.tensor_map_kv);
                ptx::prefetch_tensormap(p.tensor_map_kv_scales);
                ptx::prefetch_tensormap(p.tensor_map_weights);
            },
            [&] {
                prims::init_ring<2>(smem.q_full, smem.q_empty, kNumMathWarps);  // the two Q stages
                for (int s = 0; s < 2; ++s) ptx::mbarrier_init(ptx::smem_addr(&smem.pieces_full[s]), kNumBuilderThreads);
                prims::init_ring<kNumStages>(smem.kv_full, smem.kv_empty, kNumMathWarps);
            },
            [&](uint32_t lane) { produce(p, smem, lane); },
            [&](uint32_t wg, uint32_t warp, uint32_t lane) { consume(p, smem, wg, warp, lane); },
            [&](uint32_t warp, uint32_t lane) {
                if constexpr (kQueryPieces)
                    if (warp > 0) build_pieces(smem, warp - 1, lane);
            });
    }
};

}  // namespace tessera::sm90
