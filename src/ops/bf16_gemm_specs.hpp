// The BF16 GEMM's kernel spec for a plan, shared by the op and the kernel catalog.
#pragma once

#include <vector>

#include "heuristics/bf16_gemm_plan.hpp"
#include "jit/spec.hpp"
#include "ops/fp8_gemm_common.hpp"

namespace tessera::ops {

jit::KernelSpec make_bf16_gemm_spec(const heuristics::Bf16GemmConfig& c, const heuristics::Bf16GemmProblem& p,
                                    GemmKind kind);

// The problems of DeepGEMM's BF16 test as planned for `num_sms` SMs, the kernels the compile checks build: dense
// (M = 1, 128, 4096 over its (N, K) pairs; each layout; BF16 and FP32 D; with and without accumulation) and m-grouped
// (contiguous, psum, masked).
std::vector<jit::KernelSpec> bf16_catalog_specs(int num_sms);

}  // namespace tessera::ops
