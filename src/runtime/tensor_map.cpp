// 2-D and 3-D tiled tensor-map encoding.
#include "runtime/tensor_map.hpp"

#include "runtime/driver.hpp"
#include "tessera/error.hpp"

namespace tessera::runtime {
namespace {

CUtensorMap encode_uncached(const TmaDesc2d& d, std::uint64_t depth = 1, std::uint64_t depth_stride_bytes = 0) {
    TESSERA_ASSERT(reinterpret_cast<std::uintptr_t>(d.base) % 16 == 0);
    TESSERA_ASSERT(d.outer_stride_bytes % 16 == 0);
    TESSERA_ASSERT(d.box_inner >= 1 && d.box_inner <= 256 && d.box_outer >= 1 && d.box_outer <= 256);
    CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    switch (d.swizzle) {
        case TmaSwizzle::kNone: break;
        case TmaSwizzle::k32B: swizzle = CU_TENSOR_MAP_SWIZZLE_32B; break;
        case TmaSwizzle::k64B: swizzle = CU_TENSOR_MAP_SWIZZLE_64B; break;
        case TmaSwizzle::k128B: swizzle = CU_TENSOR_MAP_SWIZZLE_128B; break;
    }
    CUtensorMap map{};
    const cuuint64_t dims[3] = {d.inner, d.outer, depth};
    // A single row needs a stride too; any 16-byte multiple at least one row long is accepted (likewise one repeat).
    const cuuint64_t row_bytes = (d.inner * d.element_bytes + 15) / 16 * 16;
    const cuuint64_t outer_stride =
        d.outer > 1 ? d.outer_stride_bytes : std::max<cuuint64_t>(d.outer_stride_bytes, row_bytes);
    // One repeat is never stepped over, so its stride is free: the caller's (a size-1 batch dimension may carry any
    // stride, not necessarily a 16-byte multiple) is replaced by the packed one, which the driver accepts.
    const cuuint64_t strides[2] = {outer_stride, depth > 1 ? depth_stride_bytes : outer_stride * d.outer};
    const cuuint32_t box[3] = {d.box_inner, d.box_outer, 1};
    const cuuint32_t elem_strides[3] = {1, 1, 1};
    const cuuint32_t rank = depth_stride_bytes > 0 || depth > 1 ? 3 : 2;
    TESSERA_ASSERT(depth == 1 || depth_stride_bytes % 16 == 0);
    TESSERA_CU_CHECK(driver().cuTensorMapEncodeTiled(&map, d.dtype, rank, const_cast<void*>(d.base), dims, strides, box,
                                                     elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return map;
}

std::size_t hash_of(const TmaDesc2d& d) {
    std::size_t h = reinterpret_cast<std::uintptr_t>(d.base) * 0x9e3779b97f4a7c15ULL;
    for (std::uint64_t v : {std::uint64_t(d.dtype), std::uint64_t(d.element_bytes), d.inner, d.outer,
                            d.outer_stride_bytes, std::uint64_t(d.box_inner) << 32 | d.box_outer,
                            std::uint64_t(d.swizzle)})
        h = (h ^ v) * 0xbf58476d1ce4e5b9ULL + (h >> 29);
    return h;
}

}  // namespace

CUtensorMap encode_tma_2d(const TmaDesc2d& d) {
    // Direct-mapped, per thread (no lock on the launch path). A hit needs every field equal, so a stale entry can
    // only be replaced, never returned for a different tensor.
    struct Entry {
        TmaDesc2d desc;
        CUtensorMap map;
        bool valid = false;
    };
    constexpr std::size_t kSlots = 64;
    thread_local Entry cache[kSlots];
    Entry& e = cache[hash_of(d) % kSlots];
    if (e.valid && e.desc == d) [[likely]] return e.map;
    const CUtensorMap map = encode_uncached(d);  // throws on invalid arguments: nothing is cached then
    e.desc = d;
    e.map = map;
    e.valid = true;
    return map;
}

CUtensorMap encode_tma_3d(const TmaDesc2d& desc, std::uint64_t depth, std::uint64_t depth_stride_bytes) {
    TESSERA_ASSERT(depth >= 1);
    // Rank 3 even for one repeat: the kernel addresses the map with three coordinates.
    const std::uint64_t stride = std::max<std::uint64_t>(depth_stride_bytes, 16);
    // Memoized like the 2-D maps (a decode step encodes the same batched maps once per layer).
    struct Entry {
        TmaDesc2d desc;
        std::uint64_t depth = 0, stride = 0;
        CUtensorMap map;
        bool valid = false;
    };
    constexpr std::size_t kSlots = 16;
    thread_local Entry cache[kSlots];
    Entry& e = cache[(hash_of(desc) ^ depth * 0x9e3779b97f4a7c15ULL ^ stride) % kSlots];
    if (e.valid && e.desc == desc && e.depth == depth && e.stride == stride) [[likely]] return e.map;
    const CUtensorMap map = encode_uncached(desc, depth, stride);
    e = {desc, depth, stride, map, true};
    return map;
}

}  // namespace tessera::runtime
