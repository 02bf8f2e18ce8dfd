// TF32 HyperConnection pre-norm GEMM for SM90 (sm_90a): D = A·Bᵀ on TF32 tensor cores, plus sqr_sum = Σ_k A[m,k]².
//
//   A [M, K] BF16, K-major: one TMA box [64 K][64 rows] per k-block, 128-byte swizzle (8 KB). BF16 -> FP32 is exact,
//     so A enters the wgmma as FP32 bit patterns in registers and its squares come from the same registers.
//   B [N, K] FP32, K-major: a k-block is two TMA boxes [32 K][N rows] (128 bytes of FP32 per swizzle row), the
//     second N*128 bytes after the first (1 KB aligned: N % 8 == 0). wgmma reads them from shared memory as TF32 (no
//     software rounding). The descriptor encoding is in bytes, so these 128-byte swizzled K-major rows take the same
//     descriptor as the BF16 kernels' (prims::make_desc_kmajor_sw128: 8-row groups 1024 B apart, leading offset
//     unused); a k8 slice is 32 bytes along the row, four slices per box.
//   D FP32 row-major, sqr_sum FP32: written from registers with plain stores (a tile is 64 rows x N <= 32 columns).
//
// Work split: the grid is m-blocks x splits, CTA b takes split b % S of m-block b / S; split s covers the k-blocks
// [s*base + min(s, rem), + base + (s < rem)) with base = kb / S, rem = kb % S (earlier splits get the extra block).
//   kReduce = 0: split s writes its partial sums to D[s] and sqr_sum[s] (DeepGEMM's num_splits; S = 1 is the plain
//     product). A split without k-blocks writes zeros.
//   kReduce = 1: the caller asked for one D; the planner split K over CTAs to fill the SMs. Either
//     - kClusterSize = S > 1: the S CTAs of an m-block are one cluster. Piece group j of the tile (float4 j of every
//       thread's accumulator fragment) belongs to rank j % S: every CTA pushes its group-j pieces with st.async into
//       that rank's receive buffer (behind the storage), completing the bytes on the receiver's mbarrier, and the
//       last rank receives the rows' squares. A receiver waits for its bytes, adds the S partials in rank order
//       (deterministic) and stores them. No workspace, no global atomics, and one cluster barrier, early (every
//       receive barrier is set up before any push), where the path below pays a GPU-scope fence, an atomic and
//       rounds of L2 loads.
//     - or (kClusterSize = 1, more splits than a cluster holds) every CTA stores its partial tile to a workspace,
//       then counts itself in on its m-block's counter; the CTA that arrives last sums the S partials in split
//       order (so the result does not depend on arrival order) and stores D and sqr_sum, then sets the counter back
//       to 0 for the next launch.
//
// Warp roles: warps 0-3 are the math warpgroup (64 rows: warp w owns rows 16w .. 16w+15), warp 4 issues the TMA loads
// from one elected lane. The ring (prims/pipeline.cuh): full[s] completes on the stage's bytes, empty[s] on one
// arrival per math warp.
//
// Math k-block loop: wait for the stage; build the A fragment of all eight k8 slices from shared memory (four BF16
// per slice and thread), accumulating the squares; issue the eight m64nNk8 wgmmas (B through descriptors); then wait
// for the previous k-block's wgmmas and release its stage. One k-block's wgmmas are always in flight while the next
// fragment is built, so the fragment registers are double-buffered (frag[2]); kNumAccumulators = 2 alternates the
// slices between two accumulators, two independent wgmma chains instead of one.
#pragma once

#include <tessera/common.cuh>
#include <tessera/prims/pipeline.cuh>
#include <tessera/prims/smem_desc.cuh>
#include <tessera/ptx/mbarrier.cuh>
#include <tessera/ptx/memory.cuh>
#include <tessera/ptx/sync.cuh>
#include <tessera/ptx/tma.cuh>
#include <tessera/ptx/wgmma.cuh>
#include <tessera/ptx/wgmma_tf32.cuh>

