// Device facts and primary-context handling.
#include "runtime/device.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include "runtime/driver.hpp"
#include "tessera/error.hpp"

namespace tessera::runtime {
namespace {

constexpr int kMaxDevices = 64;

struct DeviceSlot {
    std::once_flag once;
    DeviceInfo info;
    CUcontext primary = nullptr;
};

std::array<DeviceSlot, kMaxDevices>& slots() {
    static std::array<DeviceSlot, kMaxDevices> instance;
    return instance;
}

DeviceSlot& slot(int index) {
    const Driver& d = driver();
    static const int count = [&] {
        int n = 0;
        TESSERA_CU_CHECK(d.cuDeviceGetCount(&n));
        return n < kMaxDevices ? n : kMaxDevices;
    }();
    TESSERA_CHECK(index >= 0 && index < count, "device index: expected 0 <= index < ", count, ", got ", index);
    DeviceSlot& s = slots()[index];
    std::call_once(s.once, [&] {
        CUdevice dev = 0;
        TESSERA_CU_CHECK(d.cuDeviceGet(&dev, index));
        auto attr = [&](CUdevice_attribute a) {
            int v = 0;
            TESSERA_CU_CHECK(d.cuDeviceGetAttribute(&v, a, dev));
            return v;
        };
        s.info.index = index;
        s.info.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        s.info.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        s.info.num_sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
        s.info.max_smem_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
        s.info.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
        char name[256] = {};
        TESSERA_CU_CHECK(d.cuDeviceGetName(name, sizeof(name), dev));
        s.info.name = name;
        TESSERA_CU_CHECK(d.cuDevicePrimaryCtxRetain(&s.primary, dev));
    });
    return s;
}

}  // namespace

const DeviceInfo& device_info(int index) { return slot(index).info; }

void make_current(int index) {
    const DeviceSlot& s = slot(index);
    const Driver& d = driver();
    CUcontext current = nullptr;
    TESSERA_CU_CHECK(d.cuCtxGetCurrent(&current));
    if (current != s.primary) TESSERA_CU_CHECK(d.cuCtxSetCurrent(s.primary));
}

int device_count() noexcept {
    if (!driver_available()) return 0;
    int count = 0;
    if (driver().cuDeviceGetCount(&count) != CUDA_SUCCESS) return 0;
    return count;
}

}  // namespace tessera::runtime
