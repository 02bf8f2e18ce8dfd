// The FP8 GEMM kernels the benchmark suite needs (DeepGEMM's dense shapes, H200 defaults), for ahead-of-time
// compilation and the CPU compile checks.
#pragma once

#include <string>
#include <vector>

#include "jit/spec.hpp"

namespace tessera::ops {

std::vector<jit::KernelSpec> fp8_gemm_suite_specs(int num_sms = 132, int max_smem_bytes = 232448);
// The grouped (MoE) kernels of DeepGEMM's grouped benchmark shapes: contiguous, psum, masked, k-grouped.
std::vector<jit::KernelSpec> fp8_grouped_suite_specs(int num_sms = 132, int max_smem_bytes = 232448);
// The planned kernel of one problem, for `tessera compile --fp8` (TESSERA_FP8_CONFIG applies as at run time):
// "KIND:MxNxK[:G[:E]]" with KIND dense (1D2D), wgrad (1D1D), contiguous (per-row ids; M = all rows), psum (G groups,
// E rows expected per group, default M / G), masked (M = M_max, G groups, E = expected_m, default M) or kgrouped
// (K ignored: per group at run time). Throws InvalidArgument naming what it expected.
jit::KernelSpec fp8_problem_spec(const std::string& desc, int num_sms = 132, int max_smem_bytes = 232448);

}  // namespace tessera::ops
