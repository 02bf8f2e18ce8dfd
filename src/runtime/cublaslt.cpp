#include "runtime/cublaslt.hpp"

#include <dlfcn.h>

#include "runtime/toolkit_library.hpp"
#include "tessera/error.hpp"

namespace tessera::runtime {

const CublasLt& cublaslt(const std::string& cuda_home) {
    // A failed first load throws out of the initializer, so the next call tries again.
    static const CublasLt lt = [&] {
        void* lib = open_toolkit_library(cuda_home, {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
        if (lib == nullptr)
            throw Unsupported(detail::str_cat("cuBLASLt not found (looked in ", cuda_home,
                                              "/lib64 and the library path); set TESSERA_CUDA_HOME"));
        CublasLt l;
#define TESSERA_RESOLVE(name)                                                                          \
    l.name = reinterpret_cast<decltype(l.name)>(dlsym(lib, #name));                                    \
    if (l.name == nullptr) throw Unsupported(detail::str_cat("cuBLASLt library lacks ", #name));
        TESSERA_CUBLASLT_FUNCTIONS(TESSERA_RESOLVE)
#undef TESSERA_RESOLVE
        return l;
    }();
    return lt;
}

}  // namespace tessera::runtime
