// Paged MQA logits for SM90 (the DeepSeek V3.2 lightning indexer at decode) and the schedule it runs on.
//
//   logits[b*next_n + t, j] = sum_h w[b*next_n + t, h] * ReLU(sf[j] * sum_d Q[b, t, h, d] * KV[j, d])
//
// for j < context_lens[b, t], where token j of sequence b is slot j % 64 of cache block block_table[b, j / 64].
// Each cache block holds 64 x D FP8 bytes (token-major) and then 64 FP32 scales; blocks are page_stride bytes apart.
// With clean_logits every other column below max_context_len is exactly -inf; without it those are not written.
//
// The kernel streams the KV cache once, so it is bound by HBM: everything else serves keeping enough pages in
// flight. Per CTA (one per SM, persistent), one producer warp walks the SM's range of (sequence, page) units
// (sm90/paged_mqa_schedule.cuh) and loads, per page, the 8 KB of FP8 tokens (3-D TMA, 128-byte swizzle, L2
// evict-first) and the 64 scales into a kNumStages ring, and per sequence the queries Q [next_n*H][D] and the weights
// into a Q slot. Math warpgroups take the pages in turn: one wgmma m64 n(next_n*H) k32 x D/32 per page (A = the
// page's 64 tokens, B = the queries), then ReLU times the weights summed over heads in registers, a two-step
// quad reduce-scatter, the token scale, and direct stores (each lane one logit).
//
// The producer writes a small task record next to each stage (sequence, page, flags, context lengths), so the
// consumers walk nothing: they wait for a stage, read its record and act on it. A Q slot is released by each
// warpgroup after its last task of the sequence; a stage right after its wgmma retires, before the epilogue.
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/pipeline.cuh>
#include <tessera/prims/smem_desc.cuh>
#include <tessera/ptx/mbarrier.cuh>
#include <tessera/ptx/memory.cuh>
#include <tessera/ptx/sync.cuh>
#include <tessera/ptx/tma.cuh>
#include <tessera/ptx/wgmma.cuh>
#include <tessera/ptx/wgmma_e4m3.cuh>
#include <tessera/sm90/paged_mqa_schedule.cuh>

namespace tessera::sm90 {

// The schedule: one CTA computes every sequence's unit count, a block-wide prefix sum, and each SM's range start.
// Config: kNumThreads. Sequences are dealt to threads in contiguous runs, so the prefix sum is one block scan.
template <class Config>
struct PagedMqaMetadataKernel {
    static constexpr int kNumThreads = Config::kNumThreads;
    static constexpr int kNumWarps = kNumThreads / 32;
    static_assert(kNumThreads % 32 == 0 && kNumWarps <= 32, "one warp scans the warp totals");

    struct Params {
        const int32_t* context_lens;  // [batch, next_n] int32 contiguous
        int32_t* schedule;            // [num_sms + 1, 2] int32 contiguous
        uint32_t batch;
        uint32_t next_n;
        uint32_t num_sms;
    };

    static __device__ uint32_t units(const Params& p, uint32_t b) {
        int32_t longest = 0;
        for (uint32_t t = 0; t < p.next_n; ++t)
            longest = max(longest, p.context_lens[static_cast<uint64_t>(b) * p.next_n + t]);
        return paged_mqa::units_of(longest);
    }

    static __device__ uint64_t warp_inclusive_scan(uint64_t x, uint32_t lane) {
#pragma unroll
        for (uint32_t offset = 1; offset < 32; offset *= 2) {
            const uint64_t y = __shfl_up_sync(0xffffffffu, x, offset);
            if (lane >= offset) x += y;
        }
        return x;
    }

