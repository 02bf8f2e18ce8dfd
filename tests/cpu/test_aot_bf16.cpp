// BF16 GEMM problems in the public ahead-of-time API (tessera/aot.hpp), through its header only: the text form, the
// plan (the same kernels the bf16 suite lists for DeepGEMM's test shapes), a compile into a private cache, and
// problems that could not run refused, naming the argument, with nothing compiled.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "test_helpers.hpp"
#include "tessera/aot.hpp"
#include "tessera/error.hpp"

using namespace tessera;

TEST(AotBf16, TextRoundTripsEveryKind) {
    for (const char* text : {"nt:1x4096x7168", "nn:4096x7168x2112", "tn:2112x4096x7168", "tt:64x128x256",
                             "nt-f32:1x129280x7168", "nt-c:128x2112x7168", "tn-f32-c:2112x4096x7168",
                             "contiguous:32768x6144x7168:8", "contiguous-nn:32768x6144x7168:8", "psum:4096x6144x7168:8",
                             "psum-nn:4096x6144x7168:8:1024", "masked:4096x6144x7168:32:192", "kgrouped:4096x7168x0:4",
                             "kgrouped-bf16:4096x7168x0:4"}) {
        SCOPED_TRACE(text);
        const aot::Bf16Problem p = aot::parse_bf16_problem(text);
        EXPECT_EQ(aot::to_string(p), text);
    }
    const aot::Bf16Problem tn = aot::parse_bf16_problem("tn-f32-c:2112x4096x7168");
    EXPECT_EQ(tn.kind, aot::Bf16Kind::kDense);
    EXPECT_TRUE(tn.mn_major_a && tn.mn_major_b && tn.out_f32 && tn.accumulate);
    const aot::Bf16Problem nn = aot::parse_bf16_problem("nn:4096x7168x2112");
    EXPECT_TRUE(!nn.mn_major_a && nn.mn_major_b && !nn.out_f32 && !nn.accumulate);
    const aot::Bf16Problem kg = aot::parse_bf16_problem("kgrouped:4096x7168x0:4");
    EXPECT_EQ(kg.kind, aot::Bf16Kind::kKGrouped);
    EXPECT_TRUE(kg.mn_major_a && kg.mn_major_b && kg.out_f32 && kg.accumulate);
    EXPECT_EQ(kg.groups, 4);
    for (const char* bad : {"nt", "nt:1x2", "nt:1x2x3:4:5:6", "nt-c-f32:1x8x8", "ntx:1x8x8", "fp8:1x8x8",
                            "dense:128x128x128", "nt:-1x8x8", "nt:1x8x8:g"}) {
        SCOPED_TRACE(bad);
        try {
            aot::parse_bf16_problem(bad);
            ADD_FAILURE() << "accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(std::string(e.what()).rfind("bf16 problem: expected KIND:MxNxK", 0), 0u) << e.what();
        }
    }
}

// The kernel planned for a problem is the op's: for DeepGEMM's test shapes it is one the bf16 suite lists (the
// suite plans them as the ops do).
TEST(AotBf16, PlansAreTheSuitesKernels) {
    const aot::Suite suite = aot::suite("bf16");
    for (const char* text : {"nt:1x4096x7168", "nt:128x2112x7168", "nt:4096x24576x1536", "nt-c:128x2112x7168",
                             "nn:4096x7168x2112", "tn-f32-c:2112x4096x7168", "tn:7168x4096x2048",
                             "nt-f32:4096x256x7168", "contiguous:32768x6144x7168:4", "contiguous-nn:32768x4096x4096:4",
                             "psum:32768x6144x7168:8:4096", "masked:4096x6144x7168:32:192",
                             "masked:4096x4096x2048:6:1024", "kgrouped:4096x7168x0:4", "kgrouped-bf16:7168x2048x0:16"}) {
        SCOPED_TRACE(text);
        const aot::Bf16Plan plan = aot::plan_bf16(aot::parse_bf16_problem(text));
        EXPECT_NE(std::find(suite.kernel_specs.begin(), suite.kernel_specs.end(), plan.kernel),
                  suite.kernel_specs.end())
            << plan.kernel;
        EXPECT_EQ(plan.kernel.rfind("bf16_gemm{", 0), 0u);
        EXPECT_FALSE(plan.config.empty());
    }
    // M only picks the tile: the decode and prefill plans of one (N, K) are different kernels.
    EXPECT_NE(aot::plan_bf16(aot::parse_bf16_problem("nt:1x2112x7168")).kernel,
              aot::plan_bf16(aot::parse_bf16_problem("nt:4096x2112x7168")).kernel);
    // Fewer SMs: a kernel of its own.
    aot::Bf16Problem fewer = aot::parse_bf16_problem("nt:4096x2112x7168");
    fewer.num_sms = 114;
    EXPECT_NE(aot::plan_bf16(fewer).kernel, aot::plan_bf16(aot::parse_bf16_problem("nt:4096x2112x7168")).kernel);
}

