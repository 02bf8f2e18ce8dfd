// Compiles one rendered fp8_gemm translation unit with NVRTC, the way the JIT does (no host headers,
// -default-device, sm_90a), prints the compile log (ptxas -v included) and the wall time, and writes the cubin.
// Usage: nvrtc_check <tu.cu> <kernels include dir> [out.cubin]
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
    if (result == NVRTC_SUCCESS && argc > 3) {
        size_t size = 0;
        nvrtcGetCUBINSize(program, &size);
        std::vector<char> cubin(size);
        nvrtcGetCUBIN(program, cubin.data());
        std::ofstream(argv[3], std::ios::binary).write(cubin.data(), static_cast<std::streamsize>(size));
    }
    nvrtcDestroyProgram(&program);
    return result == NVRTC_SUCCESS ? 0 : 1;
}
