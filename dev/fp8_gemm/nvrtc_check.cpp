// Compiles one rendered fp8_gemm translation unit with NVRTC, the way the JIT does (no host headers,
// -default-device, sm_90a), prints the compile log (ptxas -v included) and the wall time, and writes the cubin.
// Usage: nvrtc_check <tu.cu> <kernels include dir> [out.cubin] [--ptx out.ptx] [-OPTION ...]
// Extra arguments that start with '-' are added to NVRTC's options (to try flags against the JIT's); --ptx writes the
// PTX, e.g. to compare it with `nvcc -ptx` on the same unit (docs/perf/fp8_grouped.md v15).
#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s <tu.cu> <include dir> [out.cubin]\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    std::stringstream source;
    source << in.rdbuf();
    const std::string include = std::string("-I") + argv[2];
    std::vector<const char*> options = {"-std=c++20", "-arch=sm_90a", "-default-device", include.c_str(),
                                        "--ptxas-options=-v"};
    const char* cubin_out = nullptr;
    const char* ptx_out = nullptr;
    for (int i = 3; i < argc; ++i) {
        if (std::string(argv[i]) == "--ptx" && i + 1 < argc) ptx_out = argv[++i];
        else if (argv[i][0] == '-') options.push_back(argv[i]);
        else cubin_out = argv[i];
    }

    const auto t0 = std::chrono::steady_clock::now();
    nvrtcProgram program;
    nvrtcCreateProgram(&program, source.str().c_str(), argv[1], 0, nullptr, nullptr);
    const nvrtcResult result = nvrtcCompileProgram(program, static_cast<int>(options.size()), options.data());
    const auto t1 = std::chrono::steady_clock::now();

    size_t log_size = 0;
    nvrtcGetProgramLogSize(program, &log_size);
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(program, log.data());
    std::printf("%s: NVRTC %s in %.3f s\n%s\n", argv[1], nvrtcGetErrorString(result),
                std::chrono::duration<double>(t1 - t0).count(), log.c_str());
    if (result == NVRTC_SUCCESS && cubin_out != nullptr) {
        size_t size = 0;
        nvrtcGetCUBINSize(program, &size);
        std::vector<char> cubin(size);
        nvrtcGetCUBIN(program, cubin.data());
        std::ofstream(cubin_out, std::ios::binary).write(cubin.data(), static_cast<std::streamsize>(size));
    }
    if (result == NVRTC_SUCCESS && ptx_out != nullptr) {
        size_t size = 0;
        nvrtcGetPTXSize(program, &size);
        std::string ptx(size, '\0');
        nvrtcGetPTX(program, ptx.data());
        std::ofstream(ptx_out) << ptx.c_str();
    }
    nvrtcDestroyProgram(&program);
    return result == NVRTC_SUCCESS ? 0 : 1;
}
