// Where the kernel headers of this copy of tessera are, when TESSERA_KERNEL_DIR does not say (options.cpp reads the
// variable; nothing here reads the environment).
#pragma once

#include <string>

namespace tessera::runtime {

// The root of the kernel headers (the directory holding tessera/common.cuh) that belongs to the binary this code is
// linked into, the first of these that holds them:
//   1. the one a consumer's build recorded: tesseraConfig.cmake compiles cmake/package_kernel_dir.cpp into each
//      target that links tessera::tessera, naming <prefix>/share/tessera/kernels of that installed package (a program
//      linking the static library may live anywhere, so its own location says nothing);
//   2. next to the binary (dladdr): <dir>/include (the Python module of a wheel: site-packages/tessera/include) and
//      <dir>/../share/tessera/kernels (the installed `tessera` command, from CMake or a wheel);
//   3. the source tree, for binaries inside the build tree only (tests, the build-tree Python package).
// Throws Unsupported naming TESSERA_KERNEL_DIR and the places looked in when none holds them.
std::string find_kernel_dir();

}  // namespace tessera::runtime
