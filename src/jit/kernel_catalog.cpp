// Suites of kernel specs for ahead-of-time compilation.
#include "jit/kernel_catalog.hpp"

#include "ops/fp8_gemm_specs.hpp"
#include "ops/layout_specs.hpp"
#include "tessera/error.hpp"

namespace tessera::jit {

std::vector<KernelSpec> catalog_specs(const std::string& suite) {
    std::vector<KernelSpec> specs;
    if (suite == "layout" || suite == "all") {
        for (const KernelSpec& s : ops::layout_specs()) specs.push_back(s);
    }
    if (suite == "fp8_gemm" || suite == "all") {
        for (const KernelSpec& s : ops::fp8_gemm_suite_specs()) specs.push_back(s);
    }
    if (suite == "fp8_grouped" || suite == "all") {
        for (const KernelSpec& s : ops::fp8_grouped_suite_specs()) specs.push_back(s);
    }
    TESSERA_CHECK(!specs.empty(), "kernel suite: expected 'layout', 'fp8_gemm', 'fp8_grouped' or 'all', got '", suite,
                  "'");
    return specs;
}

}  // namespace tessera::jit
