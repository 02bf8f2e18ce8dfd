// The FP8 problem text KIND:MxNxK[:G[:E]] (`tessera compile --fp8`, aot::parse_fp8_problem): the planned kernel of
// each kind, and clear errors for bad text or shapes that could not run.
#include <gtest/gtest.h>

#include <string>

#include "tessera/aot.hpp"
#include "tessera/error.hpp"

namespace {

std::string described(const std::string& desc) {
    return tessera::aot::plan_fp8(tessera::aot::parse_fp8_problem(desc)).kernel;
}

}  // namespace

TEST(Fp8ProblemSpec, EachKindPlansItsKernel) {
    const std::string dense = described("dense:4096x576x7168");
    EXPECT_NE(dense.find("kMode=0,"), std::string::npos) << dense;
    EXPECT_NE(dense.find("kShapeN=576,kShapeK=7168"), std::string::npos) << dense;
    EXPECT_EQ(dense.find("kGemmKind"), std::string::npos) << dense;  // dense is the default kind
    EXPECT_NE(described("wgrad:7168x4096x2048").find("kMode=1,"), std::string::npos);
    EXPECT_NE(described("contiguous:32768x6144x7168:4").find("kGemmKind=1"), std::string::npos);
    EXPECT_NE(described("psum:32768x4096x2048:8:4096").find("kGemmKind=2"), std::string::npos);
    EXPECT_NE(described("masked:4096x4096x2048:6:1024").find("kGemmKind=3"), std::string::npos);
    const std::string kgrouped = described("kgrouped:4096x7168x0:8");
    EXPECT_NE(kgrouped.find("kGemmKind=4"), std::string::npos) << kgrouped;
    EXPECT_NE(kgrouped.find("kNumGroups=8"), std::string::npos) << kgrouped;
}

// Psum takes 128x256 tiles in two N halves at every K of its suite, as the per-row-id kind does (faster on the H200;
// at K = 7168 only with the k-block loop unrolled over the stages).
TEST(Fp8ProblemSpec, PsumTakesWideTiles) {
    for (const char* desc : {"psum:8160x4096x2048:4", "psum:8256x4096x4096:8", "psum:8480x7168x3072:4",
                             "psum:8160x6144x7168:4", "contiguous:32640x6144x7168:4"}) {
        const std::string kernel = described(desc);
        EXPECT_NE(kernel.find("kBlockM=128,kBlockN=256,"), std::string::npos) << desc << ": " << kernel;
    }
}

// D in halves (a fourth stage for 128x256): masked plans at 1536 < K <= 2048 only, the rows that gained on the H200.
TEST(Fp8ProblemSpec, DHalvesOnlyForMaskedAtKUpTo2048) {
    for (const char* desc : {"masked:192x4096x2048:32:4096", "masked:1024x4096x2048:6:4096"}) {
        const std::string kernel = described(desc);
        EXPECT_NE(kernel.find("kBlockN=256,kBlockK=128,kNumStages=4,"), std::string::npos) << desc << ": " << kernel;
        EXPECT_NE(kernel.find("kDHalves=1"), std::string::npos) << desc << ": " << kernel;
    }
    for (const char* desc : {"masked:192x6144x7168:32:4096", "masked:192x4096x1536:32:4096", "psum:8160x4096x2048:4",
                             "contiguous:32640x4096x2048:4", "dense:4096x7168x2048"}) {
        const std::string kernel = described(desc);
        EXPECT_EQ(kernel.find("kDHalves"), std::string::npos) << desc << ": " << kernel;
    }
}

TEST(Fp8ProblemSpec, BadTextNamesWhatWasExpected) {
    const std::pair<const char*, const char*> cases[] = {
        {"dense:4096x576", "sizes MxNxK"},
        {"blah:1x2x128", "unknown KIND"},
        {"dense:0x576x7168", "argument 'm': expected M > 0, got M = 0"},
        {"dense:axbxc", "non-negative integers"},
        {"dense:-1x576x7168", "non-negative"},
        {"masked:1x2x3:4:5:6", "2 to 4 fields"},
        {"dense:128x576x0", "argument 'k': expected K > 0 and a multiple of 16"},
        {"dense:1x2x3", "argument 'k': expected K > 0 and a multiple of 16"},
        {"dense:128x2x128", "argument 'n': expected N > 0 and a multiple of 8"},
        {"wgrad:128x6x128", "argument 'n': expected N > 0 and a multiple of 4"},
        {"dense:128x576x128:2", "argument 'groups': expected 1 for dense"},
        {"contiguous:128x576x7168:x", "group count"},
        {"contiguous:128x576x7168:4:64", "argument 'expected_m': expected 0"},
        {"kgrouped:128x576x7168:4", "argument 'k': expected 0 for kgrouped"},
        {"dense", "2 to 4 fields"},
    };
    for (auto [text, expected] : cases) {
        try {
            tessera::aot::plan_fp8(tessera::aot::parse_fp8_problem(text));
            ADD_FAILURE() << text << ": no error";
        } catch (const tessera::InvalidArgument& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(expected), std::string::npos) << text << ": " << what;
            EXPECT_NE(what.find(text), std::string::npos) << what;
        }
    }
}
