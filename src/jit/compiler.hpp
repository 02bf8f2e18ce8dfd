// The two kernel compilers behind one interface: NVRTC in process (loaded with dlopen at first use) and NVCC as a
// subprocess. Both target sm_90a and produce a cubin; both can run the no-spill check on ptxas' report.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/options.hpp"

namespace tessera::jit {

struct CompileResult {
    std::string cubin;
    std::string ptx;  // only when options ask for a PTX dump
    std::string log;  // compiler and ptxas output
    double seconds = 0.0;
    bool spills_checked = false;  // ptxas reported resource usage and it showed no local memory
};

class Compiler {
public:
    virtual ~Compiler() = default;
    // Identifies the compiler and its version in cache keys and logs, e.g. "nvrtc-13.0".
    virtual const std::string& signature() const = 0;
    // Every flag that changes the cubin (part of the cache key).
    virtual const std::string& flags() const = 0;
    // Compiles `source`; throws CompileError with the log on failure (and on spills when options ask).
    virtual CompileResult compile(const std::string& source, std::string_view what) const = 0;
};

// The compiler `options` select. Throws Unsupported when it is not installed.
std::unique_ptr<Compiler> make_compiler(const Options& options, CompilerKind kind);

// Resource usage that ptxas reports for one kernel.
struct PtxasUsage {
    int registers = -1;
    int stack_frame_bytes = 0;
    int spill_store_bytes = 0;
    int spill_load_bytes = 0;
    bool local_memory = false;
    // ptxas' C751x advisory: it could not pipeline the kernel's wgmma and waits for each one before the next (a DEPBAR
    // after every QGMMA). The results stay correct; the kernel loses a third or more of its speed. The reason is
    // ptxas' line saying so.
    bool wgmma_serialized = false;
    std::string wgmma_serialized_reason;
};

// Parses `ptxas -v` output; registers stays -1 when the log has no report.
PtxasUsage parse_ptxas_usage(std::string_view log);

// Throws SpillError when ptxas' report shows local memory (spills or a stack frame) or serialized wgmma. Returns
// false when the log holds no report (seen with NVRTC on some machines): the kernel is then checked at load through
// the driver (local memory only).
bool check_ptxas_report(std::string_view log, std::string_view what);

}  // namespace tessera::jit
