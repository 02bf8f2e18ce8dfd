// -inf outside each row's KV range: for row i of logits [rows, cols] (FP32 or BF16, rows `stride` elements apart),
// every column j in [0, cols) outside [ks[i], ke[i]) becomes -inf (ks absent: 0). The MQA logits kernel writes only
// the in-range entries, so the two kernels touch disjoint elements.
//
// A pure write stream, so the bytes leave through the TMA unit: the block fills kFillBytes of shared memory with -inf
// once, and a segment's 16-byte aligned body goes out as bulk copies of that buffer (cp.async.bulk, no tensor map),
// chunk c of a row's segment issued by lane c % 32 of the warp that owns the row; its unaligned edges (under 16 bytes
// each) are element stores. A block takes rows_per_block consecutive rows, warp w its rows w, w + kNumWarps, ...; the
// ranges of the block's rows are read once, up front. Each lane waits for its bulk copies before the block exits.
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

    TESSERA_DEVICE static void store_one(uint8_t* row, int64_t j) {
        if constexpr (kOutBf16) *reinterpret_cast<uint16_t*>(row + j * 2) = static_cast<uint16_t>(0xff80u);
        else *reinterpret_cast<uint32_t*>(row + j * 4) = kNegInfWord;
    }

    // -inf into elements [a, b) of `row`, by one warp: the aligned body as bulk copies of `fill` (lane c issues
    // chunks c, c + 32, ...), the unaligned edges by lanes' element stores.
    TESSERA_DEVICE static void fill(uint8_t* row, int64_t a, int64_t b, uint32_t fill_smem, uint32_t lane) {
        if (a >= b) return;
        const uint64_t addr = reinterpret_cast<uint64_t>(row) + static_cast<uint64_t>(a) * kElemBytes;
        // First element at a 16-byte boundary (the row base is element-aligned), and the aligned body's end.
        int64_t body = a + static_cast<int64_t>(((16 - (addr & 15u)) & 15u) / kElemBytes);
        body = body < b ? body : b;
        const int64_t body_end = body + (b - body) / kVecElems * kVecElems;
        const int64_t body_bytes = (body_end - body) * kElemBytes;
        // Not unrolled: the unrolled copies held 43 registers, which leaves 5 blocks of 256 threads per SM where the
        // grid is sized for 8 (32 registers at most).
#pragma unroll 1
        for (int64_t off = static_cast<int64_t>(lane) * kFillBytes; off < body_bytes; off += 32LL * kFillBytes) {
            const int64_t left = body_bytes - off;
            ptx::bulk_store(row + body * kElemBytes + off, fill_smem,
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
        const int64_t cols = p.cols;
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
        for (uint32_t i = threadIdx.x; i < kFillBytes / 4; i += kNumThreads) fill_words[i] = kNegInfWord;
        ptx::fence_proxy_async();  // the -inf buffer, written by these threads, before the bulk copies read it
        __syncthreads();
        const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const uint32_t fill_smem = ptx::smem_addr(fill_words);
        uint8_t* base = static_cast<uint8_t*>(p.logits);
        for (uint32_t r = warp; r < count; r += kNumWarps) {
            uint8_t* row = base + static_cast<int64_t>(first + r) * p.stride * kElemBytes;
            fill(row, 0, lo_of[r], fill_smem, lane);
            fill(row, hi_of[r], cols, fill_smem, lane);
        }
        // The copies read the buffer until they complete; the block's shared memory must outlive them. The full wait
        // (not .read) also has the writes done when the block exits.
        ptx::bulk_commit_group();
        ptx::bulk_wait_group<0>();
    }
};

}  // namespace tessera::sm90
