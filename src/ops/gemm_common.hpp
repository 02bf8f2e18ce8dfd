// Host parts every SM90 GEMM op shares (FP8 and BF16, dense and grouped): the problem kinds, the 64-aligned tensor
// map holder and 2-D map helpers, the D store map, the parameter fields all kernels have, shape checks of the TMA
// maps, the contiguous layout's block rows and the SM count of a plan.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "ops/validate.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/layout.hpp"
#include "tessera/tensor.hpp"
#include <tessera/prims/gemm_kind.cuh>

namespace tessera::ops {

// The kernel's problem kinds: one definition, compiled by the kernels and here.
using GemmKind = prims::GemmKind;

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
inline std::int64_t align_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// One hash of a plan key's fields, for the plan caches' hash maps.
inline std::size_t hash_fields(std::initializer_list<std::int64_t> fields) {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (std::int64_t f : fields) {
        h ^= static_cast<std::uint64_t>(f) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h *= 0xbf58476d1ce4e5b9ULL;
    }
    return static_cast<std::size_t>(h ^ (h >> 31));
}

// The device side aligns descriptors to 64 bytes; CUDA 13's CUtensorMap is 128-aligned, so the bytes are copied into
// a 64-aligned holder to keep the two layouts identical.
struct alignas(64) TmaBytes {
    unsigned char bytes[128];
    TmaBytes& operator=(const CUtensorMap& map) {
        static_assert(sizeof(CUtensorMap) == sizeof(bytes));
        std::memcpy(bytes, &map, sizeof(bytes));
        return *this;
    }
};

runtime::TmaDesc2d map_2d(const void* base, CUtensorMapDataType type, int bytes, std::int64_t inner,
                          std::int64_t outer, std::int64_t stride_elems, int box_inner, int box_outer,
                          runtime::TmaSwizzle swizzle);

// The D map of a GEMM's tile stores: [M rows][N] BF16 or FP32 (d's dtype), boxes of box_n columns by 64 rows; a
// 3-D d [G, M, N] (groups packed) is mapped as [G*M rows][N].
CUtensorMap d_store_map(const TensorRef& d, int box_n, int swizzle_bytes);

// D = C + A·B ops: checks c against d (dtype, shape, device, row-major with rows evenly spaced) and, unless c is d
// itself, queues the copy of c into d on `stream`. Call it after every other check, so that a rejected call leaves d
// untouched.
void check_c(const char* op, const TensorRef& c, const TensorRef& d);
void copy_c_into_d(const TensorRef& c, const TensorRef& d, Stream stream);

// The parameter fields every GEMM kernel shares (its Params mirror has them under these names).
template <class P>
void set_gemm_dims(P& params, std::int64_t m, std::int64_t n, std::int64_t k, const TensorRef& d) {
    params.m = static_cast<std::uint32_t>(m);
    params.n = static_cast<std::uint32_t>(n);
    params.k = static_cast<std::uint32_t>(k);
    params.d = d.data;
    params.ld_d = static_cast<std::uint32_t>(d.stride(-2));
    params.num_groups = 1;
}

// The shapes the TMA maps take: K > 0 and a multiple of 16 (16-byte rows of A and B); N > 0 and a multiple of
// n_multiple (16-byte rows of D: 8 for BF16, 4 for FP32). `arg` names where the value came from: the GEMMs' 'a' and
// 'd', the config queries' 'k' and 'n'.
void check_tma_k(Arg arg, std::int64_t k);
void check_tma_n(Arg arg, std::int64_t n, int n_multiple);

// The per-row expert layout of the m-grouped contiguous GEMMs: a tile takes its expert from its first row, so tiles
// must not straddle segments: BLOCK_M divides get_mk_alignment_for_contiguous_layout() (128 or 64). Throws
// Unsupported naming `op` otherwise.
int contiguous_block_m(const char* op);

// The SMs a plan for `device` may use: set_num_sms's value (at most the device's count), else all of them. Reads
// no driver state, unlike get_num_sms(), which asks the driver for the calling thread's current device.
int plan_num_sms(int device);

}  // namespace tessera::ops
