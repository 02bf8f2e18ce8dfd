// NVCC as a subprocess: the source goes into a private temporary directory, which is also the working directory,
// so stray files elsewhere cannot shadow headers.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jit/compiler.hpp"
#include "tessera/error.hpp"

namespace tessera::jit {
namespace {

namespace fs = std::filesystem;

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Runs `command` through the shell; returns (exit status, combined output).
std::pair<int, std::string> run(const std::string& command) {
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) throw CompileError(detail::str_cat("cannot start: ", command));
    std::string output;
    char buffer[4096];
    while (std::size_t n = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

class NvccCompiler final : public Compiler {
public:
    explicit NvccCompiler(const Options& options) : options_(options) {
        std::error_code ec;
        if (!fs::exists(options.nvcc_path, ec))
            throw Unsupported(detail::str_cat("nvcc not found at '", options.nvcc_path,
                                              "' (set TESSERA_NVCC / DG_JIT_NVCC_COMPILER or TESSERA_CUDA_HOME)"));
        auto [status, out] = run(quote(options.nvcc_path) + " --version");
        const std::size_t at = out.find("release ");
        if (status != 0 || at == std::string::npos)
            throw Unsupported(detail::str_cat("cannot read the version of ", options.nvcc_path, ":\n", out));
        signature_ = "nvcc-" + out.substr(at + 8, out.find(',', at) - at - 8);
        flags_ = "-std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -cubin --diag-suppress=177 -I" +
                 quote(options.kernel_dir);
        if (options.line_info) flags_ += " -lineinfo";
        if (options.check_spills || options.ptxas_verbose) flags_ += " -Xptxas=-v";
    }

    const std::string& signature() const override { return signature_; }
    const std::string& flags() const override { return flags_; }

    CompileResult compile(const std::string& source, std::string_view what) const override {
        const auto start = std::chrono::steady_clock::now();
        std::string tmpl = (fs::temp_directory_path() / "tessera-nvcc-XXXXXX").string();
        if (mkdtemp(tmpl.data()) == nullptr) throw CompileError("cannot create a temporary directory for nvcc");
        const fs::path dir(tmpl);
        struct Cleanup {
            fs::path d;
            ~Cleanup() {
                std::error_code ec;
                fs::remove_all(d, ec);
            }
        } cleanup{dir};
        std::ofstream(dir / "kernel.cu", std::ios::binary) << source;

        CompileResult result;
        const std::string base = "cd " + quote(dir.string()) + " && " + quote(options_.nvcc_path) + " " + flags_;
        auto [status, log] = run(base + " -o kernel.cubin kernel.cu");
        result.log = log;
        if (status != 0) throw CompileError(detail::str_cat("nvcc failed to compile ", what, ":\n", log));
        result.cubin = read_file(dir / "kernel.cubin");
        if (options_.dump_ptx) {
            auto [ptx_status, ptx_log] = run(base.substr(0, base.find(" -cubin")) + " " +
                                             base.substr(base.find(" -cubin") + 7) + " -ptx -o kernel.ptx kernel.cu");
            if (ptx_status == 0) result.ptx = read_file(dir / "kernel.ptx");
        }
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (options_.check_spills) result.spills_checked = check_ptxas_report(result.log, what);
        return result;
    }

private:
    Options options_;
    std::string signature_;
    std::string flags_;
};

}  // namespace

std::unique_ptr<Compiler> make_nvcc_compiler(const Options& options) { return std::make_unique<NvccCompiler>(options); }

std::unique_ptr<Compiler> make_nvrtc_compiler(const Options& options);

std::unique_ptr<Compiler> make_compiler(const Options& options, CompilerKind kind) {
    return kind == CompilerKind::kNvcc ? make_nvcc_compiler(options) : make_nvrtc_compiler(options);
}

}  // namespace tessera::jit
