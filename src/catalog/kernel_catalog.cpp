// The suites: DeepGEMM's dense and grouped benchmark shapes (../shared/reference/h200-baselines.md) and the layout
// kernels.
#include "catalog/kernel_catalog.hpp"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "catalog/family_specs.hpp"
#include "ops/bf16_gemm_common.hpp"
#include "ops/fp8_gemm_specs.hpp"
#include "ops/layout_specs.hpp"
#include "tessera/error.hpp"

namespace tessera::catalog {
namespace {

using aot::Fp8Kind;
using aot::Fp8Problem;

// Dense: each (N, K) of the benchmark at M = 1, 128 and 4096 (1D2D), and its weight-gradient GEMM (1D1D).
std::vector<Fp8Problem> fp8_gemm_problems(int num_sms) {
    std::vector<Fp8Problem> problems;
    const std::int64_t nk[][2] = {{2112, 7168}, {576, 7168}, {24576, 1536}, {32768, 512},
                                  {7168, 16384}, {4096, 7168}, {7168, 2048}};
    for (auto [n, k] : nk) {
        for (std::int64_t m : {1, 128, 4096})
            problems.push_back({Fp8Kind::kDense, m, n, k, 1, 0, Fp8Recipe::k1D2D, num_sms});
        problems.push_back({Fp8Kind::kDense, n, 4096, k, 1, 0, Fp8Recipe::k1D1D, num_sms});
    }
    return problems;
}

// Grouped: contiguous (per-row ids and psum), masked and k-grouped.
std::vector<Fp8Problem> fp8_grouped_problems(int num_sms) {
    std::vector<Fp8Problem> problems;
    const std::int64_t nk[][2] = {{6144, 7168}, {7168, 3072}, {4096, 4096}, {4096, 2048}};
    for (auto [n, k] : nk) {
        problems.push_back({Fp8Kind::kContiguous, 32768, n, k, 4, 0, Fp8Recipe::k1D2D, num_sms});
        problems.push_back({Fp8Kind::kPsum, 32768, n, k, 8, 4096, Fp8Recipe::k1D2D, num_sms});
    }
    for (auto [groups, expected] : {std::pair<int, int>{32, 192}, {6, 1024}, {32, 20}, {6, 20}})
        for (auto [n, k] : {std::pair<int, int>{6144, 7168}, {4096, 2048}})
            problems.push_back({Fp8Kind::kMasked, 4096, n, k, groups, expected, Fp8Recipe::k1D2D, num_sms});
    for (auto [groups, m, n] : {std::tuple<int, int, int>{4, 4096, 7168}, {4, 7168, 2048}, {8, 4096, 7168},
                                {8, 7168, 2048}, {16, 4096, 7168}, {16, 7168, 2048}})
        problems.push_back({Fp8Kind::kKGrouped, m, n, 0, groups, 0, Fp8Recipe::k1D1D, num_sms});
    return problems;
}

// The problems of DeepGEMM's BF16 test as planned for `num_sms` SMs, the kernels the compile checks build: dense
// (M = 1, 128, 4096 over its (N, K) pairs; each layout; BF16 and FP32 D; with and without accumulation), m-grouped
// (contiguous, psum, masked) and k-grouped.
std::vector<jit::KernelSpec> bf16_specs(int num_sms) {
    std::vector<jit::KernelSpec> specs;
    const std::int64_t nk[][2] = {{2112, 7168}, {576, 7168}, {24576, 1536}, {32768, 512},
                                  {7168, 16384}, {4096, 7168}, {7168, 2048}};
    const auto add = [&](heuristics::Bf16GemmProblem p, ops::GemmKind kind = ops::GemmKind::kDense) {
        p.num_sms = num_sms;
        p.dense = kind == ops::GemmKind::kDense;  // as the op plans
        const jit::KernelSpec spec = ops::make_bf16_gemm_spec(heuristics::choose_bf16_gemm_config(p), p, kind);
        if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
    };
    for (auto [n, k] : nk) {
        for (std::int64_t m : {1, 128, 4096}) {
            add({m, n, k});                                       // forward, BF16 out
            add({m, n, k, false, false, false, true});            // forward, BF16 out, C = D accumulated
        }
        add({4096, k, n, false, true});                           // dgrad: B MN-major
        add({n, 4096, k, true, true, true, true});                // wgrad: both MN-major, FP32 D += A·B
        add({n, 4096, k, true, true});                            // wgrad into BF16
    }
    add({4096, 256, 7168, false, false, true});                   // FP32 out
    // m-grouped (the kernel's kinds; the host ops route to them next): contiguous with B K- or MN-major at the
    // 128-row alignment, psum and masked (expected rows per group), over DeepGEMM's grouped (N, K).
    const std::int64_t grouped_nk[][2] = {{6144, 7168}, {7168, 3072}, {4096, 4096}, {4096, 2048}};
    for (auto [n, k] : grouped_nk) {
        for (bool mn_b : {false, true}) {
            heuristics::Bf16GemmProblem p{32768, n, k, false, mn_b};
            p.block_m = 128;
            add(p, ops::GemmKind::kContiguous);
            heuristics::Bf16GemmProblem psum{4096, n, k, false, mn_b};
            psum.num_groups = 8;
            add(psum, ops::GemmKind::kPsum);
        }
        for (auto [groups, expected] : {std::pair<int, int>{32, 192}, {6, 1024}, {32, 20}}) {
            heuristics::Bf16GemmProblem p{expected, n, k};
            p.num_groups = groups;
            add(p, ops::GemmKind::kMasked);
        }
    }
    // k-grouped weight gradients (TN, FP32 D[g] = C[g] + A_gᵀ B_g) over DeepGEMM's grouped shapes.
    for (auto [groups, m, n] : {std::tuple<int, int, int>{4, 4096, 7168}, {4, 7168, 2048}, {8, 4096, 7168},
                                {16, 7168, 2048}}) {
        heuristics::Bf16GemmProblem p{m, n, ops::kKGroupedPlanK, true, true, true, true};
        p.num_groups = groups;
        add(p, ops::GemmKind::kKGrouped);
        p.out_f32 = false;  // BF16 D: tiles reduce-added in BF16
        add(p, ops::GemmKind::kKGrouped);
    }
    // einsum over DeepGEMM's test shapes: 'bhr,hdr->bhd' (B K-major) and 'bhd,hdr->bhr' (B MN-major) batched over
    // the heads, and 'bmk,bnk->mn' summed over the batch.
    for (auto [heads, r, d] : {std::tuple<int, int, int>{128, 512, 128}, {8, 4096, 1024}}) {
        for (std::int64_t batch : {4, 32, 128, 4096, 8192}) {
            heuristics::Bf16GemmProblem bhd{batch, d, r};
            bhd.num_groups = heads;
            add(bhd, ops::GemmKind::kBatched);
            heuristics::Bf16GemmProblem bhr{batch, r, d, false, true};
            bhr.num_groups = heads;
            add(bhr, ops::GemmKind::kBatched);
        }
    }
    for (auto [m, n, k] : {std::tuple<int, int, int>{128, 384, 128}, {256, 256, 256}, {384, 128, 384}}) {
        for (int batch : {129, 4096, 8192}) {
            heuristics::Bf16GemmProblem p{m, n, k, false, false, true, true};
            p.num_groups = batch;
            p.num_sms = num_sms;
            const jit::KernelSpec spec = ops::make_bf16_gemm_spec(heuristics::choose_bf16_batch_sum_config(p), p,
                                                                  ops::GemmKind::kBatchSum);
            if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
        }
    }
    specs.push_back(ops::cast_fp32_to_bf16_spec());
    return specs;
}

// fp8_gemm_nt_skip_head_mid over DeepGEMM's test shapes (the dense plan, its stores spread head by head) and
// fp8_einsum 'bhr,hdr->bhd' (the FP8 kernel batched over the 8 heads).
std::vector<jit::KernelSpec> fp8_indexer_specs(int num_sms) {
    std::vector<jit::KernelSpec> specs;
    for (std::int64_t m : {128, 4096})
        for (std::int64_t n : {32768, 8192}) {
            aot::Fp8Problem dense;
            dense.m = m, dense.n = n, dense.k = 512, dense.num_sms = num_sms;
            ops::Fp8ProblemPlan plan = ops::plan_fp8_problem(dense, "catalog");
            plan.key.head_left = 128, plan.key.head_mid = 64, plan.key.head_right = 128;
            specs.push_back(ops::fp8_spec(plan.key, plan.config));
        }
    for (std::int64_t batch : {4, 32, 128, 4096, 8192}) {
        const ops::Fp8PlanKey key{batch, 1024, 4096, heuristics::Fp8GemmMode::k1D2D, ops::GemmKind::kBatched, 8, 0,
                                  num_sms, 0};
        specs.push_back(
            ops::fp8_spec(key, heuristics::choose_fp8_gemm_config(ops::fp8_problem(key, ops::kSm90MaxSmemBytes))));
    }
    return specs;
}

// The kernels of the families beyond the FP8 GEMM problems and the layout kernels, per suite: "bf16" (BF16 GEMMs
// and einsum), "hc_prenorm", "indexer" (MQA logits, paged MQA logits, skip-head-mid, fp8_einsum), "all".
std::vector<jit::KernelSpec> family_specs(std::string_view name, int num_sms) {
    const bool all = name == "all";
    std::vector<jit::KernelSpec> specs;
    const auto append = [&](const std::vector<jit::KernelSpec>& more) {
        for (const jit::KernelSpec& spec : more)
            if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
    };
    if (all || name == "bf16") append(bf16_specs(num_sms));
    if (all || name == "hc_prenorm") append(hc_prenorm_specs(num_sms));
    if (all || name == "indexer") {
        append(fp8_indexer_specs(num_sms));
        append(mqa_logits_specs(num_sms));
        append(paged_mqa_logits_specs(num_sms));
    }
    return specs;
}

}  // namespace

aot::Suite suite(std::string_view name, int num_sms) {
    const std::vector<std::string> names = aot::suite_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string expected;
        for (const std::string& n : names) expected += (expected.empty() ? "" : ", ") + n;
        throw InvalidArgument(detail::str_cat("suite: argument 'name': expected one of ", expected, ", got '", name,
                                              "'"));
    }
    const bool all = name == "all";
    aot::Suite s;
    if (all || name == "layout") s.layout_kernels = aot::layout_kernel_names();
    if (all || name == "fp8_gemm") s.fp8_problems = fp8_gemm_problems(num_sms);
    if (all || name == "fp8_grouped") {
        const std::vector<Fp8Problem> grouped = fp8_grouped_problems(num_sms);
        s.fp8_problems.insert(s.fp8_problems.end(), grouped.begin(), grouped.end());
    }
    for (const jit::KernelSpec& spec : family_specs(name, num_sms)) s.kernel_specs.push_back(spec.describe());
    return s;
}

std::vector<jit::KernelSpec> catalog_specs(std::string_view suite_name, int num_sms) {
    const aot::Suite s = suite(suite_name, num_sms);
    std::vector<jit::KernelSpec> specs;
    const auto add = [&](const jit::KernelSpec& spec) {
        if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
    };
    if (!s.layout_kernels.empty())
        for (const jit::KernelSpec& spec : ops::layout_specs()) add(spec);
    for (const Fp8Problem& p : s.fp8_problems) add(ops::plan_fp8_problem(p, "catalog").spec);
    for (const jit::KernelSpec& spec : family_specs(suite_name, num_sms)) add(spec);
    return specs;
}

}  // namespace tessera::catalog
