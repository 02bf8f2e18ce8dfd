# What gets installed, and where the binaries look for the kernel headers (src/runtime/kernel_dir.cpp). Two layouts
# share one rule between the `tessera` command and its kernel headers, <bindir>/../share/tessera/kernels:
#   cmake --install build --prefix P:
#     P/include/tessera/*.hpp              public headers
#     P/<libdir>/libtessera.a              the library
#     P/bin/tessera                        the command
#     P/share/tessera/kernels/tessera/     kernel headers
#     P/<libdir>/cmake/tessera/            the CMake package: find_package(tessera), target tessera::tessera
#   a wheel (pip install ., through scikit-build-core; SKBUILD is set):
#     site-packages/tessera/               the Python package, _C, and the kernel headers in include/ (found next to _C)
#     <env>/bin/tessera                    the command (the wheel's scripts)
#     <env>/share/tessera/kernels/         the kernel headers again (the wheel's data, 0.3 MB): the command's copy,
#                                          since a script cannot find site-packages from where it is installed
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TESSERA_INSTALL_KERNEL_DIR "${CMAKE_INSTALL_DATADIR}/tessera/kernels")
set(TESSERA_INSTALL_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/tessera")

file(RELATIVE_PATH _tessera_bin_to_kernels "${CMAKE_INSTALL_FULL_BINDIR}"
     "${CMAKE_INSTALL_FULL_DATADIR}/tessera/kernels")
target_compile_definitions(tessera PRIVATE TESSERA_BIN_TO_KERNEL_DIR="${_tessera_bin_to_kernels}")
if(NOT SKBUILD)
  # The binaries inside this build tree (build/tessera, the tests, build/python/tessera/_C) read the source tree's
  # kernel headers; an installed binary never does (the library checks where it runs from).
  target_compile_definitions(tessera PRIVATE TESSERA_SOURCE_KERNEL_DIR="${TESSERA_KERNEL_DIR}"
                                             TESSERA_BUILD_DIR="${CMAKE_BINARY_DIR}")
endif()

if(SKBUILD)
  if(TARGET _C)
    install(TARGETS _C LIBRARY DESTINATION tessera)
    install(DIRECTORY "${PROJECT_SOURCE_DIR}/kernels/tessera" DESTINATION tessera/include)
  endif()
  if(TARGET tessera_cli)
    install(TARGETS tessera_cli RUNTIME DESTINATION "${SKBUILD_SCRIPTS_DIR}")
    install(DIRECTORY "${PROJECT_SOURCE_DIR}/kernels/tessera"
            DESTINATION "${SKBUILD_DATA_DIR}/${TESSERA_INSTALL_KERNEL_DIR}")
  endif()
else()
  install(TARGETS tessera EXPORT tesseraTargets
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
          INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/tessera" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
          FILES_MATCHING PATTERN "*.hpp")
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/kernels/tessera" DESTINATION "${TESSERA_INSTALL_KERNEL_DIR}")
  if(TARGET tessera_cli)
    install(TARGETS tessera_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  endif()

  install(EXPORT tesseraTargets NAMESPACE tessera:: DESTINATION "${TESSERA_INSTALL_CMAKE_DIR}")
  configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/tesseraConfig.cmake.in"
                                "${PROJECT_BINARY_DIR}/tesseraConfig.cmake"
                                INSTALL_DESTINATION "${TESSERA_INSTALL_CMAKE_DIR}"
                                PATH_VARS TESSERA_INSTALL_KERNEL_DIR)
  # 0.x: a minor version may change the API.
  write_basic_package_version_file("${PROJECT_BINARY_DIR}/tesseraConfigVersion.cmake"
                                   VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
  install(FILES "${PROJECT_BINARY_DIR}/tesseraConfig.cmake" "${PROJECT_BINARY_DIR}/tesseraConfigVersion.cmake"
                "${PROJECT_SOURCE_DIR}/cmake/package_kernel_dir.cpp"
          DESTINATION "${TESSERA_INSTALL_CMAKE_DIR}")
endif()
unset(_tessera_bin_to_kernels)
