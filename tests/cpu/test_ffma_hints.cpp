// The promotion's reuse-hint pass (jit/ffma_hints.hpp) on real cubins: it changes only hint bits of FFMAs, caches the
// scale along the promotion's runs, never caches across a yield, and leaves non-ELF input alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "jit/ffma_hints.hpp"
#include "jit/jit.hpp"
#include "ops/fp8_gemm_common.hpp"
#include "test_helpers.hpp"

using namespace tessera;

namespace {

constexpr std::uint64_t kHintBits = (1ull << 45) | (0xFull << 58);

jit::KernelSpec dense_128x192() {
    jit::KernelSpec s(jit::Family::kFp8Gemm);
    s.set("kMode", 0).set("kBlockM", 128).set("kBlockN", 192).set("kBlockK", 128).set("kNumStages", 4);
    s.set("kNumMathWarpgroups", 2).set("kClusterM", 1).set("kClusterN", 1).set("kNumSMs", 132).set("kShapeM", 0);
    s.set("kShapeN", 6144).set("kShapeK", 7168).set("kGroupSize", 16);
    return s;
}

std::uint64_t word(const std::string& s, std::size_t at) {
    std::uint64_t v;
    std::memcpy(&v, s.data() + at, 8);
    return v;
}

// Over FFMAs (register form) in runs of >= 16: how many cache operand b, and how many both yield and cache (never
// allowed).
struct RunCount {
    int ffma = 0, reuse = 0, reuse_and_yield = 0;
};
bool plain_ffma(const std::string& s, std::size_t at) {
    const std::uint64_t lo = word(s, at);
    return (lo & 0xFFF) == 0x223 && ((lo >> 12) & 0xF) == 0x7;
}
// Word pairs outside .text decode as garbage, but runs of 16 plain FFMAs only occur in code.
RunCount count_runs(const std::string& cubin) {
    RunCount c;
    std::size_t at = 0;
    while (at + 16 <= cubin.size()) {
        std::size_t end = at;
        while (end + 16 <= cubin.size() && plain_ffma(cubin, end)) end += 16;
        if ((end - at) / 16 >= static_cast<std::size_t>(jit::kMinFfmaRun)) {
            for (std::size_t t = at; t < end; t += 16) {
                const std::uint64_t hi = word(cubin, t + 8);
                const bool reuse = (hi >> 59) & 1, yields = ((hi >> 45) & 1) == 0;
                ++c.ffma;
                c.reuse += reuse;
                c.reuse_and_yield += reuse && yields;
            }
        }
        at = end > at ? end : at + 16;
    }
    return c;
}

}  // namespace

TEST(FfmaHints, CachesTheScaleAlongThePromotionAndChangesOnlyHintBits) {
    const auto cache = test::make_temp_dir("tessera-cache");
    jit::Jit plain(test::test_options(cache, CompilerKind::kNvrtc));
    const std::string before = plain.build(dense_128x192()).cubin;  // no post-compile pass in the spec
    std::string after = before;
    jit::FfmaHintStats st;
    ASSERT_TRUE(jit::apply_ffma_reuse_hints(after, 4, &st));
    ASSERT_EQ(after.size(), before.size());
    EXPECT_GE(st.runs, 1);  // the promotion of the k-block loop
    EXPECT_GT(st.changed, 0);
    for (std::size_t at = 0; at + 16 <= before.size(); at += 16) {
        if (std::memcmp(before.data() + at, after.data() + at, 16) == 0) continue;
        const std::uint64_t lo = word(before, at);
        ASSERT_EQ(lo & 0xFFF, 0x223u) << "a changed instruction is not an FFMA, at " << at;
        EXPECT_EQ(word(after, at), lo) << "operands changed at " << at;
        EXPECT_EQ((word(before, at + 8) ^ word(after, at + 8)) & ~kHintBits, 0u) << "non-hint bits changed at " << at;
    }
    const RunCount b = count_runs(before), a = count_runs(after);
    EXPECT_EQ(a.ffma, b.ffma);
    EXPECT_EQ(a.reuse_and_yield, 0);
    EXPECT_EQ(b.reuse_and_yield, 0);  // ptxas's own rule, which the pass keeps
    EXPECT_GT(a.reuse, b.reuse + b.ffma / 8) << "ptxas caches the scale on every other FFMA; the pass on 3 of 4";
    std::filesystem::remove_all(cache);
}

