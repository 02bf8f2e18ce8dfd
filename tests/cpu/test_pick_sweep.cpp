// Opt-in (TESSERA_PICK_SWEEP=1, 5-9 minutes on 2 cores): the heuristic's pick for every shape of a wide sweep (dense,
// contiguous, psum and masked; 22 N x 6 K) is compiled with NVRTC. No kernel may have its wgmma serialized by ptxas.
// Spilling picks are listed: at run time the planner plans those shapes again without the tile. Run it after a change
// to the kernel's loops (such as the tail-N loop). With the current planner it compiles 1090 distinct kernels, none
// serialized, and 23 picks spill.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <utility>

#include "heuristics/fp8_gemm_plan.hpp"
#include "jit/jit.hpp"
#include "ops/fp8_gemm_common.hpp"
#include "test_helpers.hpp"
#include "tessera/error.hpp"

using namespace tessera;

TEST(PickSweep, HeuristicPicksCompileWithoutSerializedWgmma) {
    const char* on = std::getenv("TESSERA_PICK_SWEEP");
    if (on == nullptr || std::string(on) != "1") GTEST_SKIP() << "set TESSERA_PICK_SWEEP=1 to run (~5 minutes)";
    const auto cache = test::make_temp_dir("tessera-cache");
    jit::Jit j(test::test_options(cache, CompilerKind::kNvrtc));
    std::set<std::string> seen;
    int spilling = 0;
    const auto check = [&](const ops::Fp8PlanKey& key) {
        const jit::KernelSpec spec =
            ops::fp8_spec(key, heuristics::choose_fp8_gemm_config(ops::fp8_problem(key, 232448)));
        if (!seen.insert(spec.describe()).second) return;
        try {
            j.build(spec);
        } catch (const SpillError& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.find("serialized"), std::string::npos) << what;
            if (what.find("local memory") != std::string::npos) {
                ++spilling;
                std::printf("spills (planned again at run time): m %lld n %lld k %lld kind %d\n",
                            static_cast<long long>(key.m), static_cast<long long>(key.n),
                            static_cast<long long>(key.k), static_cast<int>(key.kind));
            }
        }
    };
    using heuristics::Fp8GemmMode;
    using ops::GemmKind;
    const std::int64_t ns[] = {256, 384, 448, 512, 536, 560, 576, 1000, 1024, 1536, 2048, 2112, 3072, 4096, 4224,
                               4608, 6144, 7168, 8704, 9216, 24576, 32768};
    for (std::int64_t n : ns) {
        for (std::int64_t k : {512, 1536, 2048, 3216, 7168, 16384}) {
            for (std::int64_t m : {1, 65, 128, 1000, 4096})
                check({m, n, k, Fp8GemmMode::k1D2D, GemmKind::kDense, 1, 0, 132, 0});
            check({32768, n, k, Fp8GemmMode::k1D2D, GemmKind::kContiguous, 1, 128, 132, 0});
            check({4096, n, k, Fp8GemmMode::k1D2D, GemmKind::kPsum, 8, 0, 132, 0});
            for (auto [groups, expected_m] : {std::pair<int, int>{32, 192}, {6, 1024}, {32, 20}})
                check({expected_m, n, k, Fp8GemmMode::k1D2D, GemmKind::kMasked, groups, 0, 132, 0});
        }
    }
    std::printf("%zu distinct kernels, %d spilling picks\n", seen.size(), spilling);
    EXPECT_GT(seen.size(), 1000u);
    std::filesystem::remove_all(cache);
}
