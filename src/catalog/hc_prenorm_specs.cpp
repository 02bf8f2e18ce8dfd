// The HC pre-norm GEMM kernels of DeepGEMM's test (tests/test_hyperconnection.py) as tf32_hc_prenorm_gemm plans them:
// N = 24, K in {28672, 7680, 7168}, M in {13, 137, 4096, 8192}, num_splits None (the planner's own splits, summed
// in the kernel where it splits) and 16.
#include <algorithm>

#include "catalog/family_specs.hpp"
#include "ops/hc_prenorm_gemm.hpp"

namespace tessera::catalog {

std::vector<jit::KernelSpec> hc_prenorm_specs(int num_sms) {
    std::vector<jit::KernelSpec> specs;
    for (std::int64_t m : {13, 137, 4096, 8192})
        for (std::int64_t k : {28672, 7680, 7168})
            for (int num_splits : {0, 16}) {
                heuristics::HcPrenormProblem p{m, 24, k, num_splits, num_sms};
                const jit::KernelSpec spec = ops::make_hc_prenorm_spec(heuristics::choose_hc_prenorm_config(p));
                if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
            }
    return specs;
}

}  // namespace tessera::catalog