    static __device__ void run(const Params& p) {
        __shared__ uint64_t warp_totals[kNumWarps];
        const uint32_t tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
        const uint32_t per_thread = ceil_div(p.batch, static_cast<uint32_t>(kNumThreads));
        const uint32_t lo = min(tid * per_thread, p.batch), hi = min(lo + per_thread, p.batch);
        uint64_t local = 0;
        for (uint32_t b = lo; b < hi; ++b) local += units(p, b);

        const uint64_t inclusive = warp_inclusive_scan(local, lane);
        if (lane == 31) warp_totals[warp] = inclusive;
        __syncthreads();
        if (warp == 0) {
            const uint64_t scanned = warp_inclusive_scan(lane < kNumWarps ? warp_totals[lane] : 0ull, lane);
            __syncwarp();
            if (lane < kNumWarps) warp_totals[lane] = scanned;
        }
        __syncthreads();
        const uint64_t total = warp_totals[kNumWarps - 1];
        if (total > 0) {
            uint64_t pos = (warp > 0 ? warp_totals[warp - 1] : 0ull) + inclusive - local;
            for (uint32_t b = lo; b < hi; ++b) {
                const uint32_t count = units(p, b);
                paged_mqa::write_rows_of_sequence(p.schedule, b, pos, count, total, p.num_sms);
                pos += count;
            }
        }
        if (tid == 0) {
            // No sequences: every range is empty.
            for (uint32_t s = total > 0 ? p.num_sms : 0u; s <= p.num_sms; ++s) {
                p.schedule[2 * s] = static_cast<int32_t>(p.batch);
                p.schedule[2 * s + 1] = 0;
            }
        }
    }
};

// Config members: kNextN (1, 2), kNumHeads (32, 64), kHeadDim (128), kOutBf16, kClean, kNumStages (page ring),
// kNumQStages (query slots), kNumMathWarpgroups (2, 3 or 4).
template <class Config>
struct PagedMqaLogitsKernel {
    static constexpr int kNextN = Config::kNextN;
    static constexpr int kNumHeads = Config::kNumHeads;
    static constexpr int kHeadDim = Config::kHeadDim;
    static constexpr bool kOutBf16 = Config::kOutBf16 != 0;
    static constexpr bool kClean = Config::kClean != 0;
    static constexpr int kNumStages = Config::kNumStages;
    static constexpr int kNumQStages = Config::kNumQStages;
    static constexpr int kNumMathWarpgroups = Config::kNumMathWarpgroups;
    static constexpr int kN = kNextN * kNumHeads;  // wgmma N: the query rows of one sequence, (t, h) flattened
    static constexpr int kNumMathThreads = 128 * kNumMathWarpgroups;
    static constexpr int kNumThreads = kNumMathThreads + 128;
    static constexpr uint32_t kPageTokens = paged_mqa::kPageTokens;
    static constexpr uint32_t kPageBytes = kPageTokens * kHeadDim;
    static constexpr uint32_t kQBytes = kN * kHeadDim;
    static constexpr uint32_t kPageTx = kPageBytes + kPageTokens * 4;  // FP8 tokens + FP32 scales
    static constexpr uint32_t kQTx = kQBytes + kN * 4;                 // queries + weights
    static constexpr int kElemBytes = kOutBf16 ? 2 : 4;
    // Registers: the producer warpgroup gives up what the consumers take. setmaxnreg only moves registers inside the
    // CTA's own pool, the launch allocation: __launch_bounds__(kNumThreads, 1) gives the entry 65536 / kNumThreads
    // rounded down to a multiple of 8 per thread (ptxas: 168 for 384 threads, 96 for 640), not the whole 64K file. A
    // split that asks for more than the producer frees leaves some consumer warpgroup's setmaxnreg.inc waiting
    // forever (e.g. four math warpgroups at 56 / 112 would ask 64512 of the 61440 allocated).
    static constexpr int kLaunchRegs = launch_regs_per_thread(kNumThreads);
    static constexpr int kProducerRegs = 56;
    // What the producer warpgroup frees, shared by the math warpgroups (a multiple of 8): 224 for two, 152 for three,
    // 104 for four.
    static constexpr int kConsumerRegs = (kLaunchRegs * kNumThreads - kProducerRegs * 128) / kNumMathThreads / 8 * 8;