namespace tessera::sm90 {

// Config members (rendered by the JIT from the host's spec): kShapeN (N: 8, 16, 24 or 32), kNumStages, kReduce (0:
// each split writes its own D[s]; 1: the splits are summed into one D), kNumAccumulators (1 or 2); optional
// kClusterSize (kReduce: the splits of an m-block are one cluster of this many CTAs, summed through DSMEM).
template <class Config>
struct HcPrenormGemmKernel {
    static constexpr int kBlockM = 64;
    static constexpr int kBlockK = 64;  // BF16 elements in one 128-byte swizzle row of A
    static constexpr int kN = Config::kShapeN;
    static constexpr int kNumStages = Config::kNumStages;
    static constexpr bool kReduce = Config::kReduce != 0;
    static constexpr int kNumAccs = Config::kNumAccumulators;
    static constexpr int kClusterSize = [] {
        if constexpr (requires { Config::kClusterSize; }) return static_cast<int>(Config::kClusterSize);
        else return 1;
    }();
    static constexpr bool kClusterReduce = kClusterSize > 1;
    static constexpr int kNumMathThreads = 128;
    static constexpr int kNumThreads = kNumMathThreads + 32;  // + one TMA warp
    static constexpr uint32_t kProducerWarp = kNumMathThreads / 32;
    static constexpr int kAccRegs = kN / 2;  // m64nN FP32 accumulator per thread
    static constexpr int kSlices = kBlockK / 8;

    static constexpr uint32_t kABytes = kBlockM * kBlockK * 2;
    static constexpr uint32_t kBBoxBytes = kN * 128;  // [N rows][32 FP32]: half a k-block
    static constexpr uint32_t kBBytes = 2 * kBBoxBytes;
    static constexpr uint32_t kTxBytes = kABytes + kBBytes;
    // One CTA's partial in the workspace: the accumulators in fragment order (float4 j of thread t at (j*128 + t)*4,
    // so each store and load of a warp covers 512 contiguous bytes), then the 64 row sums of squares.
    static constexpr int kPartialFloats = kBlockM * kN + kBlockM;
    // Splits whose loads are in flight together in the final sum: 24 float4 loads per thread (the planner's cost
    // model, heuristics::hc_prenorm_reduce_unroll, mirrors this).
    static constexpr int kReduceUnroll = 24 / (kN / 8);
    // kClusterReduce: the receive buffer, [slot][source rank][128 threads] float4 for the piece groups this rank
    // owns (slot = j / S), then [source rank][64 rows] of squares (used on the last rank).
    static constexpr int kGroups = kN / 8;
    static constexpr int kSlots = (kGroups + kClusterSize - 1) / kClusterSize;
    static constexpr uint32_t kRecvPieceBytes = kSlots * kClusterSize * kNumMathThreads * 16;
    static constexpr uint32_t kRecvBytes =
        kClusterReduce ? (kRecvPieceBytes + kClusterSize * kBlockM * 4 + 1023) / 1024 * 1024 : 0;

    static_assert(kN % 8 == 0 && kN >= 8 && kN <= 32, "N: a multiple of 8 up to 32 (wgmma tf32 N, B boxes 1 KB aligned)");
    static_assert(kNumStages >= 2 && kNumStages <= 32, "the loop keeps one stage in flight while it waits the next");
    static_assert(kNumAccs == 1 || kNumAccs == 2, "one accumulator or two alternating ones");
    static_assert(kClusterSize == 1 || (kReduce && (kClusterSize == 2 || kClusterSize == 4 || kClusterSize == 8 ||
                                                    kClusterSize == 16)),
                  "a cluster sums the splits of one m-block: 2, 4, 8 or 16 CTAs");

    struct Params {
        TmaDescriptor tensor_map_a;  // A [M][K] BF16, box [64 K][64 rows], 128-byte swizzle
        TmaDescriptor tensor_map_b;  // B [N][K] FP32 (TF32), box [32 K][N rows], 128-byte swizzle
        float* d;                    // D: [S][M][ld_d] (kReduce = 0) or [M][ld_d]
        float* sqr_sum;              // [S][M] or [M]
        float* workspace;            // kReduce: [m blocks][S][kPartialFloats]
        uint32_t* counters;          // kReduce: one per m block, 0 before the launch and after it
        uint64_t d_split_stride;     // elements from D[s] to D[s + 1]
        uint32_t m;
        uint32_t num_k_blocks;  // K / 64
        uint32_t num_splits;    // S
        uint32_t ld_d;          // D row stride in elements
        uint32_t sqr_split_stride;  // elements from sqr_sum[s] to sqr_sum[s + 1]
    };
    // The host mirrors Params byte for byte (src/ops/hc_prenorm_gemm.cpp).
    static_assert(sizeof(Params) == 320 && alignof(Params) == 64, "Params layout is part of the host contract");

