// Every kernel of the catalog compiles for sm_90a through NVRTC and NVCC, with the no-spill check on and no wgmma
// serialization (ptxas C7514).
#include <gtest/gtest.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "catalog/kernel_catalog.hpp"
#include "jit/jit.hpp"
#include "ops/fp8_gemm_common.hpp"
#include "compile_check.hpp"
#include "test_helpers.hpp"
#include "tessera/error.hpp"

using namespace tessera;

class CompileKernels : public ::testing::TestWithParam<CompilerKind> {};

TEST_P(CompileKernels, AllCatalogKernelsCompileWithoutSpills) {
    const auto cache = test::make_temp_dir("tessera-cache");
    jit::Jit j(test::test_options(cache, GetParam()));
    // Every family's catalog kernels (the family tests add only variants the catalog lacks). C7514: an in-flight
    // accumulator might be touched; C7511: too few registers for the pipeline (a first tail-N loop kept the full
    // temporary live through it and hit this).
    for (const jit::KernelSpec& spec : catalog::catalog_specs("all"))
        if (!test::expect_clean_build(j, spec, GetParam())) GTEST_SKIP() << test::kNoPtxasReport;
    std::filesystem::remove_all(cache);
}

INSTANTIATE_TEST_SUITE_P(Compilers, CompileKernels, ::testing::Values(CompilerKind::kNvrtc, CompilerKind::kNvcc),
                         [](const auto& info) { return info.param == CompilerKind::kNvrtc ? "nvrtc" : "nvcc"; });

// A heuristic pick whose kernel spills for the problem's shape constants is planned again without that tile instead
// of failing the call: masked 64x192 spills at K = 1536 (28 bytes with this toolkit, for every N).
TEST(CompileKernels, SpillingPickIsPlannedAgainWithoutItsTile) {
    const auto cache = test::make_temp_dir("tessera-cache");
    jit::Jit j(test::test_options(cache, CompilerKind::kNvrtc));
    const ops::Fp8PlanKey key{1, 4096, 1536, heuristics::Fp8GemmMode::k1D2D, ops::GemmKind::kMasked, 32, 0, 132, 0};
    heuristics::Fp8GemmProblem problem = ops::fp8_problem(key, 232448);
    const heuristics::Fp8GemmConfig first = heuristics::choose_fp8_gemm_config(problem);
    bool reported = true;
    std::vector<std::string> built;
    const heuristics::Fp8GemmConfig c = ops::choose_buildable_config(problem, [&](const heuristics::Fp8GemmConfig& cfg) {
        const jit::BuildResult r = j.build(ops::fp8_spec(key, cfg));
        reported = reported && jit::parse_ptxas_usage(r.log).registers > 0;
        built.push_back(cfg.describe());
    });
    std::filesystem::remove_all(cache);
    if (!reported) GTEST_SKIP() << "NVRTC printed no ptxas report on this machine: spills are only seen at load time";
    EXPECT_FALSE(problem.excluded(c.block_m, c.block_n)) << c.describe();
    if (problem.num_excluded_tiles > 0) {
        EXPECT_TRUE(problem.excluded(first.block_m, first.block_n)) << first.describe();
        EXPECT_TRUE(c.block_m != first.block_m || c.block_n != first.block_n) << c.describe();
    }
    ASSERT_EQ(built.size(), 1u);  // only the config that built was kept
    EXPECT_EQ(built[0], c.describe());
}

// The re-plan itself, independent of which kernels this toolkit spills: the first pick "spills", the next one builds.
TEST(CompileKernels, ReplanExcludesTheSpillingTileAndKeepsTheNextPick) {
    heuristics::Fp8GemmProblem problem{1, 4096, 1536, heuristics::Fp8GemmMode::k1D2D, 132, 232448};
    problem.num_groups = 32;
    problem.reserved_regs = 48;
    problem.allow_cluster = false;
    const heuristics::Fp8GemmConfig first = heuristics::choose_fp8_gemm_config(problem);
    int calls = 0;
    const heuristics::Fp8GemmConfig c = ops::choose_buildable_config(problem, [&](const heuristics::Fp8GemmConfig& cfg) {
        if (++calls == 1) throw SpillError("kernel x uses local memory");
        EXPECT_FALSE(cfg.block_m == first.block_m && cfg.block_n == first.block_n) << cfg.describe();
    });
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(problem.num_excluded_tiles, 1);
    EXPECT_TRUE(problem.excluded(first.block_m, first.block_n));
    EXPECT_FALSE(c.block_m == first.block_m && c.block_n == first.block_n) << c.describe();
}

