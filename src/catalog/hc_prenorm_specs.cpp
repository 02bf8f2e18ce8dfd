#include "catalog/family_specs.hpp"

namespace tessera::catalog {

std::vector<jit::KernelSpec> hc_prenorm_specs(int) { return {}; }

}  // namespace tessera::catalog
