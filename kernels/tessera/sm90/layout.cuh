// Scale-factor layout kernels (memory-bound, no tensor cores):
//   TransposeFp32Kernel      FP32 [B, MN, SFK] any strides -> MN-major TMA-aligned: out[b][k][m] at
//                            b*SFK*align(MN,4) + k*align(MN,4) + m; the padding rows m in [MN, align(MN,4)) get 0.
//   PackUe8m0Kernel          FP32 [B, MN, SFK] any strides, values non-negative powers of two -> int32
//                            [B, MN, ceil(SFK/4)] MN-major TMA-aligned; byte i of int j = exponent of sf[.., 4j+i],
//                            missing K entries and rows in psum gaps are zero bytes.
//   PackUe8m0KGroupedKernel  FP32 [sum_g ceil(k_g/gran_k), MN] contiguous -> int32 [rows_out, MN] contiguous, each
//                            group's scale rows packed four per int within the group.
// A value that is not a non-negative power of two (sign or mantissa bits set) increments *error_count, so the host
// can refuse the result instead of silently truncating it.
// All shapes are run-time values: one compiled kernel serves every shape.
#pragma once

#include <tessera/common.cuh>

namespace tessera::sm90 {

namespace layout_detail {

TESSERA_DEVICE uint32_t float_bits(float x) { return __float_as_uint(x); }

// The UE8M0 byte of a non-negative power of two (or zero); flags anything else.
TESSERA_DEVICE uint32_t ue8m0_byte(float x, int32_t* error_count) {
    const uint32_t bits = float_bits(x);
    if ((bits & 0x807fffffu) != 0u && error_count != nullptr) atomicAdd(error_count, 1);
    return (bits >> 23) & 0xffu;
}

// Whether row m holds data under a psum layout (cumulative group ends, groups starting at aligned offsets).
TESSERA_DEVICE bool row_in_psum_group(uint32_t m, const int32_t* psum, uint32_t num_groups, uint32_t alignment) {
    uint32_t lo = 0, hi = num_groups;  // first g with end_g > m
    while (lo < hi) {
        const uint32_t mid = (lo + hi) / 2;
        if (static_cast<uint32_t>(psum[mid]) > m) hi = mid;
        else lo = mid + 1;
    }
    if (lo == num_groups) return false;
    const uint32_t start = lo == 0 ? 0u : align_up(static_cast<uint32_t>(psum[lo - 1]), alignment);
    return m >= start;
}

}  // namespace layout_detail

struct StridedSfParams {
    const float* in;
    int64_t in_stride_batch;  // elements
    int64_t in_stride_mn;
    int64_t in_stride_k;
    uint32_t mn;
    uint32_t sf_k;
    uint32_t batches;
};

template <class Config>
struct TransposeFp32Kernel {
    static constexpr int kTile = Config::kTile;  // square tile of (m, k) staged through shared memory
    static constexpr int kNumThreads = kTile * 8;
    static_assert(kTile == 32, "the shared-memory transpose assumes one warp spans a tile row");

    struct Params {
        StridedSfParams src;
        float* out;
    };

    // grid = (ceil(align(MN,4)/kTile), ceil(SFK/kTile), batches). Reads walk k fastest (coalesced for the usual
    // K-major input), writes walk m fastest (coalesced output).
    static __device__ void run(const Params& p) {
        __shared__ float tile[kTile][kTile + 1];  // +1 column: no bank conflicts on the transposed read
        const uint32_t aligned_mn = align_up(p.src.mn, 4u);
        const uint32_t m0 = blockIdx.x * kTile, k0 = blockIdx.y * kTile, b = blockIdx.z;
        const uint32_t lane = threadIdx.x % 32, row = threadIdx.x / 32;
        const float* in = p.src.in + b * p.src.in_stride_batch;
        for (uint32_t r = row; r < kTile; r += kNumThreads / 32) {
            const uint32_t m = m0 + r, k = k0 + lane;
            float v = 0.0f;
            if (m < p.src.mn && k < p.src.sf_k) v = in[m * p.src.in_stride_mn + k * p.src.in_stride_k];
            tile[r][lane] = v;
        }
        __syncthreads();
        float* out = p.out + static_cast<int64_t>(b) * p.src.sf_k * aligned_mn;
        for (uint32_t r = row; r < kTile; r += kNumThreads / 32) {
            const uint32_t k = k0 + r, m = m0 + lane;
            if (k < p.src.sf_k && m < aligned_mn) out[static_cast<int64_t>(k) * aligned_mn + m] = tile[lane][r];
        }
    }
};

template <class Config>
struct PackUe8m0Kernel {
    static constexpr int kNumThreads = Config::kNumThreads;

