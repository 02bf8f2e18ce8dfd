// What the HC pre-norm GEMM op shares with the kernel catalog: the kernel spec of a plan.
#pragma once

#include "heuristics/hc_prenorm_plan.hpp"
#include "jit/spec.hpp"

namespace tessera::ops {

jit::KernelSpec make_hc_prenorm_spec(const heuristics::HcPrenormConfig& c);

}  // namespace tessera::ops