    struct SharedStorage {
        uint64_t full_barriers[kNumStages];
        uint64_t empty_barriers[kNumStages];
        uint64_t recv_full;  // kClusterReduce: completes when every push into this CTA's receive buffer has landed
        uint32_t is_last;    // kReduce: this CTA arrived last on its m block
        alignas(1024) uint8_t a[kNumStages][kABytes];
        alignas(1024) uint8_t b[kNumStages][kBBytes];
    };
    // The cluster sum's receive buffer follows the storage (kRecvBytes, 0 without a cluster sum).
    static constexpr int kSmemBytes = static_cast<int>(sizeof(SharedStorage) + kRecvBytes);
    // The host planner's formula (heuristics::hc_prenorm_smem_bytes) must match the layout exactly.
    static_assert(kSmemBytes == 1024 + kNumStages * (kABytes + kBBytes) + kRecvBytes,
                  "shared-memory plan drifted from its formula");
    static_assert(kSmemBytes <= 232448, "exceeds the 227 KB of dynamic shared memory per block on SM90");

    struct Chunk {
        uint32_t m_block, split, kb_begin, kb_count;
    };
    TESSERA_DEVICE static Chunk chunk_of(const Params& p) {
        const uint32_t s = p.num_splits;
        Chunk c;
        c.split = blockIdx.x % s;
        c.m_block = blockIdx.x / s;
        const uint32_t base = p.num_k_blocks / s, rem = p.num_k_blocks % s;
        c.kb_begin = c.split * base + (c.split < rem ? c.split : rem);
        c.kb_count = base + (c.split < rem ? 1u : 0u);
        return c;
    }

    // One thread: the chunk's k-blocks into the ring.
    TESSERA_DEVICE static void produce(const Params& p, SharedStorage& smem, const Chunk& c) {
        prims::RingState<kNumStages> ring;
        const int32_t row0 = static_cast<int32_t>(c.m_block * kBlockM);
#pragma unroll 1
        for (uint32_t i = 0; i < c.kb_count; ++i) {
            const int32_t k0 = static_cast<int32_t>((c.kb_begin + i) * kBlockK);
            prims::produce_stage(ring, smem.full_barriers, smem.empty_barriers, true, kTxBytes,
                                 [&](uint32_t s, uint32_t full) {
                                     ptx::tma_load_2d(ptx::smem_addr(smem.a[s]), p.tensor_map_a, full, k0, row0);
                                     ptx::tma_load_2d(ptx::smem_addr(smem.b[s]), p.tensor_map_b, full, k0, 0);
                                     ptx::tma_load_2d(ptx::smem_addr(smem.b[s] + kBBoxBytes), p.tensor_map_b, full,
                                                      k0 + 32, 0);
                                 });
        }
    }

    struct LoopState {
        prims::RingState<kNumStages> ring;
        uint32_t prev_stage;
        uint32_t frag[2][kSlices][4];  // the A fragments of this k-block and of the one whose wgmmas are in flight
        float sq[2];                   // sums of squares of rows g and g + 8 (this thread's columns)
    };

