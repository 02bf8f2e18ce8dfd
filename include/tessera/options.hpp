// Options: every setting tessera reads from the environment, filled once (Options::from_env) and then only
// changed through the setters of the public API. No other code reads environment variables.
#pragma once

#include <string>

namespace tessera {

enum class CompilerKind { kNvrtc, kNvcc };

struct Options {
    // JIT
    CompilerKind compiler = CompilerKind::kNvrtc;
    std::string nvcc_path;        // empty: <cuda_home>/bin/nvcc
    std::string cuda_home;        // toolkit root (headers for NVRTC, nvcc, libnvrtc)
    std::string cache_dir;        // disk cache root; empty disables the disk cache
    std::string kernel_dir;       // root of the device headers (holds tessera/...)
    bool line_info = false;       // -lineinfo for profilers
    bool dump_ptx = false;        // write kernel.ptx next to the cubin
    bool dump_sass = false;       // write kernel.sass next to the cubin (needs cuobjdump; off the hot path)
    bool ptxas_verbose = false;   // print ptxas resource usage of each compile
    bool check_spills = true;     // fail a compile whose kernel uses local memory
    bool print_compile = false;   // log each compile (command, time)
    bool print_configs = false;   // print the chosen config once per new shape
    // Debug: force the FP8 GEMM plan of dense, per-row contiguous, psum and masked calls (TESSERA_FP8_CONFIG,
    // "BMxBN[:1x2][:sS][:pP]": tile, A multicast pair, split-K S, P ring stages; contiguous keeps BM = its
    // alignment's block). Empty: the planner decides. An illegal value raises InvalidArgument at the call.
    std::string fp8_config;
    // Python binding: read torch tensors through torch's DLPack exchange table where torch has one
    // (TESSERA_DLPACK_EXCHANGE=0: through their attributes, the path for torch builds without the table).
    bool dlpack_exchange = true;
    // cuBLASLt wrappers (DeepGEMM's switches): a 32 MiB workspace allocated per call on the call's stream instead of
    // one held per device (DG_USE_TEMP_CUBLASLT_WORKSPACE), and the framework's cuBLAS handle, passed by the caller,
    // instead of a private one (DG_USE_PYTORCH_CUBLASLT_HANDLE; the Python API passes torch's).
    bool cublaslt_temp_workspace = false;
    bool cublaslt_framework_handle = false;
    // Launch
    bool pdl = false;             // programmatic dependent launch attribute
    int num_sms = 0;              // 0: all SMs of the device
    // Planning (set_block_size_multiple_of): > 1 makes every planned block N a multiple of lcm(16, this).
    int block_n_multiple = 1;

    // Reads TESSERA_* (and DeepGEMM's DG_* aliases). Unknown values give InvalidArgument naming the variable.
    static Options from_env();
};

// The process-wide options, created from the environment on first use.
Options& options();

}  // namespace tessera
