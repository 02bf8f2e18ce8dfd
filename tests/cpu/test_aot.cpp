// The public ahead-of-time API (tessera/aot.hpp), through its header only: plans, a compile into a private cache and
// its reuse, the suites, and errors naming the argument for problems that could not run.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "test_helpers.hpp"
#include "tessera/aot.hpp"
#include "tessera/error.hpp"

using namespace tessera;

namespace {

// The int after `key` in `text` ("kBlockM=" -> 128 in "fp8_gemm{kMode=0,kBlockM=128,..."), or -1.
int int_after(const std::string& text, const std::string& key) {
    const std::size_t at = text.find(key);
    return at == std::string::npos ? -1 : std::stoi(text.substr(at + key.size()));
}

// The message of the InvalidArgument that plan_fp8 throws for `p`, or "" when it throws none.
std::string plan_error(const aot::Fp8Problem& p) {
    try {
        aot::plan_fp8(p);
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(Aot, PlansADenseProblem) {
    const aot::Fp8Problem p{aot::Fp8Kind::kDense, 4096, 576, 7168};
    EXPECT_EQ(p.num_sms, aot::kH200NumSms);
    EXPECT_EQ(aot::to_string(p), "dense:4096x576x7168");
    const aot::Fp8Plan plan = aot::plan_fp8(p);
    SCOPED_TRACE(plan.config + " / " + plan.kernel);
    // The kernel is the config's: same tile, same grid, and N, K (not M) as compile-time constants.
    std::smatch config;
    ASSERT_TRUE(std::regex_search(plan.config, config, std::regex(R"(^block (\d+)x(\d+)x128, .*, (\d+) CTAs,)")));
    const int block_m = std::stoi(config[1]), block_n = std::stoi(config[2]), ctas = std::stoi(config[3]);
    EXPECT_EQ(block_m, 128);  // 4096 rows fill 128-row tiles
    EXPECT_EQ(int_after(plan.kernel, "kBlockM="), block_m);
    EXPECT_EQ(int_after(plan.kernel, "kBlockN="), block_n);
    EXPECT_EQ(576 % block_n, 0);  // a tile width that divides N: no ragged last column of tiles
    EXPECT_EQ(int_after(plan.kernel, "kNumSMs="), ctas);
    EXPECT_LE(ctas, 132);
    EXPECT_NE(plan.kernel.find("kMode=0,"), std::string::npos);
    EXPECT_NE(plan.kernel.find("kShapeM=0,kShapeN=576,kShapeK=7168,"), std::string::npos);
    EXPECT_EQ(aot::parse_fp8_problem("dense:4096x576x7168").m, 4096);
    // Fewer SMs: a kernel of its own, for at most that many CTAs.
    aot::Fp8Problem fewer = p;
    fewer.num_sms = 114;
    const aot::Fp8Plan small = aot::plan_fp8(fewer);
    EXPECT_NE(small.kernel, plan.kernel);
    EXPECT_LE(int_after(small.kernel, "kNumSMs="), 114);
}

TEST(Aot, CompilesIntoTheGivenCacheOnceThenFindsIt) {
    const std::filesystem::path cache = test::make_temp_dir("tessera-aot-cache");
    const aot::Fp8Problem p = aot::parse_fp8_problem("dense:128x576x7168");
    const aot::CompiledKernel first = aot::compile_fp8(p, CompilerKind::kNvrtc, cache.string());
    const aot::CompiledKernel second = aot::compile_fp8(p, CompilerKind::kNvrtc, cache.string());
    bool has_files = false;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(cache))
        has_files = has_files || entry.is_regular_file();
    std::filesystem::remove_all(cache);
    EXPECT_FALSE(first.from_cache);
    EXPECT_GT(first.compile_seconds, 0.0);
    EXPECT_EQ(first.name, "fp8_gemm");
    EXPECT_EQ(first.spec, aot::plan_fp8(p).kernel);
    EXPECT_EQ(first.key.rfind("sm_90a/fp8_gemm/", 0), 0u) << first.key;
    EXPECT_EQ(first.spill_bytes, 0);
    EXPECT_TRUE(first.wgmma_serialized.empty()) << first.wgmma_serialized;
    if (first.registers >= 0) EXPECT_GT(first.registers, 0);  // -1: NVRTC printed no ptxas report here
    EXPECT_TRUE(second.from_cache);
    EXPECT_EQ(second.key, first.key);
    EXPECT_EQ(second.spec, first.spec);
    EXPECT_TRUE(has_files);
}

TEST(Aot, LayoutKernelsCompileAndUnknownNamesAreRefused) {
    const std::filesystem::path cache = test::make_temp_dir("tessera-aot-cache");
    const std::vector<std::string> names = aot::layout_kernel_names();
    ASSERT_FALSE(names.empty());
    const aot::CompiledKernel k = aot::compile_layout_kernel(names.front(), CompilerKind::kNvrtc, cache.string());
    EXPECT_EQ(k.name, names.front());
    EXPECT_FALSE(k.from_cache);
    try {
        aot::compile_layout_kernel("transpose", CompilerKind::kNvrtc, cache.string());
        ADD_FAILURE() << "an unknown layout kernel compiled";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("argument 'name'"), std::string::npos) << e.what();
    }
    std::filesystem::remove_all(cache);
}

TEST(Aot, SuitesNameTheirProblems) {
    const std::vector<std::string> names = aot::suite_names();
    EXPECT_EQ(names, (std::vector<std::string>{"layout", "fp8_gemm", "fp8_grouped", "bf16", "hc_prenorm", "indexer",
                                               "all"}));
    const aot::Suite layout = aot::suite("layout");
    EXPECT_EQ(layout.layout_kernels, aot::layout_kernel_names());
    EXPECT_TRUE(layout.fp8_problems.empty());
    const aot::Suite dense = aot::suite("fp8_gemm", 114), grouped = aot::suite("fp8_grouped"), all = aot::suite("all");
    EXPECT_TRUE(dense.layout_kernels.empty());
    EXPECT_EQ(all.fp8_problems.size(), dense.fp8_problems.size() + grouped.fp8_problems.size());
    EXPECT_EQ(all.layout_kernels, layout.layout_kernels);
    for (const aot::Fp8Problem& p : dense.fp8_problems) {
        EXPECT_EQ(p.kind, aot::Fp8Kind::kDense);
        EXPECT_EQ(p.num_sms, 114);
    }
    // Every problem of every suite plans, and its text reads back as the same problem.
    for (const aot::Fp8Problem& p : all.fp8_problems) {
        const std::string text = aot::to_string(p);
        SCOPED_TRACE(text);
        EXPECT_NO_THROW(aot::plan_fp8(p));
        const aot::Fp8Problem back = aot::parse_fp8_problem(text);
        EXPECT_EQ(aot::to_string(back), text);
        EXPECT_EQ(back.kind, p.kind);
        EXPECT_EQ(back.recipe, p.recipe);
        EXPECT_EQ(back.groups, p.groups);
        EXPECT_EQ(back.expected_m, p.expected_m);
    }
    try {
        aot::suite("dense");
        ADD_FAILURE() << "an unknown suite was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("argument 'name'"), std::string::npos) << e.what();
    }
}

TEST(Aot, ProblemsThatCouldNotRunNameTheArgument) {
    const aot::Fp8Problem good{aot::Fp8Kind::kDense, 4096, 576, 7168};
    ASSERT_EQ(plan_error(good), "");
    const auto with = [&](auto change) {
        aot::Fp8Problem p = good;
        change(p);
        return plan_error(p);
    };
    EXPECT_NE(with([](auto& p) { p.n = 0; }).find("argument 'n': expected N > 0 and a multiple of 8"),
              std::string::npos);
    EXPECT_NE(with([](auto& p) { p.n = 572; }).find("argument 'n'"), std::string::npos);
    EXPECT_NE(with([](auto& p) { p.k = 7000; }).find("argument 'k': expected K > 0 and a multiple of 16"),
              std::string::npos);
    EXPECT_NE(with([](auto& p) { p.m = 0; }).find("argument 'm'"), std::string::npos);
    EXPECT_NE(with([](auto& p) { p.num_sms = 0; }).find("argument 'num_sms'"), std::string::npos);
    EXPECT_NE(with([](auto& p) { p.groups = 4; }).find("argument 'groups'"), std::string::npos);
    EXPECT_NE(with([](auto& p) { p.kind = static_cast<aot::Fp8Kind>(42); }).find("argument 'kind'"),
              std::string::npos);
    EXPECT_NE(with([](auto& p) { p.kind = aot::Fp8Kind::kMasked, p.recipe = Fp8Recipe::k1D1D; }).find(
                  "argument 'recipe'"),
              std::string::npos);
    EXPECT_NE(with([](auto& p) { p.kind = aot::Fp8Kind::kKGrouped; }).find("argument 'k': expected 0 for kgrouped"),
              std::string::npos);
    // The message names the problem too.
    EXPECT_EQ(with([](auto& p) { p.k = 3; }).rfind("dense:4096x576x3: argument 'k'", 0), 0u);
    // Unknown kinds in the text form.
    try {
        aot::parse_fp8_problem("sparse:128x128x128");
        ADD_FAILURE() << "an unknown kind was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("unknown KIND"), std::string::npos) << e.what();
    }
    // Nothing is compiled for such a problem: the cache directory stays empty.
    const std::filesystem::path cache = test::make_temp_dir("tessera-aot-cache");
    aot::Fp8Problem bad = good;
    bad.k = 100;
    EXPECT_THROW(aot::compile_fp8(bad, CompilerKind::kNvrtc, cache.string()), InvalidArgument);
    EXPECT_TRUE(std::filesystem::is_empty(cache));
    std::filesystem::remove_all(cache);
}

// The families beyond the FP8 GEMM: each suite lists its kernels as spec lines, "all" lists them all, and a line
// compiles through compile_spec into the cache under its own spec (the cast kernel: small and quick).
TEST(Aot, FamilySuitesCompileBySpecLine) {
    const aot::Suite bf16 = aot::suite("bf16"), hc = aot::suite("hc_prenorm"), indexer = aot::suite("indexer"),
                     all = aot::suite("all");
    for (const aot::Suite* s : {&bf16, &hc, &indexer}) {
        EXPECT_FALSE(s->kernel_specs.empty());
        EXPECT_TRUE(s->fp8_problems.empty() && s->layout_kernels.empty());
    }
    EXPECT_EQ(all.kernel_specs.size(), bf16.kernel_specs.size() + hc.kernel_specs.size() + indexer.kernel_specs.size());
    EXPECT_TRUE(aot::suite("fp8_gemm").kernel_specs.empty());
    std::string cast;
    for (const std::string& line : bf16.kernel_specs)
        if (line.rfind("cast_fp32_to_bf16{", 0) == 0) cast = line;
    ASSERT_FALSE(cast.empty());
    const std::filesystem::path cache = test::make_temp_dir("tessera-aot-cache");
    const aot::CompiledKernel k = aot::compile_spec(cast, CompilerKind::kNvrtc, cache.string());
    EXPECT_EQ(k.spec, cast);
    EXPECT_EQ(k.name, "cast_fp32_to_bf16");
    EXPECT_FALSE(k.from_cache);
    EXPECT_TRUE(aot::compile_spec(cast, CompilerKind::kNvrtc, cache.string()).from_cache);
    for (const char* bad : {"cast_fp32_to_bf16", "nope{kA=1}", "cast_fp32_to_bf16{kNumThreads}",
                            "cast_fp32_to_bf16{kNumThreads=x}", "cast_fp32_to_bf16{kNumThreads=99999999999}"}) {
        SCOPED_TRACE(bad);
        EXPECT_THROW(aot::compile_spec(bad, CompilerKind::kNvrtc, cache.string()), InvalidArgument);
    }
    std::filesystem::remove_all(cache);
}