    // One k-block with fragment buffer P. a_thread: this thread's byte address in stage 0's A tile (row 16w + g,
    // column q); g = lane / 4.
    template <int P>
    TESSERA_DEVICE static void step(SharedStorage& smem, LoopState& st, float (&acc)[kNumAccs][kAccRegs],
                                    uint32_t a_thread, uint64_t b_desc0, uint32_t g, bool first, uint32_t lane) {
        const uint32_t s = st.ring.stage;
        ptx::mbarrier_wait(ptx::smem_addr(&smem.full_barriers[s]), st.ring.phase);
        const uint32_t a_stage = a_thread + s * kABytes;
#pragma unroll
        for (int j = 0; j < kSlices; ++j) {
            // Slice j is the 16-byte chunk j of each row, stored at chunk j ^ (row % 8) by the 128-byte swizzle; both
            // rows of this thread (16w + g and + 8) have row % 8 == g. Columns q and q + 4 are 8 bytes apart.
            const uint32_t at = a_stage + ((static_cast<uint32_t>(j) ^ g) << 4);
            uint32_t(&f)[4] = st.frag[P][j];
            f[0] = ptx::ld_shared_u16(at) << 16;  // BF16 -> FP32: the BF16 bits are the high half
            f[1] = ptx::ld_shared_u16(at + 8 * 128) << 16;
            f[2] = ptx::ld_shared_u16(at + 8) << 16;
            f[3] = ptx::ld_shared_u16(at + 8 * 128 + 8) << 16;
            const float x0 = __uint_as_float(f[0]), x1 = __uint_as_float(f[1]);
            const float x2 = __uint_as_float(f[2]), x3 = __uint_as_float(f[3]);
            st.sq[0] = __fmaf_rn(x2, x2, __fmaf_rn(x0, x0, st.sq[0]));
            st.sq[1] = __fmaf_rn(x3, x3, __fmaf_rn(x1, x1, st.sq[1]));
        }
        ptx::wgmma_fence();  // the fragment registers were just written
        const uint64_t b_stage = b_desc0 + s * (kBBytes >> 4);
#pragma unroll
        for (int j = 0; j < kSlices; ++j) {
            // k8 slice j of B: box j / 4, 32 bytes per slice along the swizzle row.
            const uint32_t offset = (j / 4) * kBBoxBytes + (j % 4) * 32;
            ptx::wgmma_m64k8_tf32_rs(acc[j % kNumAccs], st.frag[P][j], prims::advance_desc(b_stage, offset), 1u);
        }
        ptx::wgmma_commit_group();
        if (!first) {
            ptx::wgmma_wait_group<1>();  // the previous k-block's wgmmas are done: its fragment and stage are free
#pragma unroll
            for (int j = 0; j < kSlices; ++j)
#pragma unroll
                for (int i = 0; i < 4; ++i) ptx::keep_live(st.frag[P ^ 1][j][i]);
            prims::release_stage<1>(smem.empty_barriers, st.prev_stage, false, lane);
        }
        st.prev_stage = s;
        st.ring.advance();
    }

    // The chunk's k-blocks: acc (FP32, m64nN fragment layout, both accumulators summed) and the two rows' full sums
    // of squares (quad-reduced; every lane of the quad holds them).
    TESSERA_DEVICE static void mainloop(SharedStorage& smem, const Chunk& c, uint32_t warp, uint32_t lane,
                                        float (&out)[kAccRegs], float (&sq)[2]) {
        const uint32_t g = lane / 4, q = lane % 4;
        const uint32_t a_thread = ptx::smem_addr(smem.a[0]) + (16 * warp + g) * 128 + 2 * q;
        const uint64_t b_desc0 = prims::make_desc_kmajor_sw128(ptx::smem_addr(smem.b[0]));
        float acc[kNumAccs][kAccRegs];
#pragma unroll
        for (int a = 0; a < kNumAccs; ++a)
#pragma unroll
            for (int i = 0; i < kAccRegs; ++i) acc[a][i] = 0.f;
        LoopState st;
        st.prev_stage = 0;
        st.sq[0] = st.sq[1] = 0.f;
#pragma unroll
        for (int b = 0; b < 2; ++b)
#pragma unroll
            for (int j = 0; j < kSlices; ++j)
#pragma unroll
                for (int i = 0; i < 4; ++i) st.frag[b][j][i] = 0u;
#pragma unroll 1
        for (uint32_t i = 0; i < c.kb_count; i += 2) {
            step<0>(smem, st, acc, a_thread, b_desc0, g, i == 0, lane);
            if (i + 1 == c.kb_count) break;
            step<1>(smem, st, acc, a_thread, b_desc0, g, false, lane);
        }
        ptx::wgmma_wait_group<0>();
#pragma unroll
        for (int b = 0; b < 2; ++b)
#pragma unroll
            for (int j = 0; j < kSlices; ++j)
#pragma unroll
                for (int i = 0; i < 4; ++i) ptx::keep_live(st.frag[b][j][i]);
        if (c.kb_count > 0) prims::release_stage<1>(smem.empty_barriers, st.prev_stage, false, lane);
        // The accumulators are read from here on: keep those reads after the wait.
#pragma unroll
        for (int a = 0; a < kNumAccs; ++a)
#pragma unroll
            for (int i = 0; i < kAccRegs; ++i) ptx::fence_operand(acc[a][i]);
#pragma unroll
        for (int i = 0; i < kAccRegs; ++i) out[i] = kNumAccs == 2 ? acc[0][i] + acc[1][i] : acc[0][i];
        // The quad's four lanes hold columns q and q + 4 of every slice: a fixed-order butterfly gives each the sum.
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            st.sq[r] += __shfl_xor_sync(0xffffffffu, st.sq[r], 1);
            st.sq[r] += __shfl_xor_sync(0xffffffffu, st.sq[r], 2);
            sq[r] = st.sq[r];
        }
    }

