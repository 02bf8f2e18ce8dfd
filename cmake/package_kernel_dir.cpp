// Compiled into each target that links tessera::tessera from an installed package (tesseraConfig.cmake adds it):
// names that package's kernel headers, which the static library cannot find from the program's own location.
// Overrides the library's weak default (src/runtime/kernel_dir.cpp); TESSERA_KERNEL_DIR still wins at run time.
extern "C" const char* tessera_package_kernel_dir();
extern "C" const char* tessera_package_kernel_dir() { return TESSERA_PACKAGE_KERNEL_DIR; }