    static_assert(kNextN == 1 || kNextN == 2, "SM90 paged MQA logits: next_n 1 or 2");
    static_assert(kNumHeads == 32 || kNumHeads == 64, "SM90 paged MQA logits: 32 or 64 heads");
    static_assert(kHeadDim == 128, "one 128-byte swizzle row per token and per query row");
    static_assert(kNumMathWarpgroups >= 2 && kNumMathWarpgroups <= 4, "2 to 4 math warpgroups");
    static_assert(kNumStages % kNumMathWarpgroups == 0, "each stage belongs to one math warpgroup");
    static_assert(kNumQStages >= 2 && kNumQStages <= 8, "Q slots");
    static_assert(kProducerRegs * 128 + kConsumerRegs * kNumMathThreads <= kLaunchRegs * kNumThreads,
                  "setmaxnreg split exceeds the CTA's launch register allocation (the consumers would never get it)");

    struct Params {
        TmaDescriptor kv_map;          // uint8 (D, 64, num_blocks), strides (D, page_stride); box (D, 64, 1), SW128
        TmaDescriptor sf_map;          // fp32 (64, num_blocks) at cache + 64*D, stride page_stride; box (64, 1)
        TmaDescriptor q_map;           // uint8 (D, batch*N), box (D, N), SW128
        TmaDescriptor w_map;           // fp32 (N, batch), box (N, 1)
        const int32_t* context_lens;   // [batch, next_n]
        const int32_t* block_table;    // [batch, max_blocks], row stride block_table_ld
        const int32_t* schedule;       // [num_sms + 1, 2] from PagedMqaMetadataKernel
        void* logits;                  // [batch*next_n, max_context_len], row stride logits_ld
        uint64_t block_table_ld;       // elements
        uint64_t logits_ld;            // elements
        uint32_t batch;
        uint32_t max_blocks;
        uint32_t max_context_len;
    };
    // The host mirrors Params byte for byte (src/ops/paged_mqa_logits.cpp).
    static_assert(sizeof(Params) == 576 && alignof(Params) == 64, "Params layout is part of the host contract");

    // What the producer tells the consumers about a stage.
    struct alignas(16) Task {
        int32_t batch_index;
        uint32_t unit;         // the page index within the sequence
        uint32_t flags;        // paged_mqa::TaskFlags
        uint32_t fill_from;    // kFillTail: first column of the -inf tail
        uint32_t context[2];   // context_lens[b, t] (clamped at 0)
        uint32_t reserved[2];
    };

    struct SharedStorage {
        alignas(1024) uint8_t kv[kNumStages][kPageBytes];
        alignas(1024) uint8_t q[kNumQStages][kQBytes];
        float sf[kNumStages][kPageTokens];
        float w[kNumQStages][kN];
        Task task[kNumStages];
        uint64_t full[kNumStages];
        uint64_t empty[kNumStages];
        uint64_t q_full[kNumQStages];
        uint64_t q_empty[kNumQStages];
    };
    static constexpr int kSmemBytes = static_cast<int>(sizeof(SharedStorage));
    // The host's formula (paged_mqa_logits_smem_bytes) must match the struct exactly.
    static_assert(kSmemBytes == align_up(kNumStages * (kPageBytes + kPageTokens * 4 + 32 + 16) +
                                             kNumQStages * (kQBytes + kN * 4 + 16),
                                         1024u),
                  "shared-memory plan drifted from the documented formula");
    static_assert(kSmemBytes <= 232448, "exceeds the 227 KB of dynamic shared memory per block on SM90");

    using Ring = prims::RingState<kNumStages>;
    using QRing = prims::RingState<kNumQStages>;

    // ---------------------------------------------------------------------------------------------------- producer