    // kReduce: publishes this CTA's partial; the last CTA of the m block replaces acc and sq with the sum of all S
    // partials (in split order) and returns true, the others return false.
    TESSERA_DEVICE static bool reduce_splits(const Params& p, SharedStorage& smem, const Chunk& c, uint32_t warp,
                                             uint32_t lane, float (&acc)[kAccRegs], float (&sq)[2]) {
        const uint32_t t = warp * 32 + lane, g = lane / 4, q = lane % 4;
        const uint32_t row = 16 * warp + g;  // rows row and row + 8 of the m block
        const uint32_t num_splits = p.num_splits;
        float* block_parts = p.workspace + static_cast<uint64_t>(c.m_block) * num_splits * kPartialFloats;
        float* mine = block_parts + static_cast<uint64_t>(c.split) * kPartialFloats;
#pragma unroll
        for (int j = 0; j < kN / 8; ++j)
            ptx::st_global_v4(mine + (j * 128 + t) * 4, acc[4 * j], acc[4 * j + 1], acc[4 * j + 2],
                                     acc[4 * j + 3]);
        if (q == 0) {
            mine[kBlockM * kN + row] = sq[0];
            mine[kBlockM * kN + row + 8] = sq[1];
        }
        // Publish, then count in: the classic last-block pattern (every writer fences before the barrier, one thread
        // adds, the last one's threads fence again before reading the others' partials).
        ptx::fence_acq_rel_gpu();
        ptx::named_barrier_sync(1, kNumMathThreads);
        if (t == 0) smem.is_last = ptx::atom_add_acq_rel_gpu(p.counters + c.m_block, 1u) == num_splits - 1;
        ptx::named_barrier_sync(1, kNumMathThreads);
        if (!smem.is_last) return false;
        ptx::fence_acq_rel_gpu();

        const bool rows_valid = c.m_block * kBlockM + row < p.m;  // row + 8 may still be past M: never stored
#pragma unroll
        for (int i = 0; i < kAccRegs; ++i) acc[i] = 0.f;
        sq[0] = sq[1] = 0.f;
#pragma unroll 1
        for (uint32_t s0 = 0; s0 < num_splits; s0 += kReduceUnroll) {
            float buf[kReduceUnroll][kAccRegs], sbuf[kReduceUnroll][2];
#pragma unroll
            for (int u = 0; u < kReduceUnroll; ++u) {
                const float* part = block_parts + static_cast<uint64_t>(s0 + u) * kPartialFloats;
                const bool load = rows_valid && s0 + u < num_splits;
#pragma unroll
                for (int j = 0; j < kN / 8; ++j) {
                    float* v = &buf[u][4 * j];
                    v[0] = v[1] = v[2] = v[3] = 0.f;
                    if (load) ptx::ld_global_cg_v4(part + (j * 128 + t) * 4, v[0], v[1], v[2], v[3]);
                }
                sbuf[u][0] = load && q == 0 ? ptx::ld_global_cg(part + kBlockM * kN + row) : 0.f;
                sbuf[u][1] = load && q == 0 ? ptx::ld_global_cg(part + kBlockM * kN + row + 8) : 0.f;
            }
            // Added in split order, whichever CTA is last: the result is deterministic.
#pragma unroll
            for (int u = 0; u < kReduceUnroll; ++u) {
                if (s0 + u >= num_splits) break;
#pragma unroll
                for (int i = 0; i < kAccRegs; ++i) acc[i] += buf[u][i];
                sq[0] += sbuf[u][0];
                sq[1] += sbuf[u][1];
            }
        }
        if (t == 0) p.counters[c.m_block] = 0u;  // every split has arrived: ready for the next launch
        return true;
    }

