// TensorRef: a non-owning view of a strided tensor (DLPack-shaped), the only tensor type of the C++ API.
// Shapes and strides are in elements. Packed FP4 is described as bytes (two values per byte).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace tessera {

enum class DType : std::uint8_t {
    kFloat8E4M3,
    kFloat8E5M2,
    kBFloat16,
    kFloat16,
    kFloat32,
    kFloat64,
    kInt32,
    kInt64,
    kUInt8,
    kInt8,
    kPackedFp4,  // e2m1 x2 per byte, stored as int8/uint8 bytes
};

std::string_view dtype_name(DType dtype) noexcept;
int dtype_size(DType dtype) noexcept;  // bytes per stored element

enum class DeviceKind : std::uint8_t { kCpu, kCuda, kOther };

struct Device {
    DeviceKind kind = DeviceKind::kCpu;
    int index = 0;
    bool operator==(const Device&) const = default;
};

inline constexpr int kMaxDims = 4;

struct TensorRef {
    void* data = nullptr;
    DType dtype = DType::kFloat32;
    int ndim = 0;
    std::array<std::int64_t, kMaxDims> shape{};
    std::array<std::int64_t, kMaxDims> strides{};
    Device device{};

    // Negative indices count from the back, as in PyTorch.
    std::int64_t size(int dim) const noexcept { return shape[dim < 0 ? dim + ndim : dim]; }
    std::int64_t stride(int dim) const noexcept { return strides[dim < 0 ? dim + ndim : dim]; }
    std::int64_t numel() const noexcept;
    bool is_contiguous() const noexcept;  // row-major packed (size-1 dims ignored)
};

// A TensorRef built from explicit values (tests, C++ callers). Strides default to row-major contiguous.
TensorRef make_tensor_ref(void* data, DType dtype, std::initializer_list<std::int64_t> shape, Device device,
                          std::initializer_list<std::int64_t> strides = {});

}  // namespace tessera