    struct Params {
        StridedSfParams src;
        int32_t* out;
        const int32_t* psum_layout;  // nullptr: every row is data
        uint32_t num_groups;
        uint32_t alignment;
        int32_t* error_count;  // nullptr: no check
    };

    // One thread per output int; m fastest for coalesced writes. grid = (ceil(align(MN,4)*ceil(SFK/4)/threads), B).
    static __device__ void run(const Params& p) {
        const uint32_t aligned_mn = align_up(p.src.mn, 4u);
        const uint32_t packed_k = ceil_div(p.src.sf_k, 4u);
        const uint64_t idx = static_cast<uint64_t>(blockIdx.x) * kNumThreads + threadIdx.x;
        if (idx >= static_cast<uint64_t>(aligned_mn) * packed_k) return;
        const uint32_t m = static_cast<uint32_t>(idx % aligned_mn), j = static_cast<uint32_t>(idx / aligned_mn);
        const uint32_t b = blockIdx.y;
        uint32_t word = 0;
        const bool live = m < p.src.mn && (p.psum_layout == nullptr ||
                                           layout_detail::row_in_psum_group(m, p.psum_layout, p.num_groups, p.alignment));
        if (live) {
            const float* in = p.src.in + b * p.src.in_stride_batch + m * p.src.in_stride_mn;
#pragma unroll
            for (uint32_t i = 0; i < 4; ++i) {
                const uint32_t k = 4 * j + i;
                if (k < p.src.sf_k) word |= layout_detail::ue8m0_byte(in[k * p.src.in_stride_k], p.error_count) << (8 * i);
            }
        }
        p.out[static_cast<int64_t>(b) * packed_k * aligned_mn + static_cast<int64_t>(j) * aligned_mn + m] =
            static_cast<int32_t>(word);
    }
};

template <class Config>
struct PackUe8m0KGroupedKernel {
    static constexpr int kNumThreads = Config::kNumThreads;

    struct Params {
        const float* in;              // [sum_g ceil(k_g/gran_k), mn] contiguous
        int32_t* out;                 // [rows_out, mn] contiguous
        const int32_t* grouped_layout;  // [num_groups] per-group K, or cumulative K ends when use_psum
        uint32_t num_groups;
        uint32_t mn;
        uint32_t rows_out;
        uint32_t gran_k;
        uint32_t k_alignment;
        uint32_t use_psum;
        int32_t* error_count;
    };

    // One thread per output int, mn fastest; each thread walks the (at most 128) groups to find its own.
    static __device__ void run(const Params& p) {
        const uint64_t idx = static_cast<uint64_t>(blockIdx.x) * kNumThreads + threadIdx.x;
        if (idx >= static_cast<uint64_t>(p.rows_out) * p.mn) return;
        const uint32_t n = static_cast<uint32_t>(idx % p.mn), row = static_cast<uint32_t>(idx / p.mn);
        uint32_t in_row = 0, out_row = 0, prev_end = 0;
        uint32_t word = 0;
        for (uint32_t g = 0; g < p.num_groups; ++g) {
            uint32_t k_g = static_cast<uint32_t>(p.grouped_layout[g]);
            if (p.use_psum) {
                const uint32_t start = align_up(prev_end, p.k_alignment);
                prev_end = k_g;
                k_g = k_g > start ? k_g - start : 0u;
            }
            const uint32_t in_rows = ceil_div(k_g, p.gran_k), out_rows = ceil_div(in_rows, 4u);
            if (row < out_row + out_rows) {
                const uint32_t j = row - out_row;
#pragma unroll
                for (uint32_t i = 0; i < 4; ++i) {
                    const uint32_t r = 4 * j + i;
                    if (r < in_rows)
                        word |= layout_detail::ue8m0_byte(p.in[static_cast<int64_t>(in_row + r) * p.mn + n],
                                                          p.error_count) << (8 * i);
                }
                break;
            }
            in_row += in_rows;
            out_row += out_rows;
        }
        p.out[idx] = static_cast<int32_t>(word);
    }
};

}  // namespace tessera::sm90
