// The HC pre-norm GEMM kernels compile for sm_90a through NVRTC and NVCC with no spills, no stack frame and no
// serialized wgmma (ptxas C7510-C7515) for every N the op takes, with and without the in-kernel split sum, one and
// two accumulators (the catalog's, DeepGEMM's test shapes as planned, are compiled by test_compile_kernels.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "catalog/family_specs.hpp"
#include "jit/jit.hpp"
#include "ops/hc_prenorm_gemm.hpp"
#include "compile_check.hpp"
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
    // The cluster sums: every N at every cluster width (two piece groups per receiving rank at 2, at most one from 4;
    // at N = 32 and 4 the last rank owns a group and the squares), with the stages that leave room for the receive
    // buffer.
    for (int n : {8, 16, 24, 32})
        for (int cluster : {2, 4, 8, 16}) {
            heuristics::HcPrenormConfig c = heuristics::choose_hc_prenorm_config({13, n, 7168, cluster, 132});
            c.reduce = true;
            c.cluster = cluster;
            while (heuristics::hc_prenorm_smem_bytes(n, c.num_stages, cluster) > 232448) --c.num_stages;
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
    bool reported = true;
    for (const jit::KernelSpec& spec : hc_specs())  // (the catalog's own are built by test_compile_kernels.cpp)
        if (reported && std::find(catalog.begin(), catalog.end(), spec) == catalog.end())
            reported = test::expect_clean_build(j, spec, GetParam());
    std::filesystem::remove_all(cache);
    if (!reported) GTEST_SKIP() << test::kNoPtxasReport;
}

INSTANTIATE_TEST_SUITE_P(Compilers, HcPrenormCompile, ::testing::Values(CompilerKind::kNvrtc, CompilerKind::kNvcc),
                         [](const auto& info) { return info.param == CompilerKind::kNvrtc ? "nvrtc" : "nvcc"; });