    // One warp: every lane walks the range (the lanes load context lengths and block ids in parallel), lane 0 issues.
    TESSERA_DEVICE static void produce(const Params& p, SharedStorage& smem, uint32_t lane) {
        using namespace paged_mqa;
        const int32_t* range = p.schedule + 2 * blockIdx.x;
        const uint32_t b0 = static_cast<uint32_t>(max(range[0], 0)), u0 = static_cast<uint32_t>(max(range[1], 0));
        const uint32_t b1 = static_cast<uint32_t>(max(range[2], 0)), u1 = static_cast<uint32_t>(max(range[3], 0));
        const uint64_t policy = ptx::l2_policy_evict_first();
        Ring ring;
        QRing q_ring;

        // Lane i holds the context lengths of sequence base + i.
        uint32_t base = b0;
        uint32_t cached[kNextN];
        const auto refresh = [&](uint32_t first) {
            base = first;
#pragma unroll
            for (int t = 0; t < kNextN; ++t) {
                const uint32_t b = first + lane;
                cached[t] = b < p.batch
                                ? static_cast<uint32_t>(max(p.context_lens[static_cast<uint64_t>(b) * kNextN + t], 0))
                                : 0u;
            }
        };
        // The first block ids depend on the range start alone: loaded with the context lengths, so the first page
        // loads leave one memory latency after the schedule's (the ids past the context are never used).
        const int32_t* first_row = p.block_table + static_cast<uint64_t>(b0) * p.block_table_ld;
        const int32_t first_ids = b0 < p.batch && u0 + lane < p.max_blocks ? first_row[u0 + lane] : 0;
        refresh(b0);

        for (uint32_t b = b0; b < p.batch && b <= b1; ++b) {
            if (b >= base + 32) refresh(b);
            uint32_t context[2] = {0u, 0u};
            uint32_t longest = 0;
#pragma unroll
            for (int t = 0; t < kNextN; ++t) {
                context[t] = __shfl_sync(0xffffffffu, cached[t], b - base);
                longest = max(longest, context[t]);
            }
            const SequenceTasks s = sequence_tasks(b, static_cast<int32_t>(longest), b0, u0, b1, u1, p.max_blocks,
                                                   p.max_context_len, kNumMathWarpgroups);
            if (s.num_tasks == 0) continue;
            if (s.uses_q) {
                ptx::mbarrier_wait(ptx::smem_addr(&smem.q_empty[q_ring.stage]), q_ring.phase ^ 1u);
                if (lane == 0) {
                    const uint32_t bar = ptx::smem_addr(&smem.q_full[q_ring.stage]);
                    ptx::tma_load_2d(ptx::smem_addr(smem.q[q_ring.stage]), p.q_map, bar, 0,
                                     static_cast<int32_t>(b * kN));
                    ptx::tma_load_2d(ptx::smem_addr(smem.w[q_ring.stage]), p.w_map, bar, 0, static_cast<int32_t>(b));
                    ptx::mbarrier_arrive_expect_tx(bar, kQTx);
                }
                __syncwarp();
            }
            // Block ids, 32 tasks at a time, one lane each; the next 32 are loaded while these are issued.
            const int32_t* table = p.block_table + static_cast<uint64_t>(b) * p.block_table_ld;
            const auto block_ids = [&](uint32_t j0) {
                const uint32_t unit = s.unit_begin + j0 + lane;
                return j0 + lane < s.num_tasks && unit < s.data_end ? table[unit] : 0;
            };
            int32_t next_ids = b == b0 ? first_ids : block_ids(0);
            for (uint32_t j0 = 0; j0 < s.num_tasks; j0 += 32) {
                const int32_t ids = next_ids;
                if (j0 + 32 < s.num_tasks) next_ids = block_ids(j0 + 32);
                const uint32_t count = min(32u, s.num_tasks - j0);
                for (uint32_t i = 0; i < count; ++i) {
                    const int32_t block = __shfl_sync(0xffffffffu, ids, i);
                    Task task{};
                    task.batch_index = static_cast<int32_t>(b);
                    task.unit = s.unit_begin + j0 + i;
                    task.flags = task_flags(s, j0 + i, kNumMathWarpgroups);
                    task.fill_from = s.fill_from;
                    task.context[0] = context[0];
                    task.context[1] = context[1];
                    issue_task(p, smem, ring, task, block, policy, lane);
                }
            }
            if (s.uses_q) q_ring.advance();
        }
        // One closing task per warpgroup: the stages go to the warpgroups in turn.
        for (int g = 0; g < kNumMathWarpgroups; ++g) {
            Task done{};
            done.flags = kDone;
            issue_task(p, smem, ring, done, 0, policy, lane);
        }
    }

