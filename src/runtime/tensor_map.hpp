// TMA descriptors: a 2-D (or batched 3-D) tiled CUtensorMap from plain numbers, with the argument checks the driver would otherwise
// answer with a bare CUDA_ERROR_INVALID_VALUE.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace tessera::runtime {

enum class TmaSwizzle { kNone = 0, k32B = 32, k64B = 64, k128B = 128 };

struct TmaDesc2d {
    const void* base = nullptr;
    CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    int element_bytes = 1;
    std::uint64_t inner = 0, outer = 0;  // elements
    std::uint64_t outer_stride_bytes = 0;
    std::uint32_t box_inner = 0, box_outer = 0;
    TmaSwizzle swizzle = TmaSwizzle::kNone;
    bool operator==(const TmaDesc2d&) const = default;
};

// Encodes with interleave none, L2 promotion 256B and zero fill out of bounds (the kernels rely on it). The map is a
// pure function of `desc`, so results are memoized per thread: a cached GEMM call re-encodes nothing.
CUtensorMap encode_tma_2d(const TmaDesc2d& desc);

// The 2-D map `desc` repeated `depth` times, depth_stride_bytes apart (a 16-byte multiple): the third coordinate
// picks the repeat, boxes are one repeat deep. Memoized per thread as encode_tma_2d.
CUtensorMap encode_tma_3d(const TmaDesc2d& desc, std::uint64_t depth, std::uint64_t depth_stride_bytes);

}  // namespace tessera::runtime
