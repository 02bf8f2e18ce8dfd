// The FP8 GEMM kernels the benchmark suite needs (DeepGEMM's dense shapes, H200 defaults), for ahead-of-time
// compilation and the CPU compile checks.
#pragma once

#include <vector>

#include "jit/spec.hpp"

namespace tessera::ops {

std::vector<jit::KernelSpec> fp8_gemm_suite_specs(int num_sms = 132, int max_smem_bytes = 232448);
// The grouped (MoE) kernels of DeepGEMM's grouped benchmark shapes: contiguous, psum, masked, k-grouped.
std::vector<jit::KernelSpec> fp8_grouped_suite_specs(int num_sms = 132, int max_smem_bytes = 232448);

}  // namespace tessera::ops
