// -inf outside each row's KV range: for row i of logits [rows, cols] (FP32 or BF16, rows `stride` elements apart),
// every column j in [0, cols) outside [ks[i], ke[i]) becomes -inf (ks absent: 0). The MQA logits kernel writes only
// the in-range entries, so the two kernels touch disjoint elements.
//
// A block takes rows_per_block consecutive rows; all its threads write one row's two segments,
// [0, lo) and [hi, cols), with 16-byte vector stores over the aligned body and single-element stores at the edges.
// The ranges of the block's rows are read once, up front, so their latency is paid once per block.
#pragma once

#include <tessera/common.cuh>
#include <tessera/ptx/memory.cuh>

namespace tessera::sm90 {

// Config members: kOutBf16 (BF16 logits, else FP32), kNumThreads.
template <class Config>
struct CleanLogitsKernel {
    static constexpr bool kOutBf16 = Config::kOutBf16 != 0;
    static constexpr int kNumThreads = Config::kNumThreads;
    static constexpr int kElemBytes = kOutBf16 ? 2 : 4;
    static constexpr int kVecElems = 16 / kElemBytes;
    static constexpr int kMaxRowsPerBlock = 64;
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

    // -inf into elements [a, b) of `row`.
    TESSERA_DEVICE static void fill(uint8_t* row, int64_t a, int64_t b) {
        if (a >= b) return;
        const uint64_t addr = reinterpret_cast<uint64_t>(row) + static_cast<uint64_t>(a) * kElemBytes;
        // First element at a 16-byte boundary (the row base is element-aligned), and the aligned body's end.
        int64_t body = a + static_cast<int64_t>(((16 - (addr & 15u)) & 15u) / kElemBytes);
        body = body < b ? body : b;
        const int64_t body_end = body + (b - body) / kVecElems * kVecElems;
        const int64_t tid = threadIdx.x;
        for (int64_t j = body + tid * kVecElems; j < body_end; j += static_cast<int64_t>(kNumThreads) * kVecElems) {
            ptx::st_global_v4_b32(row + j * kElemBytes, kNegInfWord, kNegInfWord, kNegInfWord, kNegInfWord);
        }
        if (tid < body - a) store_one(row, a + tid);
        if (tid < b - body_end) store_one(row, body_end + tid);
    }

    static __device__ void run(const Params& p) {
        __shared__ int32_t lo_of[kMaxRowsPerBlock], hi_of[kMaxRowsPerBlock];
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
        __syncthreads();
        uint8_t* base = static_cast<uint8_t*>(p.logits);
        for (uint32_t r = 0; r < count; ++r) {
            uint8_t* row = base + static_cast<int64_t>(first + r) * p.stride * kElemBytes;
            fill(row, 0, lo_of[r]);
            fill(row, hi_of[r], cols);
        }
    }
};

}  // namespace tessera::sm90
