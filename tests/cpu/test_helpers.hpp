// Helpers shared by the CPU tests: temporary directories and a copy of the kernel headers to edit.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tessera/options.hpp"

namespace tessera::test {

inline std::filesystem::path make_temp_dir(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    return tmpl;
}

// Options for a test: the given compiler, a private cache under `cache`, the repository's kernel headers.
inline Options test_options(const std::filesystem::path& cache, CompilerKind kind = CompilerKind::kNvrtc,
                            const std::string& kernel_dir = TESSERA_TEST_KERNEL_DIR) {
    Options o = Options::from_env();
    o.compiler = kind;
    o.cache_dir = cache.string();
    o.kernel_dir = kernel_dir;
    o.check_spills = true;
    return o;
}

inline void append_to_file(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::app) << text;
}

}  // namespace tessera::test
