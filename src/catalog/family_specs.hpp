// The kernels of each family beyond the FP8 and BF16 GEMMs that the compile checks build (catalog_specs("all")),
// one file per family: DeepGEMM's test shapes as each family's ops plan them.
#pragma once

#include <vector>

#include "jit/spec.hpp"

namespace tessera::catalog {

std::vector<jit::KernelSpec> hc_prenorm_specs(int num_sms);   // hc_prenorm_specs.cpp
std::vector<jit::KernelSpec> mqa_logits_specs(int num_sms);   // mqa_logits_specs.cpp (non-paged, clean)
std::vector<jit::KernelSpec> paged_mqa_logits_specs(int num_sms);  // paged_mqa_logits_specs.cpp (+ metadata)

}  // namespace tessera::catalog
