// The CUDA driver API, loaded at first use with dlopen + cuGetProcAddress, so that libtessera, the Python package
// and the CPU tests load on machines with no GPU and no driver. Calling into it there raises CudaError
// ("no CUDA driver: ..."), never a crash.
#pragma once

#include <cuda.h>

namespace tessera::runtime {

// X-macro list of every driver entry point tessera uses.
#define TESSERA_DRIVER_FUNCTIONS(X) \
    X(cuInit)                       \
    X(cuDriverGetVersion)           \
    X(cuDeviceGetCount)             \
    X(cuDeviceGet)                  \
    X(cuDeviceGetAttribute)         \
    X(cuDeviceGetName)              \
    X(cuDevicePrimaryCtxRetain)     \
    X(cuCtxGetCurrent)              \
    X(cuCtxSetCurrent)              \
    X(cuCtxGetDevice)               \
    X(cuCtxSynchronize)             \
    X(cuLibraryLoadData)            \
    X(cuLibraryUnload)              \
    X(cuLibraryGetKernel)           \
    X(cuKernelSetAttribute)         \
    X(cuKernelGetAttribute)         \
    X(cuKernelGetParamInfo)         \
    X(cuLaunchKernelEx)             \
    X(cuOccupancyMaxActiveClusters) \
    X(cuKernelGetFunction)          \
    X(cuTensorMapEncodeTiled)       \
    X(cuGetErrorName)               \
    X(cuGetErrorString)             \
    X(cuMemAlloc)                   \
    X(cuMemFree)                    \
    X(cuMemAllocAsync)              \
    X(cuMemFreeAsync)               \
    X(cuMemcpyHtoD)                 \
    X(cuMemcpyDtoH)                 \
    X(cuMemsetD8Async)              \
    X(cuMemcpy2DAsync)              \
    X(cuMemsetD32Async)             \
    X(cuStreamCreate)               \
    X(cuStreamDestroy)              \
    X(cuStreamSynchronize)          \
    X(cuStreamIsCapturing)          \
    X(cuEventCreate)                \
    X(cuEventRecord)                \
    X(cuEventSynchronize)           \
    X(cuEventElapsedTime)           \
    X(cuEventDestroy)

struct Driver {
#define TESSERA_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
    TESSERA_DRIVER_FUNCTIONS(TESSERA_DECLARE_POINTER)
#undef TESSERA_DECLARE_POINTER
};

// The loaded driver (cuInit done). Throws CudaError when libcuda or a device is missing.
const Driver& driver();

// True when a driver with at least one device is present; never throws.
bool driver_available() noexcept;

// Throws CudaError "<what>: <ERROR_NAME> (<description>)" when result is not CUDA_SUCCESS.
void check_cu(CUresult result, const char* what);

}  // namespace tessera::runtime

#define TESSERA_CU_CHECK(call) ::tessera::runtime::check_cu((call), #call)
