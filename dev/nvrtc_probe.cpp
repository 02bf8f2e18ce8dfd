// Compiles one generated kernel.cu (from a tessera cache) with NVRTC under the options given, and prints ptxas's
// register / spill lines and the PTX's size, optionally writing the PTX: for comparing NVRTC's output with NVCC's
// on the same translation unit (docs/perf/fp8_grouped.md v14-v15: masked 128x192 at K = 1536 spills only with NVRTC).
//
//   g++ -std=c++17 dev/nvrtc_probe.cpp -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lnvrtc -o /tmp/nvrtc_probe
//   /tmp/nvrtc_probe kernel.cu [--ptx-out F] -std=c++20 -arch=sm_90a -default-device -I$PWD/kernels -Xptxas=-v
#include <nvrtc.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s kernel.cu [--ptx-out FILE] NVRTC_OPTION...\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    const char* ptx_out = nullptr;
    std::vector<const char*> options;
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--ptx-out") == 0 && i + 1 < argc) ptx_out = argv[++i];
        else options.push_back(argv[i]);
    }
    nvrtcProgram prog;
    nvrtcCreateProgram(&prog, source.c_str(), "kernel.cu", 0, nullptr, nullptr);
    const nvrtcResult rc = nvrtcCompileProgram(prog, static_cast<int>(options.size()), options.data());
    size_t log_size = 0;
    nvrtcGetProgramLogSize(prog, &log_size);
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(prog, log.data());
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
        if (line.find("spill") != std::string::npos || line.find("Used") != std::string::npos ||
            line.find("error") != std::string::npos)
            std::printf("%s\n", line.c_str());
    }
    size_t ptx_size = 0;
    if (rc == NVRTC_SUCCESS && nvrtcGetPTXSize(prog, &ptx_size) == NVRTC_SUCCESS && ptx_size > 1) {
        std::string ptx(ptx_size, '\0');
        nvrtcGetPTX(prog, ptx.data());
        size_t newlines = 0;
        for (char c : ptx) newlines += c == '\n';
        std::printf("ptx: %zu lines\n", newlines);
        if (ptx_out != nullptr) std::ofstream(ptx_out) << ptx.c_str();
    }
    std::printf("nvrtc: %s\n", nvrtcGetErrorString(rc));
    nvrtcDestroyProgram(&prog);
    return rc == NVRTC_SUCCESS ? 0 : 1;
}