    // Waits for the stage, writes its task record and loads its page (if any) onto its full barrier.
    TESSERA_DEVICE static void issue_task(const Params& p, SharedStorage& smem, Ring& ring, const Task& task,
                                          int32_t block, uint64_t policy, uint32_t lane) {
        const uint32_t s = ring.stage;
        ptx::mbarrier_wait(ptx::smem_addr(&smem.empty[s]), ring.phase ^ 1u);
        if (lane == 0) {
            smem.task[s] = task;  // published by the arrive below (release) to the consumer's wait (acquire)
            const uint32_t bar = ptx::smem_addr(&smem.full[s]);
            if (task.flags & paged_mqa::kHasData) {
                // A block id outside the cache is out of the maps' bounds: TMA fills zeros, nothing faults.
                ptx::tma_load_3d_hint(ptx::smem_addr(smem.kv[s]), p.kv_map, bar, 0, 0, block, policy);
                ptx::tma_load_2d_hint(ptx::smem_addr(smem.sf[s]), p.sf_map, bar, 0, block, policy);
                ptx::mbarrier_arrive_expect_tx(bar, kPageTx);
            } else {
                ptx::mbarrier_arrive(bar);
            }
        }
        __syncwarp();
        ring.advance();
    }

    // --------------------------------------------------------------------------------------------------- consumers

    // One warp's arrival on a barrier whose count is per warp (after all its lanes are done with the smem it guards).
    TESSERA_DEVICE static void warp_arrive(uint64_t* bar, uint32_t lane) {
        __syncwarp();
        if (lane == 0) ptx::mbarrier_arrive(ptx::smem_addr(bar));
    }

    // The page's 64 tokens x N query rows into acc: four k32 steps along D, the first overwriting.
    TESSERA_DEVICE static void mma(uint32_t kv_addr, uint32_t q_addr, float (&acc)[kN / 2]) {
        const uint64_t desc_kv = prims::make_desc_kmajor_sw128(kv_addr);
        const uint64_t desc_q = prims::make_desc_kmajor_sw128(q_addr);
        ptx::wgmma_fence();
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) ptx::fence_operand(acc[i]);
#pragma unroll
        for (int k = 0; k < kHeadDim / 32; ++k)
            ptx::wgmma_m64k32_e4m3(acc, prims::advance_desc(desc_kv, k * 32), prims::advance_desc(desc_q, k * 32),
                                   k);
        ptx::wgmma_commit_group();
    }