// A spilling D-in-halves plan is planned again with the whole D tile first, on the same tile (3 stages), before any
// tile is given up; then the halves stay off for that shape.
TEST(CompileKernels, SpillingDHalvesFallBackToTheWholeDTile) {
    heuristics::Fp8GemmProblem problem{192, 4096, 2048, heuristics::Fp8GemmMode::k1D2D, 132, 232448};
    problem.num_groups = 32;
    problem.m_is_hint = true;
    problem.allow_d_halves = true;
    problem.forced_block_m = 128;  // a forced tile keeps the fallback: halves are not part of what was forced
    problem.forced_block_n = 256;
    std::vector<heuristics::Fp8GemmConfig> tried;
    const heuristics::Fp8GemmConfig c = ops::choose_buildable_config(problem, [&](const heuristics::Fp8GemmConfig& cfg) {
        tried.push_back(cfg);
        if (cfg.d_halves) throw SpillError("kernel x uses local memory");
    });
    ASSERT_EQ(tried.size(), 2u);
    EXPECT_TRUE(tried[0].d_halves);
    EXPECT_EQ(tried[0].num_stages, 4);
    EXPECT_FALSE(c.d_halves);
    EXPECT_EQ(c.num_stages, 3);
    EXPECT_EQ(c.block_m, 128);
    EXPECT_EQ(c.block_n, 256);
    EXPECT_FALSE(problem.allow_d_halves);
    EXPECT_EQ(problem.num_excluded_tiles, 0);
    // Forced stages are the caller's answer: no fallback.
    problem.allow_d_halves = true;
    problem.forced_num_stages = 4;
    EXPECT_THROW(ops::choose_buildable_config(problem, [](const heuristics::Fp8GemmConfig&) {
                     throw SpillError("kernel x uses local memory");
                 }),
                 SpillError);
}

// A forced config is not re-planned: its spill is the caller's answer.
TEST(CompileKernels, ForcedSpillingConfigStillThrows) {
    heuristics::Fp8GemmProblem problem{1, 4096, 1536, heuristics::Fp8GemmMode::k1D2D, 132, 232448};
    problem.forced_block_m = 64;
    problem.forced_block_n = 192;
    EXPECT_THROW(ops::choose_buildable_config(problem, [](const heuristics::Fp8GemmConfig&) {
                     throw SpillError("kernel x uses local memory");
                 }),
                 SpillError);
    EXPECT_EQ(problem.num_excluded_tiles, 0);
}

// Exclusions are bounded: after kMaxExcludedTiles spilling picks the error stands.
TEST(CompileKernels, ReplanningStopsAfterTheExclusionLimit) {
    heuristics::Fp8GemmProblem problem{1, 4096, 1536, heuristics::Fp8GemmMode::k1D2D, 132, 232448};
    int calls = 0;
    EXPECT_THROW(ops::choose_buildable_config(problem, [&](const heuristics::Fp8GemmConfig&) {
                     ++calls;
                     throw SpillError("kernel x uses local memory");
                 }),
                 SpillError);
    EXPECT_EQ(problem.num_excluded_tiles, heuristics::Fp8GemmProblem::kMaxExcludedTiles);
    EXPECT_EQ(calls, heuristics::Fp8GemmProblem::kMaxExcludedTiles + 1);
}

