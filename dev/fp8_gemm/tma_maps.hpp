// 2D tensor maps for the standalone FP8 kernel harnesses in dev/fp8_gemm (gpu_smoke.cu, timeline_probe.cu), built
// as docs/fp8_gemm_kernel.md specifies; a failed encode prints and exits (../probe_check.hpp).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "../probe_check.hpp"

inline CUtensorMap make_map(CUtensorMapDataType type, void* ptr, uint64_t inner, uint64_t outer, uint64_t stride_bytes,
                            uint32_t box_inner, uint32_t box_outer, CUtensorMapSwizzle swizzle) {
    CUtensorMap map;
    const cuuint64_t dims[2] = {inner, outer};
    const cuuint64_t strides[1] = {stride_bytes};
    const cuuint32_t box[2] = {box_inner, box_outer};
    const cuuint32_t elem[2] = {1, 1};
    check(cuTensorMapEncodeTiled(&map, type, 2, ptr, dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          "cuTensorMapEncodeTiled");
    return map;
}

// The D store's swizzle from the kernel's kSwizzleDBytes.
inline CUtensorMapSwizzle swizzle_of(int bytes) {
    return bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
           : bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
           : bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                         : CU_TENSOR_MAP_SWIZZLE_NONE;
}
