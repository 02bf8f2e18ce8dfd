// The kernel specs `tessera compile` fills the cache with, by suite ("layout", "all", ...). Ops register the
// specs they would build for the benchmark shapes, so an ahead-of-time cache matches what serving asks for.
#pragma once

#include <string>
#include <vector>

#include "jit/spec.hpp"

namespace tessera::jit {

std::vector<KernelSpec> catalog_specs(const std::string& suite);

}  // namespace tessera::jit
