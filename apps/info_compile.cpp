// `tessera info` and `tessera compile`.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "apps/commands.hpp"
#include "tessera/aot.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"
#include "tessera/runtime.hpp"

namespace tessera::apps {
namespace {

int info(const Args&) {
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

// One kernel to build: a layout kernel, the planned kernel of an FP8 problem, or a kernel by its spec line (another
// family's, or a BF16 problem's plan) (label: where it came from).
struct Job {
    std::string label;
    bool layout = false;
    aot::Fp8Problem problem;
    std::string kernel;  // the planned spec, to build each kernel once
    bool by_spec = false;
};

void add_job(std::vector<Job>& jobs, Job job) {
    for (const Job& j : jobs)
        if (!j.layout && j.kernel == job.kernel) return;  // another problem plans the same kernel
    jobs.push_back(std::move(job));
}

// The problems of --fp8, --bf16 and --shapes, each checked and planned; a bad one stops the command (exit 2, one
// line) before anything is compiled.
void add_problem(std::vector<Job>& jobs, const std::string& where, const std::string& text, int num_sms) {
    Job job;
    try {
        job.problem = aot::parse_fp8_problem(text);
        job.problem.num_sms = num_sms;
        job.kernel = aot::plan_fp8(job.problem).kernel;
    } catch (const Error& e) {
        throw InvalidArgument(where + e.what());
    }
    job.label = aot::to_string(job.problem);
    add_job(jobs, std::move(job));
}

void add_bf16_problem(std::vector<Job>& jobs, const std::string& where, const std::string& text, int num_sms) {
    Job job;
    try {
        aot::Bf16Problem p = aot::parse_bf16_problem(text);
        p.num_sms = num_sms;
        job.kernel = aot::plan_bf16(p).kernel;
        job.label = "bf16 " + aot::to_string(p);
    } catch (const Error& e) {
        throw InvalidArgument(where + e.what());
    }
    job.by_spec = true;
    add_job(jobs, std::move(job));
}

void add_shapes_file(std::vector<Job>& jobs, const std::string& path, int num_sms) {
    std::ifstream in(path);
    if (!in) throw InvalidArgument("--shapes: cannot read '" + path + "'");
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        line = line.substr(0, line.find('#'));
        const std::size_t first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos) continue;
        const std::size_t last = line.find_last_not_of(" \t\r");
        const std::string where = path + ":" + std::to_string(number) + ": ", text = line.substr(first, last - first + 1);
        if (text.rfind("bf16 ", 0) == 0) add_bf16_problem(jobs, where, text.substr(5), num_sms);
        else add_problem(jobs, where, text, num_sms);
    }
}

// What tessera plans for at run time on this machine: GPU 0's SM count (or set_num_sms's), else the H200's.
int default_num_sms(std::string* source) {
    try {
        const int n = get_num_sms();
        *source = "GPU 0";
        return n;
    } catch (const Error&) {
        *source = "no GPU: the H200's";
        return aot::kH200NumSms;
    }
}

const char* compiler_name(CompilerKind kind) { return kind == CompilerKind::kNvrtc ? "nvrtc" : "nvcc"; }

int compile(const Args& args) {
    const std::string which = args.get("--compiler", "default");
    std::vector<CompilerKind> kinds;
    if (which == "both") kinds = {CompilerKind::kNvrtc, CompilerKind::kNvcc};
    else if (which == "nvrtc") kinds = {CompilerKind::kNvrtc};
    else if (which == "nvcc") kinds = {CompilerKind::kNvcc};
    else if (which == "default") kinds = {options().compiler};
    else throw UsageError("option '--compiler': expected nvrtc, nvcc or both, got '" + which + "'");

    const std::vector<std::string> problems = args.all("--fp8"), bf16_problems = args.all("--bf16"),
                                   shape_files = args.all("--shapes");
    if (args.has("--suite") && !problems.empty()) throw UsageError("expected --suite or --fp8, got both");
    if (args.has("--suite") && !bf16_problems.empty()) throw UsageError("expected --suite or --bf16, got both");
    if (args.has("--suite") && !shape_files.empty()) throw UsageError("expected --suite or --shapes, got both");
    const std::string suite_name = args.get("--suite", "all");
    bool known = false;
    std::string names;
    for (const std::string& s : aot::suite_names()) {
        known = known || s == suite_name;
        names += (names.empty() ? "" : ", ") + s;
    }
    if (!known) throw UsageError("option '--suite': expected one of " + names + ", got '" + suite_name + "'");
    std::string sms_source = "--num-sms";
    const int num_sms =
        args.has("--num-sms") ? positive_int("--num-sms", args.get("--num-sms", "")) : default_num_sms(&sms_source);
    if (options().cache_dir.empty())
        throw Error("no cache directory to fill (TESSERA_CACHE_DIR, XDG_CACHE_HOME and HOME are unset)");

    std::vector<Job> jobs;
    if (problems.empty() && bf16_problems.empty() && shape_files.empty()) {
        const aot::Suite suite = aot::suite(suite_name, num_sms);
        for (const std::string& name : suite.layout_kernels) jobs.push_back({name, true, {}, ""});
        for (const aot::Fp8Problem& p : suite.fp8_problems) add_problem(jobs, "", aot::to_string(p), num_sms);
        for (const std::string& spec : suite.kernel_specs) {
            Job job;
            job.label = spec.substr(0, spec.find('{'));
            job.kernel = spec;
            job.by_spec = true;
            jobs.push_back(job);
        }
    }
    for (const std::string& p : problems) add_problem(jobs, "", p, num_sms);
    for (const std::string& p : bf16_problems) add_bf16_problem(jobs, "", p, num_sms);
    for (const std::string& f : shape_files) add_shapes_file(jobs, f, num_sms);
    if (jobs.empty()) throw InvalidArgument("--shapes: no problems in the given files");

    const std::size_t total = jobs.size() * kinds.size();
    std::printf("compiling %zu kernel%s with %s for %d SMs (%s) into %s\n", total, total == 1 ? "" : "s",
                which == "default" ? compiler_name(kinds[0]) : which.c_str(), num_sms, sms_source.c_str(),
                options().cache_dir.c_str());
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    int done = 0, failed = 0, cached = 0;
    for (CompilerKind kind : kinds) {
        for (const Job& job : jobs) {
            ++done;
            char count[32];
            std::snprintf(count, sizeof(count), "[%d/%zu]", done, total);
            try {
                const aot::CompiledKernel k = job.layout    ? aot::compile_layout_kernel(job.label, kind)
                                              : job.by_spec ? aot::compile_spec(job.kernel, kind)
                                                            : aot::compile_fp8(job.problem, kind);
                if (k.from_cache) {
                    ++cached;
                    std::printf("%s %7.1f s  %-5s cached                           %s  %s\n", count, elapsed(),
                                compiler_name(kind), job.label.c_str(), k.spec.c_str());
                } else {
                    std::printf("%s %7.1f s  %-5s compiled %6.2f s  regs %3d  spills %d  %s  %s\n", count,
                                elapsed(), compiler_name(kind), k.compile_seconds, k.registers, k.spill_bytes,
                                job.label.c_str(), k.spec.c_str());
                }
                // A serialized kernel is correct and a third slower or worse: a defect of the kernel source. (With
                // the spill check on, the build itself refuses it and it fails above instead.)
                if (!k.wgmma_serialized.empty()) {
                    ++failed;
                    std::fprintf(stderr, "tessera compile: %s: ptxas serialized its wgmma: %s\n", job.label.c_str(),
                                 k.wgmma_serialized.c_str());
                }
            } catch (const Unsupported&) {
                throw;  // the compiler is not installed: every kernel would fail alike
            } catch (const Error& e) {
                ++failed;
                std::printf("%s %7.1f s  %-5s FAILED  %s\n", count, elapsed(), compiler_name(kind),
                            job.label.c_str());
                std::fprintf(stderr, "tessera compile: %s: %s\n", job.label.c_str(), e.what());
            }
        }
    }
    std::printf("%zu kernel%s: %zu compiled, %d from the cache, %d failed, in %.1f s\n", total, total == 1 ? "" : "s",
                total - cached - failed, cached, failed, elapsed());
    return failed ? 1 : 0;
}

}  // namespace