    // The bytes rank `rank` receives: S float4 per thread for each piece group it owns, and the squares on the last.
    TESSERA_DEVICE static constexpr uint32_t recv_bytes_of(uint32_t rank) {
        constexpr uint32_t kG = kGroups, kS = kClusterSize;
        const uint32_t owned = rank < kG ? (kG - 1 - rank) / kS + 1 : 0u;  // groups j = rank, rank + S, ... below N / 8
        return owned * kClusterSize * kNumMathThreads * 16 +
               (rank == kClusterSize - 1 ? kClusterSize * kBlockM * 4 : 0u);
    }

    // kClusterReduce: the cluster's S partials of this m-block summed into D and sqr_sum. Thread t's float4 j holds
    // rows 16w + g and + 8, columns 8j + 2q and + 1 (t = 32w + 4g + q); rank j % S adds them over the ranks in order.
    TESSERA_DEVICE static void reduce_cluster(const Params& p, SharedStorage& smem, const Chunk& c, uint32_t warp,
                                              uint32_t lane, const float (&acc)[kAccRegs], const float (&sq)[2]) {
        const uint32_t t = warp * 32 + lane, q = lane % 4;
        const uint32_t rank = ptx::cluster_cta_rank(), last = kClusterSize - 1;
        const uint32_t recv = ptx::smem_addr(&smem) + static_cast<uint32_t>(sizeof(SharedStorage));
        const uint32_t bar = ptx::smem_addr(&smem.recv_full);
        ptx::cluster_wait();  // every receive barrier of the cluster is set up (each CTA arrived after its init)
#pragma unroll
        for (int j = 0; j < kGroups; ++j) {
            const uint32_t owner = static_cast<uint32_t>(j) % kClusterSize, slot = static_cast<uint32_t>(j) / kClusterSize;
            const uint32_t dst = recv + ((slot * kClusterSize + rank) * kNumMathThreads + t) * 16;
            ptx::st_async_v4(ptx::map_shared_rank(dst, owner), acc[4 * j], acc[4 * j + 1], acc[4 * j + 2],
                             acc[4 * j + 3], ptx::map_shared_rank(bar, owner));
        }
        if (q == 0) {
            const uint32_t dst = recv + kRecvPieceBytes + (rank * kBlockM + 16 * warp + lane / 4) * 4;
            ptx::st_async_f32(ptx::map_shared_rank(dst, last), sq[0], ptx::map_shared_rank(bar, last));
            ptx::st_async_f32(ptx::map_shared_rank(dst + 32, last), sq[1], ptx::map_shared_rank(bar, last));
        }
        if (recv_bytes_of(rank) == 0) return;  // nothing to receive: no CTA reads or writes this one's memory again
        ptx::mbarrier_wait_cluster(bar, 0);  // the pushes' bytes have landed and are visible to this CTA's threads
        const uint8_t* recv_ptr = reinterpret_cast<const uint8_t*>(&smem) + sizeof(SharedStorage);
        const float4* pieces = reinterpret_cast<const float4*>(recv_ptr);
        const float* squares = reinterpret_cast<const float*>(recv_ptr + kRecvPieceBytes);
        const uint32_t row0 = c.m_block * kBlockM;
        const uint32_t r0 = row0 + 16 * warp + lane / 4, col = 2 * q;
#pragma unroll
        for (int slot = 0; slot < kSlots; ++slot) {
            const uint32_t j = static_cast<uint32_t>(slot) * kClusterSize + rank;
            if (j >= static_cast<uint32_t>(kGroups)) break;
            float x = 0.f, y = 0.f, z = 0.f, w = 0.f;
#pragma unroll
            for (int src = 0; src < kClusterSize; ++src) {
                const float4 v = pieces[(slot * kClusterSize + src) * kNumMathThreads + t];
                x += v.x;
                y += v.y;
                z += v.z;
                w += v.w;
            }
            if (r0 < p.m) ptx::st_global_v2(p.d + static_cast<uint64_t>(r0) * p.ld_d + 8 * j + col, x, y);
            if (r0 + 8 < p.m) ptx::st_global_v2(p.d + static_cast<uint64_t>(r0 + 8) * p.ld_d + 8 * j + col, z, w);
        }
        if (rank == last && t < kBlockM) {
            float v = 0.f;
#pragma unroll
            for (int src = 0; src < kClusterSize; ++src) v += squares[src * kBlockM + t];
            if (row0 + t < p.m) p.sqr_sum[row0 + t] = v;
        }
    }