TEST(FfmaHints, TheJitAppliesTheSpecsPassAndKeysTheCacheOnIt) {
    const auto cache = test::make_temp_dir("tessera-cache");
    jit::Jit j(test::test_options(cache, CompilerKind::kNvrtc));
    const jit::KernelSpec plain_spec = dense_128x192();
    jit::KernelSpec hinted = plain_spec;
    hinted.post.ffma_yield_interval = 4;
    EXPECT_FALSE(hinted == plain_spec);
    EXPECT_NE(j.key(hinted), j.key(plain_spec));
    const std::string patched = j.build(hinted).cubin, plain = j.build(plain_spec).cubin;
    EXPECT_NE(patched, plain);
    std::string expected = plain;
    ASSERT_TRUE(jit::apply_ffma_reuse_hints(expected, 4));
    EXPECT_EQ(patched, expected);
    std::filesystem::remove_all(cache);
}

// The FP8 family's policy: 1D2D kernels but the contiguous kind, interval 6 only for long masked and psum 128x256.
TEST(FfmaHints, TheFp8SpecChoosesTheIntervalPerKernel) {
    const auto with = [](std::int64_t mode, std::int64_t kind, std::int64_t block_n, std::int64_t k) {
        jit::KernelSpec s = dense_128x192();
        s.set("kMode", mode).set("kBlockN", block_n).set("kShapeK", k);
        if (kind != 0) s.set("kGemmKind", kind);
        return ops::fp8_ffma_yield_interval(s);
    };
    constexpr std::int64_t kDense = 0, kContiguous = 1, kPsum = 2, kMasked = 3, kKGrouped = 4;
    EXPECT_EQ(with(0, kMasked, 256, 7168), 6);
    EXPECT_EQ(with(0, kPsum, 256, 3072), 6);
    EXPECT_EQ(with(0, kMasked, 256, 2048), 4);  // measured 0.3-0.6 % slower with 6 at K = 2048
    EXPECT_EQ(with(0, kPsum, 256, 2048), 4);
    EXPECT_EQ(with(0, kMasked, 192, 7168), 4);  // 128x192 lost with 6
    EXPECT_EQ(with(0, kDense, 256, 7168), 4);
    EXPECT_EQ(with(0, kDense, 192, 7168), 4);
    EXPECT_EQ(with(0, kContiguous, 256, 7168), 0);  // measured slower with the pass
    EXPECT_EQ(with(1, kDense, 192, 7168), 0);       // 1D1D: per-column scales, no shared register to cache
    EXPECT_EQ(with(1, kKGrouped, 192, 7168), 0);
    // The spec builder carries the choice.
    heuristics::Fp8GemmConfig c;
    c.block_m = 128;
    c.block_n = 256;
    const jit::KernelSpec masked =
        ops::make_fp8_gemm_spec(c, heuristics::Fp8GemmMode::k1D2D, ops::GemmKind::kMasked, 7168, 7168, 1);
    EXPECT_EQ(masked.post.ffma_yield_interval, 6);
}

TEST(FfmaHints, LeavesAnythingButACudaElfAlone) {
    std::string text = "not an ELF image at all, just bytes of text long enough to have a header...............";
    const std::string copy = text;
    EXPECT_FALSE(jit::apply_ffma_reuse_hints(text, 4));
    EXPECT_EQ(text, copy);
    std::string empty;
    EXPECT_FALSE(jit::apply_ffma_reuse_hints(empty, 4));
    std::string elf = "\x7f" "ELF";
    elf.resize(64, '\0');
    EXPECT_FALSE(jit::apply_ffma_reuse_hints(elf, 4));  // class and machine fields say nothing
    std::string zero_interval = copy;
    EXPECT_FALSE(jit::apply_ffma_reuse_hints(zero_interval, 0));
}