TEST(PtxasReport, ParsesUsageAndFlagsLocalMemory) {
    const char* clean =
        "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
        "ptxas info    : Function properties for k\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 168 registers, used 1 barriers, 432 bytes cmem[0]\n";
    const jit::PtxasUsage u = jit::parse_ptxas_usage(clean);
    EXPECT_EQ(u.registers, 168);
    EXPECT_NO_THROW(jit::check_ptxas_report(clean, "k"));
    const char* spilling =
        "ptxas info    : Function properties for k\n"
        "    24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads\n"
        "ptxas info    : Used 255 registers\n";
    EXPECT_EQ(jit::parse_ptxas_usage(spilling).spill_store_bytes, 16);
    EXPECT_THROW(jit::check_ptxas_report(spilling, "k"), CompileError);
    EXPECT_FALSE(jit::check_ptxas_report("no report", "k"));
    EXPECT_TRUE(jit::check_ptxas_report(clean, "k"));
    EXPECT_FALSE(u.wgmma_serialized);
    // ptxas 13.0's words for a kernel whose wgmma it could not pipeline (seen on the first tail-N loop).
    const char* serialized =
        "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
        "insufficient register resources for the wgmma pipeline in the function 'k'\n"
        "ptxas info    : Used 168 registers, used 16 barriers\n";
    EXPECT_TRUE(jit::parse_ptxas_usage(serialized).wgmma_serialized);
    EXPECT_EQ(jit::parse_ptxas_usage(serialized).wgmma_serialized_reason.substr(0, 30),
              "ptxas info    : (C7511) Potent");
    // The advisory as the log's only line, with no newline around it: the reason is the whole line.
    const char* alone = "x wgmma.mma_async instructions are serialized due to y";
    EXPECT_EQ(jit::parse_ptxas_usage(alone).wgmma_serialized_reason, alone);
    try {
        jit::check_ptxas_report(serialized, "k");
        ADD_FAILURE() << "a serialized kernel was accepted";
    } catch (const SpillError& e) {
        EXPECT_NE(std::string(e.what()).find("kernel k: ptxas serialized its wgmma (ptxas info    : (C7511) Potential"),
                  std::string::npos) << e.what();
    }
}

TEST(KernelSource, OnlyTesseraIncludesAreAllowed) {
    EXPECT_THROW(jit::parse_includes("#include <cuda.h>\n", "x"), CompileError);
    EXPECT_THROW(jit::parse_includes("  #  include \"local.h\"\n", "x"), CompileError);
    const auto incs = jit::parse_includes("// c\n#include <tessera/a.cuh>\n#pragma once\n", "x");
    ASSERT_EQ(incs.size(), 1u);
    EXPECT_EQ(incs[0], "tessera/a.cuh");
}

namespace {

// The opt-in plans' kernels: each config built with NVRTC, its spec naming the feature, no spill, no stack frame and
// no wgmma serialization. False when NVRTC printed no ptxas report here (nothing to check).
bool opt_in_plans_build_cleanly(const std::vector<std::pair<ops::Fp8PlanKey, heuristics::Fp8GemmProblem>>& plans,
                                const char* spec_field) {
    const auto cache = test::make_temp_dir("tessera-cache");
    jit::Jit j(test::test_options(cache, CompilerKind::kNvrtc));
    bool reported = true;
    for (const auto& [key, problem] : plans) {
        const heuristics::Fp8GemmConfig c = heuristics::choose_fp8_gemm_config(problem);
        SCOPED_TRACE(c.describe());
        const jit::KernelSpec spec = ops::fp8_spec(key, c);
        EXPECT_NE(spec.describe().find(spec_field), std::string::npos) << spec.describe();
        const jit::BuildResult r = j.build(spec);
        const jit::PtxasUsage u = jit::parse_ptxas_usage(r.log);
        reported = reported && u.registers >= 0;
        if (u.registers < 0) continue;
        EXPECT_EQ(u.spill_store_bytes + u.spill_load_bytes + u.stack_frame_bytes, 0) << r.log;
        EXPECT_EQ(r.log.find("C7514"), std::string::npos) << r.log;
    }
    std::filesystem::remove_all(cache);
    return reported;
}

}  // namespace

// The short A boxes (16 rows; the planner's 32-row boxes for 16 < M <= 32 where asked) compile for every dense decode
// shape of the suite, split-K plans included, in 16- or 32-row boxes.
TEST(CompileKernels, ShortABoxPlansCompileWithoutSpills) {
    const std::int64_t nk[][2] = {{2112, 7168}, {576, 7168}, {24576, 1536}, {32768, 512},
                                  {7168, 16384}, {4096, 7168}, {7168, 2048}};
    std::vector<std::pair<ops::Fp8PlanKey, heuristics::Fp8GemmProblem>> plans;
    for (std::int64_t m : {1, 32})
        for (auto [n, k] : nk) {
            const ops::Fp8PlanKey key{m, n, k, heuristics::Fp8GemmMode::k1D2D, ops::GemmKind::kDense, 1, 0, 132, 0};
            heuristics::Fp8GemmProblem problem = ops::fp8_problem(key, 232448);
            problem.small_m_box_rows = 32;
            ASSERT_EQ(heuristics::choose_fp8_gemm_config(problem).load_rows_a, m <= 16 ? 16 : 32);
            plans.emplace_back(key, problem);
        }
    if (!opt_in_plans_build_cleanly(plans, "kLoadRowsA=")) GTEST_SKIP() << "NVRTC printed no ptxas report here";
}