    // D rows (16w + g, + 8), columns 8j + 2q, + 1 of `split`'s slice; lane q == 0 writes the rows' sums of squares.
    TESSERA_DEVICE static void store(const Params& p, const Chunk& c, uint32_t split, uint32_t warp, uint32_t lane,
                                     const float (&acc)[kAccRegs], const float (&sq)[2]) {
        const uint32_t g = lane / 4, q = lane % 4;
        const uint32_t r0 = c.m_block * kBlockM + 16 * warp + g, r1 = r0 + 8;
        float* d = p.d + split * p.d_split_stride;
        float* d0 = d + static_cast<uint64_t>(r0) * p.ld_d + 2 * q;
        float* d1 = d + static_cast<uint64_t>(r1) * p.ld_d + 2 * q;
#pragma unroll
        for (int j = 0; j < kN / 8; ++j) {
            if (r0 < p.m) ptx::st_global_v2(d0 + 8 * j, acc[4 * j], acc[4 * j + 1]);
            if (r1 < p.m) ptx::st_global_v2(d1 + 8 * j, acc[4 * j + 2], acc[4 * j + 3]);
        }
        if (q == 0) {
            float* s = p.sqr_sum + static_cast<uint64_t>(split) * p.sqr_split_stride;
            if (r0 < p.m) s[r0] = sq[0];
            if (r1 < p.m) s[r1] = sq[1];
        }
    }

    TESSERA_DEVICE static void consume(const Params& p, SharedStorage& smem, const Chunk& c, uint32_t warp,
                                       uint32_t lane) {
        float acc[kAccRegs], sq[2];
        mainloop(smem, c, warp, lane, acc, sq);
        if constexpr (kClusterReduce) {
            reduce_cluster(p, smem, c, warp, lane, acc, sq);
        } else if constexpr (kReduce) {
            if (reduce_splits(p, smem, c, warp, lane, acc, sq)) store(p, c, 0u, warp, lane, acc, sq);
        } else {
            store(p, c, c.split, warp, lane, acc, sq);
        }
    }

    static __device__ void run(const Params& p) {
        extern __shared__ __attribute__((aligned(1024))) uint8_t tessera_smem[];
        SharedStorage& smem = *reinterpret_cast<SharedStorage*>(tessera_smem);
        const uint32_t warp = ptx::warp_id_uniform();
        const uint32_t lane = ptx::lane_id();
        const Chunk c = chunk_of(p);

        if (warp == kProducerWarp && ptx::elect_one()) {
            ptx::prefetch_tensormap(p.tensor_map_a);
            ptx::prefetch_tensormap(p.tensor_map_b);
            prims::init_ring<kNumStages>(smem.full_barriers, smem.empty_barriers, kNumMathThreads / 32);
            if constexpr (kClusterReduce) {
                // One arrival (this one) and the bytes the peers push; their pushes may land before or after.
                ptx::mbarrier_init(ptx::smem_addr(&smem.recv_full), 1);
                ptx::mbarrier_arrive_expect_tx(ptx::smem_addr(&smem.recv_full), recv_bytes_of(ptx::cluster_cta_rank()));
            }
            ptx::fence_mbarrier_init();
        }
        prims::sync_after_init<1>();
        // This CTA's receive barrier is set up (published by the init fence); a thread's first push waits for the
        // whole cluster's.
        if constexpr (kClusterReduce) ptx::cluster_arrive_relaxed();

        if (warp == kProducerWarp) {
            if (ptx::elect_one()) produce(p, smem, c);
            if constexpr (kClusterReduce) {  // each arrival is matched by a wait before the thread exits
                __syncwarp();
                ptx::cluster_wait();
            }
        } else {
            consume(p, smem, c, warp, lane);
        }
    }
};

}  // namespace tessera::sm90
