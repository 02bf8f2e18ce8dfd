// tessera/aot.hpp for the BF16 GEMMs: the problem text, the checks the ops make of their shapes, and the plan the ops
// would make (their plan key, turned into the planner's problem by the ops' own bf16_planner_problem), compiled
// through compile_spec.
#include <string>

#include "catalog/problem_text.hpp"
#include "ops/bf16_gemm_common.hpp"
#include "tessera/aot.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"

namespace tessera::aot {
namespace {

constexpr std::string_view kKinds =
    "nt, nn, tn or tt (then -f32 for FP32 D, -c with C), contiguous, contiguous-nn, psum, psum-nn, masked, kgrouped "
    "or kgrouped-bf16";
constexpr std::int64_t kMaxKGroups = 256;  // the k-grouped kernel's parameter arrays

struct Layout {
    std::string_view text;
    bool mn_a, mn_b;
};
constexpr Layout kLayouts[] = {{"nt", false, false}, {"nn", false, true}, {"tn", true, true}, {"tt", true, false}};

struct GroupedName {
    std::string_view text;
    Bf16Kind kind;
    bool mn_b, out_f32;
};
constexpr GroupedName kGrouped[] = {
    {"contiguous", Bf16Kind::kContiguous, false, false}, {"contiguous-nn", Bf16Kind::kContiguous, true, false},
    {"psum", Bf16Kind::kPsum, false, false},             {"psum-nn", Bf16Kind::kPsum, true, false},
    {"masked", Bf16Kind::kMasked, false, false},         {"kgrouped", Bf16Kind::kKGrouped, true, true},
    {"kgrouped-bf16", Bf16Kind::kKGrouped, true, false}};

// The plan key of `p` as the ops build it (src/ops/bf16_gemm.cpp, bf16_grouped_gemm.cpp), after the checks the ops
// make of the same shapes; bf16_planner_problem then gives the planner's problem, as bf16_plan does at run time.
ops::Bf16PlanKey plan_key(const Bf16Problem& p) {
    const std::string name = to_string(p);
    const auto check = [&](bool ok, const char* arg, const auto&... what) {
        if (!ok) throw InvalidArgument(detail::str_cat(name, ": argument '", arg, "': expected ", what...));
    };
    check(p.num_sms > 0, "num_sms", "> 0, got ", p.num_sms);
    check(p.m > 0, "m", "> 0, got ", p.m);
    check(p.n > 0 && p.n % (p.out_f32 ? 4 : 8) == 0, "n", "> 0 and a multiple of ", p.out_f32 ? 4 : 8,
          " (16-byte output rows), got ", p.n);
    check(p.expected_m >= 0, "expected_m", ">= 0, got ", p.expected_m);
    ops::Bf16PlanKey key{p.m, p.n, p.k, p.mn_major_a, p.mn_major_b, p.out_f32, p.accumulate, ops::GemmKind::kDense,
                         1, 0, p.num_sms, 0, options().block_n_multiple};
    switch (p.kind) {
    case Bf16Kind::kDense:
        check(p.groups == 1 && p.expected_m == 0, "groups", "none for a dense problem, got ", p.groups);
        check(p.k > 0 && (p.mn_major_a || p.k % 8 == 0) && (p.mn_major_b || p.k % 8 == 0), "k",
              "> 0 and a multiple of 8 for a K-major operand (16-byte TMA rows), got ", p.k);
        check(!p.mn_major_a || p.m % 8 == 0, "m", "a multiple of 8 for an MN-major A (16-byte TMA rows), got ", p.m);
        check(!p.mn_major_b || p.n % 8 == 0, "n", "a multiple of 8 for an MN-major B (16-byte TMA rows), got ", p.n);
        return key;
    case Bf16Kind::kContiguous:
    case Bf16Kind::kPsum:
    case Bf16Kind::kMasked:
        check(!p.mn_major_a && !p.out_f32 && !p.accumulate, "kind", "a K-major A and BF16 D without C for ",
              "the m-grouped kinds");
        check(p.k > 0 && p.k % 64 == 0, "k", "> 0 and a multiple of 64, got ", p.k);
        check(p.groups > 0, "groups", "> 0, got ", p.groups);
        if (p.kind == Bf16Kind::kContiguous) {
            check(p.expected_m == 0, "expected_m", "none for the per-row layout, got ", p.expected_m);
            key.kind = ops::GemmKind::kContiguous;
            key.block_m = ops::contiguous_block_m("bf16 problem");
        } else {
            key.kind = p.kind == Bf16Kind::kPsum ? ops::GemmKind::kPsum : ops::GemmKind::kMasked;
            key.num_groups = static_cast<int>(p.groups);
        }
        key.m = ops::bf16_grouped_plan_rows(key.kind, p.m, p.groups, p.expected_m);
        return key;
    case Bf16Kind::kKGrouped:
        check(p.mn_major_a && p.mn_major_b && p.accumulate, "kind", "MN-major A and B with C for kgrouped");
        check(p.k == 0, "k", "0 for kgrouped (K is per group at run time), got ", p.k);
        check(p.m % 8 == 0 && p.n % 8 == 0, "m", "M and N multiples of 8 (16-byte TMA rows of the MN-major "
              "operands), got ", p.m, " and ", p.n);
        check(p.groups > 0 && p.groups <= kMaxKGroups, "groups", "1 to ", kMaxKGroups, ", got ", p.groups);
        key.kind = ops::GemmKind::kKGrouped;
        key.k = ops::kKGroupedPlanK;
        key.num_groups = static_cast<int>(p.groups);
        return key;
    }
    throw InvalidArgument(detail::str_cat(name, ": argument 'kind': expected a Bf16Kind, got ",
                                          static_cast<int>(p.kind)));
}

}  // namespace

Bf16Problem parse_bf16_problem(std::string_view text) {
    const catalog::ProblemText t = catalog::parse_problem_text(text, "bf16", kKinds);
    Bf16Problem p;
    p.m = t.m;
    p.n = t.n;
    p.k = t.k;
    p.groups = t.groups;
    p.expected_m = t.expected_m;
    for (const GroupedName& g : kGrouped)
        if (g.text == t.kind) {
            p.kind = g.kind;
            p.mn_major_a = g.kind == Bf16Kind::kKGrouped;
            p.mn_major_b = g.mn_b;
            p.out_f32 = g.out_f32;
            p.accumulate = g.kind == Bf16Kind::kKGrouped;
            return p;
        }
    std::string_view rest = t.kind;
    const Layout* layout = nullptr;
    for (const Layout& l : kLayouts)
        if (rest.substr(0, 2) == l.text) layout = &l;
    if (layout == nullptr) throw InvalidArgument(catalog::problem_text_error("bf16", kKinds, "an unknown KIND", text));
    rest.remove_prefix(2);
    if (rest.substr(0, 4) == "-f32") p.out_f32 = true, rest.remove_prefix(4);
    if (rest == "-c") p.accumulate = true, rest = {};
    if (!rest.empty()) throw InvalidArgument(catalog::problem_text_error("bf16", kKinds, "an unknown KIND", text));
    p.mn_major_a = layout->mn_a;
    p.mn_major_b = layout->mn_b;
    return p;
}

std::string to_string(const Bf16Problem& p) {
    std::string kind = "?";
    if (p.kind == Bf16Kind::kDense) {
        for (const Layout& l : kLayouts)
            if (l.mn_a == p.mn_major_a && l.mn_b == p.mn_major_b) kind = std::string(l.text);
        if (p.out_f32) kind += "-f32";
        if (p.accumulate) kind += "-c";
    } else {
        for (const GroupedName& g : kGrouped)
            if (g.kind == p.kind && g.mn_b == p.mn_major_b && (g.kind != Bf16Kind::kKGrouped || g.out_f32 == p.out_f32))
                kind = std::string(g.text);
    }
    return catalog::problem_text(kind, p.m, p.n, p.k, p.groups, p.expected_m);
}

Bf16Plan plan_bf16(const Bf16Problem& problem) {
    constexpr int kSmemPerBlock = 232448;  // SM90's opt-in limit (H100, H200, H800)
    const ops::Bf16PlanKey key = plan_key(problem);
    const heuristics::Bf16GemmProblem p = ops::bf16_planner_problem(key, kSmemPerBlock);
    const heuristics::Bf16GemmConfig c = heuristics::choose_bf16_gemm_config(p);
    return {c.describe(), ops::make_bf16_gemm_spec(c, p, key.kind).describe()};
}

CompiledKernel compile_bf16(const Bf16Problem& problem, CompilerKind compiler, const std::string& cache_dir) {
    return compile_spec(plan_bf16(problem).kernel, compiler, cache_dir);
}

}  // namespace tessera::aot
