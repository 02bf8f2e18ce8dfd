// The FP8 GEMM plans made ahead of time, with no device: for the public AOT API (tessera/aot.hpp, implemented in
// src/catalog/), `tessera compile` and the CPU compile checks.
#pragma once

#include "heuristics/fp8_gemm_plan.hpp"
#include "jit/spec.hpp"
#include "ops/fp8_gemm_common.hpp"
#include "tessera/aot.hpp"

namespace tessera::ops {

// The dynamic shared memory per block every SM90 part allows (227 KiB).
inline constexpr int kSm90MaxSmemBytes = 232448;

struct Fp8ProblemPlan {
    Fp8PlanKey key;                      // fp8_spec(key, config) is the kernel of another config of the problem
    heuristics::Fp8GemmProblem problem;  // what the planner saw (choose_buildable_config may exclude tiles from it)
    heuristics::Fp8GemmConfig config;
    jit::KernelSpec spec;
};

// The plan the GEMMs make for `problem` on a device with problem.num_sms SMs (TESSERA_FP8_CONFIG applies as at run
// time), after the checks they make of its shape at the call (check_tma_k, check_tma_n, group limits), so that no
// kernel is planned that could not be launched. `op` names the problem in error messages.
Fp8ProblemPlan plan_fp8_problem(const aot::Fp8Problem& problem, const char* op,
                                int max_smem_bytes = kSm90MaxSmemBytes);

}  // namespace tessera::ops
