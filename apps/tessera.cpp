// The `tessera` command:
//   tessera info                       driver, GPUs, compilers, cache directory and size
//   tessera compile [--compiler C]     fill the kernel cache ahead of time (no GPU needed); C = nvrtc|nvcc|both;
//                                      --suite S or --fp8 KIND:MxNxK[:G[:E]] (one problem's planned kernel)
//   tessera bench [--suite S] [--json] benchmark suites (needs a GPU)
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "tessera/error.hpp"

namespace {

void usage() {
    std::puts(
        "usage: tessera <command> [options]\n"
        "  info                          what tessera sees: driver, GPUs, compilers, cache\n"
        "  compile [--compiler nvrtc|nvcc|both] [--suite S | --fp8 KIND:MxNxK[:G[:E]]]\n"
        "                                compile the kernels of a suite, or the planned kernel of one FP8 problem\n"
        "                                (KIND dense|wgrad|contiguous|psum|masked|kgrouped), into the cache (no GPU)\n"
        "  bench [--suite S] [--json F]  run a benchmark suite on the GPU\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
        usage();
        return argc < 2 ? 2 : 0;
    }
    const std::string command = argv[1];
    const std::vector<std::string> args(argv + 2, argv + argc);
    try {
        if (command == "info") return tessera::apps::info(args);
        if (command == "compile") return tessera::apps::compile(args);
        if (command == "bench") return tessera::apps::bench(args);
        std::fprintf(stderr, "tessera: unknown command '%s'\n", command.c_str());
        usage();
        return 2;
    } catch (const tessera::Error& e) {
        std::fprintf(stderr, "tessera %s: %s\n", command.c_str(), e.what());
        return 1;
    }
}
