// Options::from_env: the only place tessera reads the environment.
#include "tessera/options.hpp"

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "runtime/kernel_dir.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace {

// The first set variable among names, or nullptr.
const char* env_first(std::initializer_list<const char*> names, const char** which = nullptr) {
    for (const char* name : names) {
        if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
            if (which != nullptr) *which = name;
            return value;
        }
    }
    return nullptr;
}

bool env_flag(std::initializer_list<const char*> names, bool fallback) {
    const char* which = nullptr;
    const char* value = env_first(names, &which);
    if (value == nullptr) return fallback;
    const std::string v(value);
    if (v == "1" || v == "true" || v == "TRUE" || v == "on" || v == "yes") return true;
    if (v == "0" || v == "false" || v == "FALSE" || v == "off" || v == "no") return false;
    throw InvalidArgument(detail::str_cat("environment variable ", which, ": expected 0 or 1, got '", v, "'"));
}

std::string find_cuda_home() {
    if (const char* home = env_first({"TESSERA_CUDA_HOME", "CUDA_HOME", "CUDA_PATH"})) return home;
    if (const char* path = std::getenv("PATH")) {
        std::string all(path);
        std::size_t start = 0;
        while (start <= all.size()) {
            std::size_t end = all.find(':', start);
            if (end == std::string::npos) end = all.size();
            std::filesystem::path dir(all.substr(start, end - start));
            std::error_code ec;
            if (!dir.empty() && std::filesystem::exists(dir / "nvcc", ec)) return dir.parent_path().string();
            start = end + 1;
        }
    }
    return "/usr/local/cuda";
}

}  // namespace

Options Options::from_env() {
    Options o;
    const char* which = nullptr;
    if (const char* c = env_first({"TESSERA_JIT_COMPILER"}, &which)) {
        const std::string v(c);
        if (v == "nvrtc") o.compiler = CompilerKind::kNvrtc;
        else if (v == "nvcc") o.compiler = CompilerKind::kNvcc;
        else throw InvalidArgument(detail::str_cat("TESSERA_JIT_COMPILER: expected 'nvrtc' or 'nvcc', got '", v, "'"));
    } else if (env_first({"DG_JIT_USE_NVRTC"})) {
        o.compiler = env_flag({"DG_JIT_USE_NVRTC"}, true) ? CompilerKind::kNvrtc : CompilerKind::kNvcc;
    } else if (env_first({"DG_JIT_NVCC_COMPILER"})) {
        o.compiler = CompilerKind::kNvcc;  // naming an nvcc binary asks for nvcc
    }
    o.cuda_home = find_cuda_home();
    if (const char* nvcc = env_first({"TESSERA_NVCC", "DG_JIT_NVCC_COMPILER"})) o.nvcc_path = nvcc;
    else o.nvcc_path = (std::filesystem::path(o.cuda_home) / "bin" / "nvcc").string();

    if (const char* dir = env_first({"TESSERA_CACHE_DIR", "DG_JIT_CACHE_DIR"})) {
        o.cache_dir = dir;
    } else if (const char* xdg = env_first({"XDG_CACHE_HOME"})) {
        o.cache_dir = (std::filesystem::path(xdg) / "tessera").string();
    } else if (const char* home = env_first({"HOME"})) {
        o.cache_dir = (std::filesystem::path(home) / ".cache" / "tessera").string();
    }
    if (const char* kdir = env_first({"TESSERA_KERNEL_DIR"})) o.kernel_dir = kdir;
    else o.kernel_dir = runtime::find_kernel_dir();  // relative to the binary; throws naming TESSERA_KERNEL_DIR
    o.line_info = env_flag({"TESSERA_JIT_LINEINFO", "DG_JIT_WITH_LINEINFO"}, false);
    const bool dump_asm = env_flag({"DG_JIT_DUMP_ASM"}, false);
    o.dump_ptx = env_flag({"TESSERA_JIT_DUMP_PTX", "DG_JIT_DUMP_PTX"}, dump_asm);
    o.dump_sass = env_flag({"TESSERA_JIT_DUMP_SASS", "DG_JIT_DUMP_SASS"}, dump_asm);
    const bool debug = env_flag({"TESSERA_JIT_DEBUG", "DG_JIT_DEBUG"}, false);
    o.ptxas_verbose = env_flag({"TESSERA_JIT_PTXAS_VERBOSE", "DG_JIT_PTXAS_VERBOSE"}, debug);
    o.check_spills = env_flag({"TESSERA_JIT_CHECK_SPILLS", "DG_JIT_PTXAS_CHECK"}, true);
    o.print_compile = env_flag({"TESSERA_JIT_PRINT_COMPILE", "DG_JIT_PRINT_COMPILER_COMMAND"}, debug);
    o.print_configs = env_flag({"TESSERA_PRINT_CONFIGS", "DG_PRINT_CONFIGS"}, debug);
    o.pdl = env_flag({"TESSERA_PDL"}, false);
    o.dlpack_exchange = env_flag({"TESSERA_DLPACK_EXCHANGE"}, true);
    o.cublaslt_temp_workspace = env_flag({"TESSERA_CUBLASLT_TEMP_WORKSPACE", "DG_USE_TEMP_CUBLASLT_WORKSPACE"}, false);
    o.cublaslt_framework_handle =
        env_flag({"TESSERA_CUBLASLT_FRAMEWORK_HANDLE", "DG_USE_PYTORCH_CUBLASLT_HANDLE"}, false);
    if (const char* forced = env_first({"TESSERA_FP8_CONFIG"})) o.fp8_config = forced;
    return o;
}

Options& options() {
    static Options instance = Options::from_env();
    return instance;
}

}  // namespace tessera
