#include "ops/gemm_common.hpp"

#include <algorithm>

#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"
#include "tessera/runtime.hpp"

namespace tessera::ops {

runtime::TmaDesc2d map_2d(const void* base, CUtensorMapDataType type, int bytes, std::int64_t inner,
                          std::int64_t outer, std::int64_t stride_elems, int box_inner, int box_outer,
                          runtime::TmaSwizzle swizzle) {
    runtime::TmaDesc2d m;
    m.base = base;
    m.dtype = type;
    m.element_bytes = bytes;
    m.inner = static_cast<std::uint64_t>(inner);
    m.outer = static_cast<std::uint64_t>(outer);
    m.outer_stride_bytes = static_cast<std::uint64_t>(stride_elems * bytes);
    m.box_inner = static_cast<std::uint32_t>(box_inner);
    m.box_outer = static_cast<std::uint32_t>(box_outer);
    m.swizzle = swizzle;
    return m;
}

CUtensorMap d_store_map(const TensorRef& d, int box_n, int swizzle_bytes) {
    const bool f32 = d.dtype == DType::kFloat32;
    const std::int64_t rows = d.ndim == 3 ? d.size(0) * d.size(1) : d.size(0);  // groups packed one after another
    return runtime::encode_tma_2d(map_2d(d.data, f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                                         f32 ? 4 : 2, d.size(-1), rows, d.stride(-2), box_n, 64,
                                         static_cast<runtime::TmaSwizzle>(swizzle_bytes)));
}

void check_tma_k(Arg arg, std::int64_t k) {
    TESSERA_CHECK(k > 0 && k % 16 == 0, arg.op, ": argument '", arg.name,
                  "': expected K > 0 and a multiple of 16 (TMA rows of 16 bytes), got K = ", k);
}

void check_tma_n(Arg arg, std::int64_t n, int n_multiple) {
    TESSERA_CHECK(n > 0 && n % n_multiple == 0, arg.op, ": argument '", arg.name, "': expected N > 0 and a multiple of ",
                  n_multiple, " (16-byte output rows), got N = ", n);
}

int contiguous_block_m(const char* op) {
    const int alignment = get_mk_alignment_for_contiguous_layout();
    const int block_m = alignment % 128 == 0 ? 128 : alignment % 64 == 0 ? 64 : 0;
    if (block_m == 0)
        throw Unsupported(detail::str_cat(op, ": the per-row expert layout needs segments aligned to a multiple of 64 "
                                          "rows (get_mk_alignment_for_contiguous_layout() = ", alignment,
                                          "); use 64, 128 or the psum layout"));
    return block_m;
}

int plan_num_sms(int device) {
    const int all = runtime::device_info(device).num_sms;
    const int set = options().num_sms;
    return set > 0 && set < all ? set : all;
}

namespace {

// Rows of a row-major 2-D or packed 3-D tensor, and their pitch in bytes.
std::int64_t rows_of(const TensorRef& t) { return t.ndim == 3 ? t.size(0) * t.size(1) : t.size(0); }

}  // namespace

void check_c(const char* op, const TensorRef& c, const TensorRef& d) {
    check_cuda({op, "c"}, c);
    check_same_device({op, "c"}, c, d, "d");
    check_dtype({op, "c"}, c, {d.dtype});
    TESSERA_CHECK(c.ndim == d.ndim, op, ": argument 'c': expected the shape of d, ", shape_string(d), ", got ",
                  shape_string(c));
    for (int i = 0; i < d.ndim; ++i)
        TESSERA_CHECK(c.size(i) == d.size(i), op, ": argument 'c': expected the shape of d, ", shape_string(d),
                      ", got ", shape_string(c));
    const bool packed = c.ndim == 2 || c.size(0) <= 1 || c.stride(0) == c.size(1) * c.stride(1);
    TESSERA_CHECK((c.stride(-1) == 1 || c.size(-1) <= 1) && packed, op,
                  ": argument 'c': expected row-major rows (stride(-1) == 1, groups packed), got strides ",
                  strides_string(c));
    if (c.data == d.data)
        for (int i = 0; i < d.ndim; ++i)
            TESSERA_CHECK(c.stride(i) == d.stride(i), op, ": argument 'c': shares storage with d but has strides ",
                          strides_string(c), ", d ", strides_string(d));
}

void copy_c_into_d(const TensorRef& c, const TensorRef& d, Stream stream) {
    if (c.data == d.data || d.numel() == 0) return;
    const std::int64_t elem = dtype_size(d.dtype);
    CUDA_MEMCPY2D copy{};
    copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.srcDevice = reinterpret_cast<CUdeviceptr>(c.data);
    const std::size_t width = static_cast<std::size_t>(d.size(-1) * elem);  // (a one-row tensor may carry any pitch)
    copy.srcPitch = std::max(width, static_cast<std::size_t>(c.stride(-2) * elem));
    copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.dstDevice = reinterpret_cast<CUdeviceptr>(d.data);
    copy.dstPitch = std::max(width, static_cast<std::size_t>(d.stride(-2) * elem));
    copy.WidthInBytes = width;
    copy.Height = static_cast<std::size_t>(rows_of(d));
    runtime::make_current(d.device.index);
    TESSERA_CU_CHECK(runtime::driver().cuMemcpy2DAsync(&copy, static_cast<CUstream>(stream)));
}

}  // namespace tessera::ops
