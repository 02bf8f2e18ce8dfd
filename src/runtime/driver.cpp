// Lazy loading of libcuda: dlopen once, resolve every entry point through cuGetProcAddress for the ABI of the
// headers we were built with.
#include "runtime/driver.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <string_view>

#include "tessera/error.hpp"

namespace tessera::runtime {
namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

// cuGetProcAddress returns the newest ABI of an entry point for the version asked. Where CUDA 13 added a variant
// with a different signature under the same base name (cuCtxGetDevice_v2 takes a context too), ask for the version
// whose signature cuda.h declares for the plain name. Seen: cuCtxGetDevice resolved to _v2 segfaulted.
int abi_version(const char* name) {
    if (std::string_view(name) == "cuCtxGetDevice") return 12000;
    return CUDA_VERSION;
}

struct LoadResult {
    Driver driver;
    std::string error;  // empty on success
};

LoadResult load() {
    LoadResult r;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        const char* why = dlerror();
        r.error = detail::str_cat("no CUDA driver: cannot load libcuda.so.1 (", why ? why : "unknown", ")");
        return r;
    }
    auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) {
        r.error = "no CUDA driver: libcuda.so.1 has no cuGetProcAddress_v2 (driver older than CUDA 12)";
        return r;
    }
#define TESSERA_RESOLVE(name)                                                                              \
    {                                                                                                      \
        void* fn = nullptr;                                                                                \
        CUdriverProcAddressQueryResult status{};                                                           \
        if (get_proc(#name, &fn, abi_version(#name), CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||     \
            fn == nullptr) {                                                                               \
            r.error = detail::str_cat("CUDA driver too old: entry point " #name " not found (need CUDA ",  \
                                      CUDA_VERSION / 1000, ".", CUDA_VERSION % 1000 / 10, " driver)");   \
            return r;                                                                                      \
        }                                                                                                  \
        r.driver.name = reinterpret_cast<decltype(r.driver.name)>(fn);                                     \
    }
    TESSERA_DRIVER_FUNCTIONS(TESSERA_RESOLVE)
#undef TESSERA_RESOLVE
    if (CUresult init = r.driver.cuInit(0); init != CUDA_SUCCESS) {
        const char* name = nullptr;
        r.driver.cuGetErrorName(init, &name);
        r.error = detail::str_cat("no CUDA device: cuInit failed with ", name ? name : "unknown error");
        return r;
    }
    int count = 0;
    if (r.driver.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
        r.error = "no CUDA device: the driver reports no GPU";
    }
    return r;
}

const LoadResult& loaded() {
    static const LoadResult result = load();
    return result;
}

}  // namespace

const Driver& driver() {
    const LoadResult& r = loaded();
    if (!r.error.empty()) throw CudaError(r.error);
    return r.driver;
}

bool driver_available() noexcept {
    try {
        return loaded().error.empty();
    } catch (...) {
        return false;
    }
}

void check_cu(CUresult result, const char* what) {
    if (result == CUDA_SUCCESS) [[likely]] return;
    const char* name = "unknown";
    const char* text = "unknown";
    const Driver& d = driver();
    d.cuGetErrorName(result, &name);
    d.cuGetErrorString(result, &text);
    throw CudaError(detail::str_cat("CUDA driver error in ", what, ": ", name, " (", text, ")"));
}

}  // namespace tessera::runtime
