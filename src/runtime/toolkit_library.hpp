// Opening a CUDA toolkit library (NVRTC, cuBLASLt) at first use: the toolkit's own copy first, then the loader's
// search path, so that nothing links against it and a machine without it still loads tessera.
#pragma once

#include <initializer_list>
#include <string>

namespace tessera::runtime {

// dlopen of the first of `names` found under cuda_home/{lib64,lib,targets/x86_64-linux/lib}, then on the library
// path; nullptr when none loads.
void* open_toolkit_library(const std::string& cuda_home, std::initializer_list<const char*> names);

}  // namespace tessera::runtime
