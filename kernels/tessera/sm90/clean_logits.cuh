// -inf outside each row's KV range: for row i of logits [rows, cols] (FP32 or BF16, rows `stride` elements apart),
// every column j in [0, cols) outside [ks[i], ke[i]) becomes -inf (ks absent: 0). The MQA logits kernel writes only
// the in-range entries, so the two kernels touch disjoint elements.
//
// A pure write stream. Short segments (under kBulkMinBytes) are stored by every thread of the block in turn, 16 bytes
// each, as the fixed cost of a bulk copy would dominate them; long ones leave through the TMA unit: the block fills
// kFillBytes of shared memory with -inf (only when it has a long segment), and a segment's 16-byte aligned body goes
// out as bulk copies of that buffer (cp.async.bulk, no tensor map), chunk c issued by lane c % 32 of the warp that owns
// the row. Unaligned edges (under 16 bytes each) are element stores. A block takes rows_per_block consecutive rows,
// warp w the long segments of rows w, w + kNumWarps, ...; the ranges are read once, up front. Each lane waits for its
// bulk copies before the block exits.
#pragma once

#include <tessera/common.cuh>
#include <tessera/ptx/memory.cuh>
#include <tessera/ptx/tma.cuh>

namespace tessera::sm90 {

// Config members: kOutBf16 (BF16 logits, else FP32), kNumThreads.
template <class Config>
struct CleanLogitsKernel {
    static constexpr bool kOutBf16 = Config::kOutBf16 != 0;
    static constexpr int kNumThreads = Config::kNumThreads;
    static constexpr int kElemBytes = kOutBf16 ? 2 : 4;
    static constexpr int kVecElems = 16 / kElemBytes;
    static constexpr int kMaxRowsPerBlock = 64;
    static constexpr int kNumWarps = kNumThreads / 32;
    // The -inf source of the bulk copies: 16 KB (a bulk copy's size has no such limit; this is enough bytes per
    // instruction to keep the TMA unit streaming, and the 8 blocks an SM runs hold 143 KB with their 1 KB reserve).
    static constexpr int kFillBytes = 16384;
    static_assert(kNumThreads % 32 == 0 && kNumThreads >= kMaxRowsPerBlock && kNumThreads <= 1024, "block size");

    struct Params {
        void* logits;
        int64_t stride;         // elements between rows
        const int32_t* ks;      // nullptr: every range starts at 0
        const int32_t* ke;
        uint32_t rows, cols;
        uint32_t rows_per_block;  // <= kMaxRowsPerBlock
        uint32_t pad;
    };
    static_assert(sizeof(Params) == 48, "Params layout is part of the host contract");

    // -inf in the element type, as a 32-bit pattern (two BF16 elements or one FP32).
    static constexpr uint32_t kNegInfWord = kOutBf16 ? 0xff80ff80u : 0xff800000u;

    TESSERA_DEVICE static void store_one(uint8_t* row, int32_t j) {
        uint8_t* const at = row + static_cast<int64_t>(j) * kElemBytes;  // bytes past 2^31 for j >= 2^29 (FP32)
        if constexpr (kOutBf16) *reinterpret_cast<uint16_t*>(at) = static_cast<uint16_t>(0xff80u);
        else *reinterpret_cast<uint32_t*>(at) = kNegInfWord;
    }

    // A segment of at least this many bytes goes out as bulk copies: on an H100 the element-store kernel won below
    // it (s2048 skv16384 causal FP32, bodies under 8 KB: 4.5 against 5.9 us) and the bulk copies above it (s8192
    // skv65536 context-parallel FP32, bodies of 64 KB on average: 380 against 433 us).
    static constexpr int64_t kBulkMinBytes = 16384;
    TESSERA_DEVICE static bool is_long(int32_t a, int32_t b) {
        return static_cast<int64_t>(b - a) * kElemBytes >= kBulkMinBytes;
    }

    // The aligned body [body, body_end) of elements [a, b) of `row`: from the first 16-byte boundary (the row base
    // is element-aligned), whole 16-byte vectors. Column indices are 32-bit (the ops refuse 2^31 columns or more, and
    // ks / ke are int32): with 64-bit ones the kernel held 36 registers, 7 blocks of 256 threads per SM where the grid
    // counts 8.
    TESSERA_DEVICE static void body_of(const uint8_t* row, int32_t a, int32_t b, int32_t& body, int32_t& body_end) {
        const uint32_t addr =
            static_cast<uint32_t>(reinterpret_cast<uint64_t>(row)) + static_cast<uint32_t>(a) * kElemBytes;
        body = a + static_cast<int32_t>(((16 - (addr & 15u)) & 15u) / kElemBytes);
        body = body < b ? body : b;
        body_end = body + (b - body) / kVecElems * kVecElems;
    }

