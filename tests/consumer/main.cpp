// A program built against the installed tessera package, using only its public headers: prints the kernel headers the
// library found (tests/consumer/run.sh checks they are the installed package's), then plans the FP8 GEMM of one
// problem and compiles its kernel with NVRTC into the cache directory given, as a serving process would fill its
// cache ahead of time. No GPU needed.
#include <cstdio>

#include "tessera/aot.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: tessera_consumer CACHE_DIR\n");
        return 2;
    }
    try {
        std::printf("kernels: %s\n", tessera::options().kernel_dir.c_str());
        const tessera::aot::Fp8Problem problem = tessera::aot::parse_fp8_problem("dense:4096x576x7168");
        const tessera::aot::Fp8Plan plan = tessera::aot::plan_fp8(problem);
        std::printf("plan: %s\n", plan.config.c_str());
        const tessera::aot::CompiledKernel kernel =
            tessera::aot::compile_fp8(problem, tessera::CompilerKind::kNvrtc, argv[1]);
        std::printf("kernel: %s %s\n", kernel.key.c_str(), kernel.from_cache ? "(from the cache)" : "(compiled)");
    } catch (const tessera::Error& e) {
        std::fprintf(stderr, "tessera_consumer: %s\n", e.what());
        return 1;
    }
    return 0;
}
