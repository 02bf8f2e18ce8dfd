// `tessera info` and `tessera compile`.
#include <cstdio>

#include "apps/commands.hpp"
#include "jit/jit.hpp"
#include "jit/kernel_catalog.hpp"
#include "ops/fp8_gemm_specs.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"
#include "tessera/runtime.hpp"

namespace tessera::apps {

std::string flag_value(const std::vector<std::string>& args, const std::string& flag, const std::string& fallback) {
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == flag) return args[i + 1];
    return fallback;
}

int info(const std::vector<std::string>&) {
    const SystemInfo i = system_info();
    std::printf("driver:     %s\n", i.driver_loaded ? std::to_string(i.driver_version).c_str() : i.driver_error.c_str());
    for (const std::string& d : i.devices) std::printf("device:     %s\n", d.c_str());
    std::printf("nvrtc:      %s\n", i.nvrtc.c_str());
    std::printf("nvcc:       %s\n", i.nvcc.c_str());
    std::printf("compiler:   %s\n", i.compiler.c_str());
    std::printf("kernels:    %s\n", i.kernel_dir.c_str());
    std::printf("cache:      %s (%.1f MiB)\n", i.cache_dir.c_str(), static_cast<double>(i.cache_bytes) / (1 << 20));
    return 0;
}

int compile(const std::vector<std::string>& args) {
    const std::string which = flag_value(args, "--compiler", "default");
    const std::string suite = flag_value(args, "--suite", "all");
    std::vector<CompilerKind> kinds;
    if (which == "both") kinds = {CompilerKind::kNvrtc, CompilerKind::kNvcc};
    else if (which == "nvrtc") kinds = {CompilerKind::kNvrtc};
    else if (which == "nvcc") kinds = {CompilerKind::kNvcc};
    else if (which == "default") kinds = {options().compiler};
    else throw InvalidArgument("tessera compile: --compiler: expected nvrtc, nvcc or both, got '" + which + "'");

    const std::string problem = flag_value(args, "--fp8", "");
    if (!problem.empty() && flag_value(args, "--suite", "").size() > 0)
        throw InvalidArgument("tessera compile: expected --suite or --fp8, got both");
    const std::vector<jit::KernelSpec> specs =
        problem.empty() ? jit::catalog_specs(suite) : std::vector<jit::KernelSpec>{ops::fp8_problem_spec(problem)};
    int failures = 0;
    for (CompilerKind kind : kinds) {
        const auto compiler = jit::make_compiler(options(), kind);
        for (const jit::KernelSpec& spec : specs) {
            try {
                const jit::BuildResult r = jit::jit().build(spec, compiler.get());
                const jit::PtxasUsage u = jit::parse_ptxas_usage(r.log);
                if (r.compiled) {
                    std::printf("%-8s compiled %.3f s  regs %3d  spills %d/%d  %s%s\n", compiler->signature().c_str(),
                                r.compile_seconds, u.registers, u.spill_store_bytes, u.spill_load_bytes,
                                u.wgmma_serialized ? "WGMMA SERIALIZED  " : "", spec.describe().c_str());
                    // A serialized kernel is correct and a third slower or worse: a defect of the kernel source. (With
                    // the spill check on, the build itself refuses it and this reports FAILED instead.)
                    if (u.wgmma_serialized) {
                        ++failures;
                        std::printf("  %s\n", u.wgmma_serialized_reason.c_str());
                    }
                } else {
                    std::printf("%-8s cached            %s\n", compiler->signature().c_str(), spec.describe().c_str());
                }
            } catch (const Error& e) {
                ++failures;
                std::printf("%-8s FAILED  %s\n%s\n", compiler->signature().c_str(), spec.describe().c_str(), e.what());
            }
        }
    }
    std::printf("%zu kernels x %zu compilers, %d failed; cache %s\n", specs.size(), kinds.size(), failures,
                options().cache_dir.c_str());
    return failures ? 1 : 0;
}

}  // namespace tessera::apps
