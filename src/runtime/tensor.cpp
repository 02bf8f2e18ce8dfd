// TensorRef helpers.
#include "tessera/tensor.hpp"

#include "tessera/error.hpp"

namespace tessera {

std::string_view dtype_name(DType dtype) noexcept {
    switch (dtype) {
        case DType::kFloat8E4M3: return "float8_e4m3fn";
        case DType::kFloat8E5M2: return "float8_e5m2";
        case DType::kBFloat16: return "bfloat16";
        case DType::kFloat16: return "float16";
        case DType::kFloat32: return "float32";
        case DType::kFloat64: return "float64";
        case DType::kInt32: return "int32";
        case DType::kInt64: return "int64";
        case DType::kUInt8: return "uint8";
        case DType::kInt8: return "int8";
        case DType::kPackedFp4: return "packed_fp4";
    }
    return "unknown";
}

int dtype_size(DType dtype) noexcept {
    switch (dtype) {
        case DType::kFloat8E4M3:
        case DType::kFloat8E5M2:
        case DType::kUInt8:
        case DType::kInt8:
        case DType::kPackedFp4: return 1;
        case DType::kBFloat16:
        case DType::kFloat16: return 2;
        case DType::kFloat32:
        case DType::kInt32: return 4;
        case DType::kFloat64:
        case DType::kInt64: return 8;
    }
    return 0;
}

std::int64_t TensorRef::numel() const noexcept {
    std::int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
}

bool TensorRef::is_contiguous() const noexcept {
    std::int64_t expected = 1;
    for (int i = ndim - 1; i >= 0; --i) {
        if (shape[i] != 1 && strides[i] != expected) return false;
        expected *= shape[i];
    }
    return true;
}

TensorRef make_tensor_ref(void* data, DType dtype, std::initializer_list<std::int64_t> shape, Device device,
                          std::initializer_list<std::int64_t> strides) {
    TESSERA_CHECK(shape.size() <= static_cast<std::size_t>(kMaxDims), "make_tensor_ref: expected at most ", kMaxDims,
                  " dims, got ", shape.size());
    TESSERA_CHECK(strides.size() == 0 || strides.size() == shape.size(), "make_tensor_ref: expected ", shape.size(),
                  " strides, got ", strides.size());
    TensorRef t;
    t.data = data;
    t.dtype = dtype;
    t.ndim = static_cast<int>(shape.size());
    t.device = device;
    int i = 0;
    for (std::int64_t s : shape) t.shape[i++] = s;
    if (strides.size()) {
        i = 0;
        for (std::int64_t s : strides) t.strides[i++] = s;
    } else {
        std::int64_t stride = 1;
        for (int d = t.ndim - 1; d >= 0; --d) {
            t.strides[d] = stride;
            stride *= t.shape[d];
        }
    }
    return t;
}

}  // namespace tessera