    // -inf into elements [a, b) of `row` (a short segment: under kBulkMinBytes) by `count` threads numbered `t`:
    // 16-byte stores, the edges by element stores.
    TESSERA_DEVICE static void fill_by_stores(uint8_t* row, int32_t a, int32_t b, uint32_t t, uint32_t count) {
        int32_t body, body_end;
        body_of(row, a, b, body, body_end);
        uint8_t* const body_ptr = row + static_cast<int64_t>(body) * kElemBytes;
        const uint32_t body_bytes = static_cast<uint32_t>((body_end - body) * kElemBytes);  // < kBulkMinBytes
#pragma unroll 1
        for (uint32_t off = t * 16; off < body_bytes; off += count * 16)
            ptx::st_global_v4_b32(body_ptr + off, kNegInfWord, kNegInfWord, kNegInfWord, kNegInfWord);
        if (t < body - a) store_one(row, a + t);
        if (t < b - body_end) store_one(row, body_end + t);
    }

    // -inf into elements [a, b) of `row`, by one warp: the aligned body as bulk copies of `fill` (lane c issues
    // chunks c, c + 32, ...), the unaligned edges by lanes' element stores.
    TESSERA_DEVICE static void fill_by_copies(uint8_t* row, int32_t a, int32_t b, uint32_t fill_smem, uint32_t lane) {
        int32_t body, body_end;
        body_of(row, a, b, body, body_end);
        const int64_t body_bytes = static_cast<int64_t>(body_end - body) * kElemBytes;
        // Not unrolled: the unrolled copies held 43 registers, which leaves 5 blocks of 256 threads per SM where the
        // grid is sized for 8 (32 registers at most).
#pragma unroll 1
        for (int64_t off = static_cast<int64_t>(lane) * kFillBytes; off < body_bytes; off += 32LL * kFillBytes) {
            const int64_t left = body_bytes - off;
            ptx::bulk_store(row + static_cast<int64_t>(body) * kElemBytes + off, fill_smem,
                            static_cast<uint32_t>(left < kFillBytes ? left : kFillBytes));
        }
        if (lane < body - a) store_one(row, a + lane);
        if (lane < b - body_end) store_one(row, body_end + lane);
    }

    static __device__ void run(const Params& p) {
        __shared__ int32_t lo_of[kMaxRowsPerBlock], hi_of[kMaxRowsPerBlock];
        __shared__ alignas(128) uint32_t fill_words[kFillBytes / 4];
        const uint32_t first = blockIdx.x * p.rows_per_block;
        if (first >= p.rows) return;
        const uint32_t count = p.rows - first < p.rows_per_block ? p.rows - first : p.rows_per_block;
        const int32_t cols = static_cast<int32_t>(p.cols);  // < 2^31 (the ops check it)
        if (threadIdx.x < count) {
            const uint32_t i = first + threadIdx.x;
            // The kept range [lo, hi), clamped to the row; ke < ks keeps nothing.
            int64_t lo = p.ks != nullptr ? static_cast<int64_t>(ptx::ld_global_nc(p.ks + i)) : 0;
            int64_t hi = ptx::ld_global_nc(p.ke + i);
            lo = lo < 0 ? 0 : (lo > cols ? cols : lo);
            hi = hi < lo ? lo : (hi > cols ? cols : hi);
            lo_of[threadIdx.x] = static_cast<int32_t>(lo);
            hi_of[threadIdx.x] = static_cast<int32_t>(hi);
        }
        bool has_long = false;
        if (threadIdx.x < count) has_long = is_long(0, lo_of[threadIdx.x]) || is_long(hi_of[threadIdx.x], cols);
        // (the barrier also publishes lo_of / hi_of)
        has_long = __syncthreads_or(has_long ? 1 : 0) != 0;
        if (has_long) {
            for (uint32_t i = threadIdx.x; i < kFillBytes / 4; i += kNumThreads) fill_words[i] = kNegInfWord;
            ptx::fence_proxy_async();  // the -inf buffer, written by these threads, before the bulk copies read it
            __syncthreads();
        }
        uint8_t* base = static_cast<uint8_t*>(p.logits);
#pragma unroll 1
        for (uint32_t r = 0; r < count; ++r) {
            uint8_t* row = base + static_cast<int64_t>(first + r) * p.stride * kElemBytes;
            const int32_t lo = lo_of[r], hi = hi_of[r];
            if (!is_long(0, lo)) fill_by_stores(row, 0, lo, threadIdx.x, kNumThreads);
            if (!is_long(hi, cols)) fill_by_stores(row, hi, cols, threadIdx.x, kNumThreads);
        }
        if (!has_long) return;
        const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const uint32_t fill_smem = ptx::smem_addr(fill_words);
#pragma unroll 1
        for (uint32_t r = warp; r < count; r += kNumWarps) {
            uint8_t* row = base + static_cast<int64_t>(first + r) * p.stride * kElemBytes;
            const int32_t lo = lo_of[r], hi = hi_of[r];
            if (is_long(0, lo)) fill_by_copies(row, 0, lo, fill_smem, lane);
            if (is_long(hi, cols)) fill_by_copies(row, hi, cols, fill_smem, lane);
        }
        // The copies read the buffer until they complete; the block's shared memory must outlive them. The full wait
        // (not .read) also has the writes done when the block exits.
        ptx::bulk_commit_group();
        ptx::bulk_wait_group<0>();
    }
};

}  // namespace tessera::sm90
