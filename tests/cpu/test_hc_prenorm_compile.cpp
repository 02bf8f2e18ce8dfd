// The HC pre-norm GEMM kernels compile for sm_90a through NVRTC and NVCC with no spills, no stack frame and no
// serialized wgmma (ptxas C7510-C7515): the catalog's (DeepGEMM's test shapes as planned) and every N the op takes,
// with and without the in-kernel split sum, one and two accumulators.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "catalog/family_specs.hpp"
#include "jit/jit.hpp"
#include "ops/hc_prenorm_gemm.hpp"
#include "test_helpers.hpp"

using namespace tessera;

namespace {

std::vector<jit::KernelSpec> hc_specs() {
    std::vector<jit::KernelSpec> specs = catalog::hc_prenorm_specs(132);
    for (int n : {8, 16, 24, 32})
        for (bool reduce : {false, true})
            for (int accs : {1, 2}) {
                heuristics::HcPrenormConfig c = heuristics::choose_hc_prenorm_config({4096, n, 7168, 1, 132});
                c.reduce = reduce;
                c.num_accumulators = accs;
                const jit::KernelSpec spec = ops::make_hc_prenorm_spec(c);
                if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
            }
    return specs;
}

}  // namespace

class HcPrenormCompile : public ::testing::TestWithParam<CompilerKind> {};

TEST_P(HcPrenormCompile, KernelsCompileWithoutSpillsOrSerializedWgmma) {
    const std::vector<jit::KernelSpec> catalog = catalog::hc_prenorm_specs(132);
    ASSERT_GE(catalog.size(), 2u);  // the summed and the explicit-split kernels of DeepGEMM's shapes
    const auto cache = test::make_temp_dir("tessera-cache");
    jit::Jit j(test::test_options(cache, GetParam()));
    for (const jit::KernelSpec& spec : hc_specs()) {
        SCOPED_TRACE(spec.describe());
        const jit::BuildResult r = j.build(spec);
        EXPECT_TRUE(r.compiled);
        EXPECT_EQ(r.cubin.substr(0, 4), std::string("\x7f" "ELF"));
        const jit::PtxasUsage u = jit::parse_ptxas_usage(r.log);
        if (u.registers < 0 && GetParam() == CompilerKind::kNvrtc)
            GTEST_SKIP() << "NVRTC printed no ptxas report on this machine; the load-time local-memory check covers it";
        EXPECT_GT(u.registers, 0) << r.log;
        EXPECT_LE(u.registers, 255) << r.log;
        EXPECT_EQ(u.spill_store_bytes + u.spill_load_bytes + u.stack_frame_bytes, 0) << r.log;
        EXPECT_FALSE(u.wgmma_serialized) << r.log;
    }
    std::filesystem::remove_all(cache);
}

INSTANTIATE_TEST_SUITE_P(Compilers, HcPrenormCompile, ::testing::Values(CompilerKind::kNvrtc, CompilerKind::kNvcc),
                         [](const auto& info) { return info.param == CompilerKind::kNvrtc ? "nvrtc" : "nvcc"; });
