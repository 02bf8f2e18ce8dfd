// NVRTC, loaded with dlopen at first use: compiles in process, with no temporary files.
#include <dlfcn.h>
#include <nvrtc.h>

#include <chrono>
#include <filesystem>
#include <vector>

#include "jit/compiler.hpp"
#include "runtime/toolkit_library.hpp"
#include "tessera/error.hpp"

namespace tessera::jit {
namespace {

struct Nvrtc {
    decltype(&::nvrtcVersion) version = nullptr;
    decltype(&::nvrtcCreateProgram) create = nullptr;
    decltype(&::nvrtcCompileProgram) compile = nullptr;
    decltype(&::nvrtcGetProgramLogSize) log_size = nullptr;
    decltype(&::nvrtcGetProgramLog) log = nullptr;
    decltype(&::nvrtcGetCUBINSize) cubin_size = nullptr;
    decltype(&::nvrtcGetCUBIN) cubin = nullptr;
    decltype(&::nvrtcGetPTXSize) ptx_size = nullptr;
    decltype(&::nvrtcGetPTX) ptx = nullptr;
    decltype(&::nvrtcDestroyProgram) destroy = nullptr;
    decltype(&::nvrtcGetErrorString) error_string = nullptr;
};

// Tries the toolkit's own library first, then the loader's search path.
const Nvrtc& load_nvrtc(const std::string& cuda_home) {
    static const Nvrtc nvrtc = [&] {
        void* lib = runtime::open_toolkit_library(cuda_home, {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"});
        if (lib == nullptr)
            throw Unsupported(detail::str_cat("NVRTC not found (looked in ", cuda_home,
                                              "/lib64 and the library path); set TESSERA_CUDA_HOME or use "
                                              "TESSERA_JIT_COMPILER=nvcc"));
        Nvrtc n;
        auto get = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
            if (fn == nullptr) throw Unsupported(detail::str_cat("NVRTC library lacks ", name));
        };
        get(n.version, "nvrtcVersion");
        get(n.create, "nvrtcCreateProgram");
        get(n.compile, "nvrtcCompileProgram");
        get(n.log_size, "nvrtcGetProgramLogSize");
        get(n.log, "nvrtcGetProgramLog");
        get(n.cubin_size, "nvrtcGetCUBINSize");
        get(n.cubin, "nvrtcGetCUBIN");
        get(n.ptx_size, "nvrtcGetPTXSize");
        get(n.ptx, "nvrtcGetPTX");
        get(n.destroy, "nvrtcDestroyProgram");
        get(n.error_string, "nvrtcGetErrorString");
        return n;
    }();
    return nvrtc;
}

class NvrtcCompiler final : public Compiler {
public:
    explicit NvrtcCompiler(const Options& options) : options_(options), nvrtc_(load_nvrtc(options.cuda_home)) {
        int major = 0, minor = 0;
        nvrtc_.version(&major, &minor);
        signature_ = detail::str_cat("nvrtc-", major, ".", minor);
        args_ = {"-std=c++20", "-arch=sm_90a", "-default-device", "-I" + options.kernel_dir};
        if (options.line_info) args_.emplace_back("-lineinfo");
        // ptxas' report feeds the no-spill check; it does not change the cubin.
        if (options.check_spills || options.ptxas_verbose) args_.emplace_back("-Xptxas=-v");
        for (const std::string& a : args_) flags_ += a + " ";
    }

    const std::string& signature() const override { return signature_; }
    const std::string& flags() const override { return flags_; }

    CompileResult compile(const std::string& source, std::string_view what) const override {
        const auto start = std::chrono::steady_clock::now();
        nvrtcProgram program = nullptr;
        check(nvrtc_.create(&program, source.c_str(), "kernel.cu", 0, nullptr, nullptr), "nvrtcCreateProgram", what);
        struct Guard {
            const Nvrtc& n;
            nvrtcProgram& p;
            ~Guard() { n.destroy(&p); }
        } guard{nvrtc_, program};

        std::vector<const char*> argv;
        for (const std::string& a : args_) argv.push_back(a.c_str());
        const nvrtcResult status = nvrtc_.compile(program, static_cast<int>(argv.size()), argv.data());

        CompileResult result;
        std::size_t log_size = 0;
        nvrtc_.log_size(program, &log_size);
        result.log.resize(log_size);
        if (log_size) nvrtc_.log(program, result.log.data());
        while (!result.log.empty() && (result.log.back() == '\0' || result.log.back() == '\n')) result.log.pop_back();
        if (status != NVRTC_SUCCESS)
            throw CompileError(detail::str_cat("NVRTC failed to compile ", what, " (", nvrtc_.error_string(status),
                                               "):\n", result.log));
        std::size_t size = 0;
        check(nvrtc_.cubin_size(program, &size), "nvrtcGetCUBINSize", what);
        result.cubin.resize(size);
        check(nvrtc_.cubin(program, result.cubin.data()), "nvrtcGetCUBIN", what);
        if (options_.dump_ptx) {
            check(nvrtc_.ptx_size(program, &size), "nvrtcGetPTXSize", what);
            result.ptx.resize(size);
            check(nvrtc_.ptx(program, result.ptx.data()), "nvrtcGetPTX", what);
        }
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (options_.check_spills) result.spills_checked = check_ptxas_report(result.log, what);
        return result;
    }

private:
    void check(nvrtcResult r, const char* call, std::string_view what) const {
        if (r != NVRTC_SUCCESS)
            throw CompileError(detail::str_cat(call, " failed for ", what, ": ", nvrtc_.error_string(r)));
    }

    Options options_;
    const Nvrtc& nvrtc_;
    std::string signature_;
    std::vector<std::string> args_;
    std::string flags_;
};

}  // namespace

std::unique_ptr<Compiler> make_nvrtc_compiler(const Options& options) {
    return std::make_unique<NvrtcCompiler>(options);
}

}  // namespace tessera::jit
