// A stand-in libcuda.so.1 for timing and profiling tessera's host path on a machine without a GPU (dev only, never
// installed): every entry point tessera resolves returns success at once, with the answers of one H200-like device
// (132 SMs, 227 KB of shared memory per block, 15 resident 8-CTA clusters). Kernels are compiled for real (NVRTC)
// and "loaded" as handles; launches do nothing. A kernel's parameter size is read from its cubin's .nv.info section,
// so tessera's parameter-size check runs as on the GPU. Built and used by dev/host_profile.sh.
#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

struct Library {
    const unsigned char* cubin;
};
struct Kernel {
    const unsigned char* cubin;
    std::string name;
};
int g_context_token = 0;

// EIATTR_KPARAM_INFO (attribute 0x17, format 0x04, 12 bytes) of ".nv.info.<name>": u32 index, u16 ordinal,
// u16 offset, u32 whose bits 18..31 hold the parameter's size in bytes. These records come first in the section.
std::size_t param_bytes_from_cubin(const unsigned char* elf, const std::string& name, std::size_t ordinal) {
    if (std::memcmp(elf, "\177ELF", 4) != 0 || elf[4] != 2) return 0;
    std::uint64_t shoff;
    std::uint16_t shentsize, shnum, shstrndx;
    std::memcpy(&shoff, elf + 0x28, 8);
    std::memcpy(&shentsize, elf + 0x3a, 2);
    std::memcpy(&shnum, elf + 0x3c, 2);
    std::memcpy(&shstrndx, elf + 0x3e, 2);
    const auto section = [&](int i, std::uint32_t* name_off, std::uint64_t* off, std::uint64_t* size) {
        const unsigned char* sh = elf + shoff + static_cast<std::uint64_t>(i) * shentsize;
        std::memcpy(name_off, sh, 4);
        std::memcpy(off, sh + 0x18, 8);
        std::memcpy(size, sh + 0x20, 8);
    };
    std::uint32_t n;
    std::uint64_t str_off, str_size;
    section(shstrndx, &n, &str_off, &str_size);
    const std::string want = ".nv.info." + name;
    for (int i = 0; i < shnum; ++i) {
        std::uint64_t off, size;
        section(i, &n, &off, &size);
        if (want != reinterpret_cast<const char*>(elf + str_off + n)) continue;
        for (std::uint64_t p = off; p + 4 <= off + size && elf[p] == 0x04;) {
            std::uint16_t len;
            std::memcpy(&len, elf + p + 2, 2);
            if (elf[p + 1] == 0x17 && len == 12) {
                std::uint16_t ord;
                std::uint32_t bits;
                std::memcpy(&ord, elf + p + 8, 2);
                std::memcpy(&bits, elf + p + 12, 4);
                if (ord == ordinal) return bits >> 18;
            }
            p += 4 + len;
        }
    }
    return 0;
}

CUresult ok() { return CUDA_SUCCESS; }

