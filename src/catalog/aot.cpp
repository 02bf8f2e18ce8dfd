// tessera/aot.hpp: the problem text, plans through the ops' planner, compiles through the JIT's disk cache.
#include "tessera/aot.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "catalog/kernel_catalog.hpp"
#include "catalog/problem_text.hpp"
#include "jit/compiler.hpp"
#include "jit/jit.hpp"
#include "ops/fp8_gemm_common.hpp"
#include "ops/fp8_gemm_specs.hpp"
#include "ops/layout_specs.hpp"
#include "tessera/error.hpp"

namespace tessera::aot {
namespace {

struct KindName {
    std::string_view text;
    Fp8Kind kind;
    Fp8Recipe recipe;
};
constexpr KindName kKindNames[] = {
    {"dense", Fp8Kind::kDense, Fp8Recipe::k1D2D},           {"wgrad", Fp8Kind::kDense, Fp8Recipe::k1D1D},
    {"contiguous", Fp8Kind::kContiguous, Fp8Recipe::k1D2D}, {"psum", Fp8Kind::kPsum, Fp8Recipe::k1D2D},
    {"masked", Fp8Kind::kMasked, Fp8Recipe::k1D2D},         {"kgrouped", Fp8Kind::kKGrouped, Fp8Recipe::k1D1D},
};

// The JIT (for its disk cache) and the compilers of one cache directory, made once: an NVCC compiler asks nvcc for
// its version when it is made, and the JIT hashes the kernel headers once.
class Builders {
public:
    jit::Jit& jit_for(const std::string& cache_dir) {
        if (cache_dir.empty()) return jit::jit();
        std::lock_guard lock(mutex_);
        std::unique_ptr<jit::Jit>& slot = jits_[cache_dir];
        if (!slot) {
            Options o = options();
            o.cache_dir = cache_dir;
            slot = std::make_unique<jit::Jit>(std::move(o));
        }
        return *slot;
    }
    const jit::Compiler& compiler(CompilerKind kind) {
        std::lock_guard lock(mutex_);
        std::unique_ptr<jit::Compiler>& slot = compilers_[kind];
        if (!slot) slot = jit::make_compiler(options(), kind);
        return *slot;
    }

private:
    std::mutex mutex_;
    std::map<std::string, std::unique_ptr<jit::Jit>> jits_;
    std::map<CompilerKind, std::unique_ptr<jit::Compiler>> compilers_;
};

Builders& builders() {
    static Builders instance;
    return instance;
}

CompiledKernel build(const jit::KernelSpec& spec, CompilerKind kind, const std::string& cache_dir) {
    const jit::Compiler& compiler = builders().compiler(kind);
    const jit::BuildResult r = builders().jit_for(cache_dir).build(spec, &compiler);
    const jit::PtxasUsage u = jit::parse_ptxas_usage(r.log);
    CompiledKernel out;
    out.name = jit::family_info(spec.family).name;
    out.spec = spec.describe();
    out.key = r.key;
    out.compile_seconds = r.compile_seconds;
    out.registers = u.registers;
    out.spill_bytes = u.spill_store_bytes + u.spill_load_bytes;
    out.from_cache = !r.compiled;
    if (u.wgmma_serialized) out.wgmma_serialized = u.wgmma_serialized_reason;
    return out;
}

}  // namespace

Fp8Problem parse_fp8_problem(std::string_view text) {
    constexpr std::string_view kKinds = "dense, wgrad, contiguous, psum, masked or kgrouped";
    const catalog::ProblemText t = catalog::parse_problem_text(text, "fp8", kKinds);
    const KindName* kind = nullptr;
    for (const KindName& k : kKindNames)
        if (k.text == t.kind) kind = &k;
    if (kind == nullptr) throw InvalidArgument(catalog::problem_text_error("fp8", kKinds, "an unknown KIND", text));
    Fp8Problem p;
    p.kind = kind->kind;
    p.recipe = kind->recipe;
    p.m = t.m;
    p.n = t.n;
    p.k = t.k;
    p.groups = t.groups;
    p.expected_m = t.expected_m;
    return p;
}

std::string to_string(const Fp8Problem& p) {
    std::string_view kind = "?";
    for (const KindName& k : kKindNames)
        if (k.kind == p.kind && (k.kind != Fp8Kind::kDense || k.recipe == p.recipe)) {
            kind = k.text;
            break;
        }
    return catalog::problem_text(kind, p.m, p.n, p.k, p.groups, p.expected_m);
}

Fp8Plan plan_fp8(const Fp8Problem& problem) {
    const std::string name = to_string(problem);
    const ops::Fp8ProblemPlan plan = ops::plan_fp8_problem(problem, name.c_str());
    return {plan.config.describe(), plan.spec.describe()};
}

CompiledKernel compile_fp8(const Fp8Problem& problem, CompilerKind compiler, const std::string& cache_dir) {
    const std::string name = to_string(problem);
    ops::Fp8ProblemPlan plan = ops::plan_fp8_problem(problem, name.c_str());
    CompiledKernel out;
    // The GEMMs' own fallback: a tile whose kernel spills for this shape is excluded and the problem planned again.
    ops::choose_buildable_config(plan.problem, [&](const heuristics::Fp8GemmConfig& c) {
        out = build(ops::fp8_spec(plan.key, c), compiler, cache_dir);
    });
    return out;
}

std::vector<std::string> layout_kernel_names() {
    std::vector<std::string> names;
    for (const jit::KernelSpec& spec : ops::layout_specs()) names.emplace_back(jit::family_info(spec.family).name);
    return names;
}

CompiledKernel compile_layout_kernel(std::string_view name, CompilerKind compiler, const std::string& cache_dir) {
    std::string names;
    for (const jit::KernelSpec& spec : ops::layout_specs()) {
        if (jit::family_info(spec.family).name == name) return build(spec, compiler, cache_dir);
        names += (names.empty() ? "" : ", ") + std::string(jit::family_info(spec.family).name);
    }
    throw InvalidArgument(
        detail::str_cat("compile_layout_kernel: argument 'name': expected one of ", names, ", got '", name, "'"));
}

CompiledKernel compile_spec(std::string_view line, CompilerKind compiler, const std::string& cache_dir) {
    jit::KernelSpec spec = jit::KernelSpec::parse(line);
    // The FP8 family's post-compile pass is part of its spec (the line does not carry it), as its ops set it.
    if (spec.family == jit::Family::kFp8Gemm)
        spec.post.ffma_yield_interval = static_cast<std::uint8_t>(ops::fp8_ffma_yield_interval(spec));
    return build(spec, compiler, cache_dir);
}

std::vector<std::string> suite_names() {
    return {"layout", "fp8_gemm", "fp8_grouped", "bf16", "hc_prenorm", "indexer", "all"};
}

Suite suite(std::string_view name, int num_sms) { return catalog::suite(name, num_sms); }

}  // namespace tessera::aot