TEST(AotBf16, CompilesIntoTheGivenCacheOnceThenFindsIt) {
    const std::filesystem::path cache = test::make_temp_dir("tessera-aot-cache");
    const aot::Bf16Problem p = aot::parse_bf16_problem("nt:128x2112x7168");
    const aot::CompiledKernel first = aot::compile_bf16(p, CompilerKind::kNvrtc, cache.string());
    const aot::CompiledKernel second = aot::compile_bf16(p, CompilerKind::kNvrtc, cache.string());
    std::filesystem::remove_all(cache);
    EXPECT_FALSE(first.from_cache);
    EXPECT_TRUE(second.from_cache);
    EXPECT_EQ(first.spec, aot::plan_bf16(p).kernel);
    EXPECT_EQ(first.name, "bf16_gemm");
    EXPECT_EQ(first.key, second.key);
}

TEST(AotBf16, ProblemsThatCouldNotRunNameTheArgument) {
    const auto error = [](const char* text, int num_sms = aot::kH200NumSms) -> std::string {
        aot::Bf16Problem p = aot::parse_bf16_problem(text);
        p.num_sms = num_sms;
        try {
            aot::plan_bf16(p);
        } catch (const InvalidArgument& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_EQ(error("nt:1x4096x7100").rfind("nt:1x4096x7100: argument 'k': expected > 0 and a multiple of 8", 0), 0u);
    EXPECT_EQ(error("nt:0x4096x7168").rfind("nt:0x4096x7168: argument 'm'", 0), 0u);
    EXPECT_EQ(error("nt:1x4092x7168").rfind("nt:1x4092x7168: argument 'n': expected > 0 and a multiple of 8", 0), 0u);
    EXPECT_EQ(error("nt-f32:1x4092x7168"), "");  // FP32 rows of 4-element multiples are 16 bytes
    EXPECT_EQ(error("tt:100x4096x7168").rfind("tt:100x4096x7168: argument 'm': expected a multiple of 8", 0), 0u);
    EXPECT_EQ(error("tn:104x4096x7100"), "");  // both operands MN-major: any K
    EXPECT_EQ(error("nt:1x4096x7168:2").rfind("nt:1x4096x7168:2: argument 'groups'", 0), 0u);
    EXPECT_EQ(error("masked:64x4096x2000:2").rfind("masked:64x4096x2000:2: argument 'k': expected > 0 and a multiple "
                                                   "of 64", 0), 0u);
    EXPECT_EQ(error("psum:4096x4096x2048:0").rfind("psum:4096x4096x2048:0: argument 'groups'", 0), 0u);
    EXPECT_EQ(error("contiguous:4096x4096x2048:4:128").rfind("contiguous:4096x4096x2048:4:128: argument "
                                                             "'expected_m'", 0), 0u);
    EXPECT_EQ(error("kgrouped:4096x7168x4096:4").rfind("kgrouped:4096x7168x4096:4: argument 'k': expected 0", 0), 0u);
    EXPECT_EQ(error("kgrouped:4096x7168x0:300").rfind("kgrouped:4096x7168x0:300: argument 'groups'", 0), 0u);
    EXPECT_EQ(error("kgrouped:4100x7168x0:4").rfind("kgrouped:4100x7168x0:4: argument 'm'", 0), 0u);
    EXPECT_EQ(error("nt:1x4096x7168", 0).rfind("nt:1x4096x7168: argument 'num_sms'", 0), 0u);
    // Nothing is compiled for such a problem: the cache directory stays empty.
    const std::filesystem::path cache = test::make_temp_dir("tessera-aot-cache");
    EXPECT_THROW(aot::compile_bf16(aot::parse_bf16_problem("nt:1x4096x7100"), CompilerKind::kNvrtc, cache.string()),
                 InvalidArgument);
    EXPECT_TRUE(std::filesystem::is_empty(cache));
    std::filesystem::remove_all(cache);
}
