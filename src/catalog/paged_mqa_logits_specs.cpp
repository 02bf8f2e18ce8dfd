#include "catalog/family_specs.hpp"

namespace tessera::catalog {

std::vector<jit::KernelSpec> paged_mqa_logits_specs(int) { return {}; }

}  // namespace tessera::catalog
