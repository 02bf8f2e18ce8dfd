// DeviceBuffer and synchronize (tessera/runtime.hpp) over the driver API.
#include <cuda.h>

#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "tessera/error.hpp"
#include "tessera/runtime.hpp"

namespace tessera {

DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : bytes_(bytes), device_(device) {
    const int count = runtime::device_count();
    TESSERA_CHECK(device >= 0 && device < count, "DeviceBuffer: argument 'device': expected 0 <= device < ", count,
                  " (the GPUs the driver sees), got ", device);
    runtime::make_current(device);
    CUdeviceptr ptr = 0;
    if (bytes > 0) TESSERA_CU_CHECK(runtime::driver().cuMemAlloc(&ptr, bytes));
    data_ = reinterpret_cast<void*>(ptr);
}

DeviceBuffer::~DeviceBuffer() {
    if (data_ != nullptr) runtime::driver().cuMemFree(reinterpret_cast<CUdeviceptr>(data_));
}

void DeviceBuffer::fill_async(std::uint32_t word, Stream stream) const {
    TESSERA_CHECK(bytes_ % 4 == 0, "DeviceBuffer::fill_async: expected a size that is a multiple of 4 bytes, got ",
                  bytes_);
    if (bytes_ == 0) return;
    runtime::make_current(device_);
    TESSERA_CU_CHECK(runtime::driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(data_), word, bytes_ / 4,
                                                       static_cast<CUstream>(stream)));
}

void synchronize(Stream stream) {
    TESSERA_CU_CHECK(runtime::driver().cuStreamSynchronize(static_cast<CUstream>(stream)));
}

}  // namespace tessera
