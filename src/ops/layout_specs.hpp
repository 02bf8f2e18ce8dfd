// The kernel specs of the layout family (each compiles once: all shapes are run-time values).
#pragma once

#include <vector>

#include "jit/spec.hpp"

namespace tessera::ops {

const jit::KernelSpec& transpose_fp32_spec();
const jit::KernelSpec& pack_ue8m0_spec();
const jit::KernelSpec& pack_ue8m0_k_grouped_spec();
std::vector<jit::KernelSpec> layout_specs();

}  // namespace tessera::ops
