// find_kernel_dir: the kernel headers found relative to the binary, never through a path of the build machine
// (except for binaries that are still inside the build tree).
#include "runtime/kernel_dir.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "tessera/error.hpp"

// The installed package's kernel directory, defined by the source tesseraConfig.cmake adds to its consumers
// (cmake/package_kernel_dir.cpp); this weak default, used by every other binary, names none.
extern "C" __attribute__((weak)) const char* tessera_package_kernel_dir() { return nullptr; }

namespace tessera::runtime {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMarker = "tessera/common.cuh";
const char kAnchor = 0;  // an address inside the binary this code is linked into

bool holds_kernels(const fs::path& dir) {
    std::error_code ec;
    return fs::is_regular_file(dir / kMarker, ec);
}

// The file this code was loaded from, symlinks resolved: a shared object (the Python module) or the executable.
fs::path this_binary() {
    Dl_info info{};
    link_map* map = nullptr;
    std::error_code ec;
    if (dladdr1(&kAnchor, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 && map != nullptr &&
        map->l_name != nullptr && map->l_name[0] != '\0') {
        fs::path so = fs::canonical(map->l_name, ec);
        if (!ec) return so;
    }
    // The main program's link map has no name (dladdr would report argv[0]); the kernel knows its file.
    fs::path exe = fs::canonical("/proc/self/exe", ec);
    return ec ? fs::path() : exe;
}

[[maybe_unused]] bool inside(const fs::path& file, const fs::path& dir) {
    std::error_code ec;
    const fs::path root = fs::weakly_canonical(dir, ec);
    if (ec || root.empty()) return false;
    const auto [stop, unused] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
    return stop == root.end();
}

}  // namespace

std::string find_kernel_dir() {
    std::vector<fs::path> looked;
    auto found = [&](const fs::path& dir) {
        looked.push_back(dir.lexically_normal());
        return holds_kernels(dir);
    };
    if (const char* package = tessera_package_kernel_dir(); package != nullptr && *package != '\0') {
        if (found(package)) return package;
    }
    const fs::path binary = this_binary();
    if (!binary.empty()) {
        const fs::path dir = binary.parent_path();
        for (const fs::path& candidate : {dir / "include", dir / TESSERA_BIN_TO_KERNEL_DIR}) {
            if (found(candidate)) return candidate.lexically_normal().string();
        }
#if defined(TESSERA_BUILD_DIR) && defined(TESSERA_SOURCE_KERNEL_DIR)
        if (inside(binary, TESSERA_BUILD_DIR) && found(TESSERA_SOURCE_KERNEL_DIR)) return TESSERA_SOURCE_KERNEL_DIR;
#endif
    }
    std::string places;
    for (const fs::path& p : looked) places += (places.empty() ? "" : ", ") + p.string();
    throw Unsupported(detail::str_cat("kernel headers not found: set TESSERA_KERNEL_DIR to the directory holding ",
                                      kMarker, " (binary: '", binary.string(), "'; looked in: ", places, ")"));
}

}  // namespace tessera::runtime