    TESSERA_DEVICE static void mma_wait(float (&acc)[kN / 2]) {
        ptx::wgmma_wait_group<0>();
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) ptx::fence_operand(acc[i]);
    }

    // Which logit a lane stores after the reduce-scatter: token t, row half (0: rows 0-7 of the warp's 16, 1: 8-15).
    TESSERA_DEVICE static uint32_t lane_token(uint32_t lane) { return kNextN == 2 ? lane & 1u : 0u; }
    TESSERA_DEVICE static uint32_t lane_half(uint32_t lane) { return kNextN == 2 ? (lane >> 1) & 1u : lane & 1u; }

    // sum_h w[t, h] * ReLU(acc) for this lane's two rows and each token, then reduced over the quad's four lanes so
    // that each lane ends with one (token, row) sum: lane_token / lane_half say which.
    TESSERA_DEVICE static float head_sum(const float (&acc)[kN / 2], const float (&w)[kN / 4], uint32_t lane) {
        constexpr int kChunksPerToken = kNumHeads / 8;  // 8-column accumulator chunks per query token
        float part[kNextN][2][2] = {};                   // token, row half, even/odd column (two FMA chains each)
#pragma unroll
        for (int i = 0; i < kN / 8; ++i) {
            const int t = i / kChunksPerToken;
            part[t][0][0] = fmaf(fmaxf(acc[4 * i + 0], 0.f), w[2 * i + 0], part[t][0][0]);
            part[t][0][1] = fmaf(fmaxf(acc[4 * i + 1], 0.f), w[2 * i + 1], part[t][0][1]);
            part[t][1][0] = fmaf(fmaxf(acc[4 * i + 2], 0.f), w[2 * i + 0], part[t][1][0]);
            part[t][1][1] = fmaf(fmaxf(acc[4 * i + 3], 0.f), w[2 * i + 1], part[t][1][1]);
        }
        const bool odd = lane & 1u, high = lane & 2u;
        if constexpr (kNextN == 1) {
            const float r0 = part[0][0][0] + part[0][0][1], r1 = part[0][1][0] + part[0][1][1];
            float keep = odd ? r1 : r0;  // odd lanes keep the second row half
            keep += __shfl_xor_sync(0xffffffffu, odd ? r0 : r1, 1);
            return keep + __shfl_xor_sync(0xffffffffu, keep, 2);
        } else {
            float v[2][2];
#pragma unroll
            for (int t = 0; t < 2; ++t)
#pragma unroll
                for (int h = 0; h < 2; ++h) v[t][h] = part[t][h][0] + part[t][h][1];
            // Odd lanes keep token 1, even lanes token 0; then lanes with bit 1 set keep the second row half.
            float k0 = odd ? v[1][0] : v[0][0], k1 = odd ? v[1][1] : v[0][1];
            k0 += __shfl_xor_sync(0xffffffffu, odd ? v[0][0] : v[1][0], 1);
            k1 += __shfl_xor_sync(0xffffffffu, odd ? v[0][1] : v[1][1], 1);
            const float keep = high ? k1 : k0;
            return keep + __shfl_xor_sync(0xffffffffu, high ? k0 : k1, 2);
        }
    }

    TESSERA_DEVICE static void store_logit(const Params& p, uint32_t row, uint32_t col, float value) {
        const uint64_t offset = static_cast<uint64_t>(row) * p.logits_ld + col;
        if constexpr (kOutBf16) {
            static_cast<uint16_t*>(p.logits)[offset] = static_cast<uint16_t>(ptx::pack_bf16x2(value, 0.f) & 0xffffu);
        } else {
            static_cast<float*>(p.logits)[offset] = value;
        }
    }

    // clean_logits: columns [fill_from, max_context_len) of the sequence's next_n rows become -inf. 16-byte stores
    // (rows start 16-byte aligned, fill_from is a multiple of 64), then the last few columns one by one.
    TESSERA_DEVICE static void fill_tail(const Params& p, const Task& task, uint32_t tid) {
        constexpr uint32_t kVec = 16 / kElemBytes;
        constexpr uint32_t kNegInf = kOutBf16 ? 0xff80ff80u : 0xff800000u;
        const uint32_t end = p.max_context_len, vec_end = end / kVec * kVec;
        if (task.fill_from >= end) return;
#pragma unroll
        for (int t = 0; t < kNextN; ++t) {
            const uint32_t row = static_cast<uint32_t>(task.batch_index) * kNextN + t;
            uint8_t* base = static_cast<uint8_t*>(p.logits) + static_cast<uint64_t>(row) * p.logits_ld * kElemBytes;
            for (uint32_t c = task.fill_from + tid * kVec; c < vec_end; c += 128 * kVec)
                ptx::st_global_v4_if(true, base + static_cast<uint64_t>(c) * kElemBytes, kNegInf, kNegInf, kNegInf,
                                     kNegInf);
            for (uint32_t c = vec_end + tid; c < end; c += 128) store_logit(p, row, c, __uint_as_float(0xff800000u));
        }
    }

    TESSERA_DEVICE static void consume(const Params& p, SharedStorage& smem, uint32_t wg, uint32_t warp,
                                       uint32_t lane) {
        using namespace paged_mqa;
        uint32_t stage = wg, phase = 0;  // this warpgroup's stages: wg, wg + W, ...
        QRing q_ring;
        float acc[kN / 2];
        float w[kN / 4];
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) acc[i] = 0.f;
#pragma unroll
        for (int i = 0; i < kN / 4; ++i) w[i] = 0.f;
        const uint32_t token = lane_token(lane);
        const uint32_t row_in_page = 16 * warp + lane / 4 + 8 * lane_half(lane);
        const bool stores = kNextN == 2 || (lane & 2u) == 0;  // next_n 1: lanes 2, 3 of a quad hold copies
        const uint32_t kv0 = ptx::smem_addr(smem.kv[0]), q0 = ptx::smem_addr(smem.q[0]);

        while (true) {
            ptx::mbarrier_wait(ptx::smem_addr(&smem.full[stage]), phase);
            const Task task = smem.task[stage];
            if (task.flags & kDone) break;
            const bool uses_q = task.flags & kUsesQ;
            if (uses_q && (task.flags & kFirstOfWg)) {
                ptx::mbarrier_wait(ptx::smem_addr(&smem.q_full[q_ring.stage]), q_ring.phase);
#pragma unroll
                for (int i = 0; i < kN / 8; ++i) {
                    const float* src = &smem.w[q_ring.stage][8 * i + 2 * (lane % 4)];
                    w[2 * i] = src[0];
                    w[2 * i + 1] = src[1];
                }
            }
            const bool has_data = task.flags & kHasData;
            float sf = 0.f;
            if (has_data) {
                mma(kv0 + stage * kPageBytes, q0 + q_ring.stage * kQBytes, acc);
                sf = smem.sf[stage][row_in_page];  // read while the wgmma runs, before the stage is released
                mma_wait(acc);
            }
            warp_arrive(&smem.empty[stage], lane);
            if (uses_q && (task.flags & kLastOfWg)) {
                warp_arrive(&smem.q_empty[q_ring.stage], lane);
                q_ring.advance();
            }
            if (has_data) {
                // Positive homogeneity: sf * sum_h w ReLU(x) = sum_h w ReLU(sf x) for the non-negative token scales
                // the cache holds (amax / 448), so the scale is applied once per logit.
                const float value = head_sum(acc, w, lane) * sf;
                const uint32_t col = task.unit * kPageTokens + row_in_page;
                const uint32_t row = static_cast<uint32_t>(task.batch_index) * kNextN + token;
                const bool valid = col < (token != 0 ? task.context[1] : task.context[0]);  // (no local array)
                if (stores && col < p.max_context_len && (valid || kClean))
                    store_logit(p, row, col, valid ? value : __uint_as_float(0xff800000u));
            }
            if (kClean && (task.flags & kFillTail)) fill_tail(p, task, 32 * warp + lane);
            stage += kNumMathWarpgroups;
            if (stage >= kNumStages) {
                stage -= kNumStages;
                phase ^= 1u;
            }
        }
    }

    static __device__ void run(const Params& p) {
        extern __shared__ __attribute__((aligned(1024))) uint8_t tessera_smem[];
        SharedStorage& smem = *reinterpret_cast<SharedStorage*>(tessera_smem);
        prims::run_warp_roles<kNumMathThreads, kProducerRegs, kConsumerRegs>(
            [&] {
                ptx::prefetch_tensormap(p.kv_map);
                ptx::prefetch_tensormap(p.sf_map);
                ptx::prefetch_tensormap(p.q_map);
                ptx::prefetch_tensormap(p.w_map);
            },
            [&] {
                prims::init_ring<kNumStages>(smem.full, smem.empty, 4);  // one warpgroup (4 warps) reads each stage
                prims::init_ring<kNumQStages>(smem.q_full, smem.q_empty, 4 * kNumMathWarpgroups);
            },
            [&](uint32_t lane) { produce(p, smem, lane); },
            [&](uint32_t wg, uint32_t warp, uint32_t lane) { consume(p, smem, wg, warp, lane); });
    }
};

}  // namespace tessera::sm90