CUresult s_cuInit(unsigned) { return ok(); }
CUresult s_cuDriverGetVersion(int* v) { *v = 13000; return ok(); }
CUresult s_cuDeviceGetCount(int* c) { *c = 1; return ok(); }
CUresult s_cuDeviceGet(CUdevice* d, int) { *d = 0; return ok(); }
CUresult s_cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
    switch (a) {
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
        case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
        default: *v = 0;
    }
    return ok();
}
CUresult s_cuDeviceGetName(char* name, int len, CUdevice) { std::strncpy(name, "host stub (no GPU)", len); return ok(); }
CUresult s_cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) { *c = reinterpret_cast<CUcontext>(&g_context_token); return ok(); }
CUresult s_cuCtxGetCurrent(CUcontext* c) { *c = reinterpret_cast<CUcontext>(&g_context_token); return ok(); }
CUresult s_cuCtxSetCurrent(CUcontext) { return ok(); }
CUresult s_cuCtxGetDevice(CUdevice* d) { *d = 0; return ok(); }
CUresult s_cuCtxSynchronize() { return ok(); }
CUresult s_cuLibraryLoadData(CUlibrary* lib, const void* code, CUjit_option*, void**, unsigned, CUlibraryOption*,
                             void**, unsigned) {
    *lib = reinterpret_cast<CUlibrary>(new Library{static_cast<const unsigned char*>(code)});
    return ok();
}
CUresult s_cuLibraryUnload(CUlibrary lib) { delete reinterpret_cast<Library*>(lib); return ok(); }
CUresult s_cuLibraryGetKernel(CUkernel* k, CUlibrary lib, const char* name) {
    *k = reinterpret_cast<CUkernel>(new Kernel{reinterpret_cast<Library*>(lib)->cubin, name});
    return ok();
}
CUresult s_cuKernelSetAttribute(CUfunction_attribute, int, CUkernel, CUdevice) { return ok(); }
CUresult s_cuKernelGetAttribute(int* v, CUfunction_attribute, CUkernel, CUdevice) { *v = 0; return ok(); }
CUresult s_cuKernelGetParamInfo(CUkernel k, std::size_t index, std::size_t* offset, std::size_t* size) {
    const Kernel* kernel = reinterpret_cast<Kernel*>(k);
    *offset = 0;
    *size = param_bytes_from_cubin(kernel->cubin, kernel->name, index);
    return ok();
}
CUresult s_cuLaunchKernelEx(const CUlaunchConfig*, CUfunction, void**, void**) { return ok(); }
CUresult s_cuOccupancyMaxActiveClusters(int* n, CUfunction, const CUlaunchConfig* c) {
    unsigned size = 1;
    for (unsigned i = 0; i < c->numAttrs; ++i)
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) size = c->attrs[i].value.clusterDim.x;
    *n = size >= 8 ? 15 : size >= 4 ? 30 : 132 / size;
    return ok();
}
CUresult s_cuKernelGetFunction(CUfunction* f, CUkernel k) { *f = reinterpret_cast<CUfunction>(k); return ok(); }
CUresult s_cuTensorMapEncodeTiled(CUtensorMap* m, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                  const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
    std::memset(m, 0, sizeof(*m));
    return ok();
}
CUresult s_cuGetErrorName(CUresult, const char** s) { *s = "CUDA_ERROR_STUB"; return ok(); }
CUresult s_cuGetErrorString(CUresult, const char** s) { *s = "host stub"; return ok(); }
// Device memory is host memory (never touched by the stub's kernels; large buffers stay virtual).
CUresult s_cuMemAlloc(CUdeviceptr* p, std::size_t bytes) {
    *p = reinterpret_cast<CUdeviceptr>(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
    return *p ? ok() : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult s_cuMemFree(CUdeviceptr p) { std::free(reinterpret_cast<void*>(p)); return ok(); }
CUresult s_cuMemcpyHtoD(CUdeviceptr d, const void* s, std::size_t n) { std::memcpy(reinterpret_cast<void*>(d), s, n); return ok(); }
CUresult s_cuMemcpyDtoH(void* d, CUdeviceptr s, std::size_t n) { std::memcpy(d, reinterpret_cast<void*>(s), n); return ok(); }
CUresult s_cuMemsetD8Async(CUdeviceptr, unsigned char, std::size_t, CUstream) { return ok(); }
CUresult s_cuMemsetD32Async(CUdeviceptr, unsigned, std::size_t, CUstream) { return ok(); }
CUresult s_cuStreamIsCapturing(CUstream, CUstreamCaptureStatus* status) {
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    return ok();
}
CUresult s_cuStreamCreate(CUstream* s, unsigned) { *s = reinterpret_cast<CUstream>(&g_context_token); return ok(); }
CUresult s_cuStreamDestroy(CUstream) { return ok(); }
CUresult s_cuStreamSynchronize(CUstream) { return ok(); }
CUresult s_cuEventCreate(CUevent* e, unsigned) { *e = reinterpret_cast<CUevent>(&g_context_token); return ok(); }
CUresult s_cuEventRecord(CUevent, CUstream) { return ok(); }
CUresult s_cuEventSynchronize(CUevent) { return ok(); }
CUresult s_cuEventElapsedTime(float* ms, CUevent, CUevent) { *ms = 0.001f; return ok(); }
CUresult s_cuEventDestroy(CUevent) { return ok(); }

struct Entry {
    const char* name;
    void* fn;
};
#define STUB(name) {#name, reinterpret_cast<void*>(&s_##name)}
const Entry kEntries[] = {
    STUB(cuInit), STUB(cuDriverGetVersion), STUB(cuDeviceGetCount), STUB(cuDeviceGet), STUB(cuDeviceGetAttribute),
    STUB(cuDeviceGetName), STUB(cuDevicePrimaryCtxRetain), STUB(cuCtxGetCurrent), STUB(cuCtxSetCurrent),
    STUB(cuCtxGetDevice), STUB(cuCtxSynchronize), STUB(cuLibraryLoadData), STUB(cuLibraryUnload),
    STUB(cuLibraryGetKernel), STUB(cuKernelSetAttribute), STUB(cuKernelGetAttribute), STUB(cuKernelGetParamInfo),
    STUB(cuLaunchKernelEx), STUB(cuOccupancyMaxActiveClusters), STUB(cuKernelGetFunction),
    STUB(cuTensorMapEncodeTiled), STUB(cuGetErrorName), STUB(cuGetErrorString), STUB(cuMemAlloc), STUB(cuMemFree),
    STUB(cuMemcpyHtoD), STUB(cuMemcpyDtoH), STUB(cuMemsetD8Async), STUB(cuMemsetD32Async), STUB(cuStreamCreate),
    STUB(cuStreamDestroy), STUB(cuStreamSynchronize), STUB(cuStreamIsCapturing), STUB(cuEventCreate), STUB(cuEventRecord),
    STUB(cuEventSynchronize), STUB(cuEventElapsedTime), STUB(cuEventDestroy)};
#undef STUB

}  // namespace

extern "C" CUresult cuGetProcAddress_v2(const char* symbol, void** fn, int, cuuint64_t,
                                        CUdriverProcAddressQueryResult* status) {
    for (const Entry& e : kEntries)
        if (std::string_view(symbol) == e.name) {
            *fn = e.fn;
            if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
            return CUDA_SUCCESS;
        }
    *fn = nullptr;
    if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}