const Command& info_command() {
    static const Command command{"info", "tessera info",
                                 "What tessera sees: the CUDA driver and GPUs, NVRTC and nvcc, the compiler in use,\n"
                                 "the kernel headers and the kernel cache (TESSERA_CACHE_DIR) with its size.\n",
                                 {},
                                 info};
    return command;
}

const Command& compile_command() {
    static const Command command{
        "compile",
        "tessera compile [--compiler nvrtc|nvcc|both] [--suite S | --fp8 PROBLEM... | --bf16 PROBLEM... | --shapes "
        "FILE...] [--num-sms N]",
        "Fills the kernel cache (TESSERA_CACHE_DIR) ahead of time; needs no GPU. Serving then loads the kernels\n"
        "from the cache instead of compiling them.\n"
        "\n"
        "Kernels are specialized per N, K (k-grouped: per group count instead of K) and SM count. M and E only\n"
        "choose the tile: they are not part of the kernel, so one kernel serves every M that plans the same tile.\n"
        "Compile for the SM count the serving GPU has, and for each (N, K) with the M values the model runs\n"
        "(decode and prefill sizes plan different tiles).\n"
        "\n"
        "  --compiler C      nvrtc, nvcc or both (default: TESSERA_JIT_COMPILER, else nvrtc)\n"
        "  --suite S         a named suite: layout, fp8_gemm (DeepGEMM's dense benchmark shapes), fp8_grouped (its\n"
        "                    grouped shapes), bf16 (BF16 GEMMs and einsum on its test shapes), hc_prenorm, indexer\n"
        "                    (MQA logits, paged MQA logits, skip-head-mid, fp8_einsum) or all; the default when no\n"
        "                    --fp8, --bf16 or --shapes is given is all\n"
        "  --fp8 PROBLEM     the planned kernel of one FP8 GEMM problem; repeatable. PROBLEM is KIND:MxNxK[:G[:E]]:\n"
        "                      dense:MxNxK         fp8_gemm_nt, 1D2D (BF16 out)\n"
        "                      wgrad:MxNxK         fp8_gemm_nt, 1D1D (FP32 out)\n"
        "                      contiguous:MxNxK:G  m-grouped with per-row expert ids, M = all rows\n"
        "                      psum:MxNxK:G[:E]    m-grouped, psum layout, E rows expected per group (default M/G)\n"
        "                      masked:MxNxK:G[:E]  m-grouped masked, M = M_max, E = expected_m (default M)\n"
        "                      kgrouped:MxNx0:G    k-grouped wgrad, K per group at run time (give 0)\n"
        "                    K must be a multiple of 16 and N of 8 (4 for wgrad and kgrouped), as the GEMMs require;\n"
        "                    a problem that could not run is refused before anything is compiled\n"
        "  --bf16 PROBLEM    the planned kernel of one BF16 GEMM problem; repeatable. PROBLEM is KIND:MxNxK[:G[:E]]:\n"
        "                      nt:MxNxK            bf16_gemm_nt (also nn, tn, tt: the operands as DeepGEMM's names\n"
        "                                          take them); add -f32 for FP32 D, -c with C (nt-f32-c:...)\n"
        "                      contiguous:MxNxK:G  m_grouped_bf16_gemm_nt_contiguous, M = all rows (contiguous-nn:\n"
        "                                          B as [G, K, N])\n"
        "                      psum:MxNxK:G[:E]    the same with the psum layout (psum-nn likewise)\n"
        "                      masked:MxNxK:G[:E]  m_grouped_bf16_gemm_nt_masked, M = M_max, E = expected_m\n"
        "                      kgrouped:MxNx0:G    k_grouped_bf16_gemm_tn_contiguous into FP32 D (kgrouped-bf16: D\n"
        "                                          BF16); K per group at run time (give 0)\n"
        "  --shapes FILE     problems as for --fp8, one per line, or as for --bf16 after 'bf16 '; '#' starts a\n"
        "                    comment; repeatable\n"
        "  --num-sms N       the SM count to compile for (default: what tessera plans for on GPU 0, its SM count or\n"
        "                    set_num_sms's; with no GPU 132, the H200's)\n"
        "\n"
        "TESSERA_FP8_CONFIG forces FP8 plans as it does at run time. One line per kernel: [done/total], elapsed\n"
        "seconds, compiler, compiled or cached, the problem and the kernel spec. Exit 1 when a kernel failed.\n",
        {{"--compiler", true, false},
         {"--suite", true, false},
         {"--fp8", true, true},
         {"--bf16", true, true},
         {"--shapes", true, true},
         {"--num-sms", true, false}},
        compile};
    return command;
}

}  // namespace tessera::apps
