// Facts about a CUDA device, read once from the driver and cached; and making a device's primary context current.
#pragma once

#include <string>

namespace tessera::runtime {

struct DeviceInfo {
    int index = 0;
    int cc_major = 0;
    int cc_minor = 0;
    int num_sms = 0;
    int max_smem_per_block = 0;  // opt-in dynamic shared memory limit, bytes
    int l2_bytes = 0;
    std::string name;
};

// Cached per device; throws CudaError without a driver or when the index is out of range.
const DeviceInfo& device_info(int index);

// Makes the primary context of device `index` current on this thread (what PyTorch and the runtime API use).
// Cheap when it already is.
void make_current(int index);

// Number of devices, 0 when there is no driver.
int device_count() noexcept;

}  // namespace tessera::runtime
