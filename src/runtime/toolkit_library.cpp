#include "runtime/toolkit_library.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <vector>

namespace tessera::runtime {

void* open_toolkit_library(const std::string& cuda_home, std::initializer_list<const char*> names) {
    std::vector<std::string> candidates;
    for (const char* sub : {"lib64", "lib", "targets/x86_64-linux/lib"})
        for (const char* name : names) candidates.push_back((std::filesystem::path(cuda_home) / sub / name).string());
    for (const char* name : names) candidates.emplace_back(name);
    for (const std::string& c : candidates)
        if (void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    return nullptr;
}

}  // namespace tessera::runtime
