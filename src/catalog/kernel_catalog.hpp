// The kernel catalog: the named suites `tessera compile --suite` fills the cache with (tessera/aot.hpp) and the
// CPU compile checks build. It sits above ops/: the suites are DeepGEMM's benchmark shapes as FP8 problems, and the
// ops plan their kernels, so an ahead-of-time cache holds what serving asks for.
#pragma once

#include <string_view>
#include <vector>

#include "jit/spec.hpp"
#include "tessera/aot.hpp"

namespace tessera::catalog {

// aot::suite: throws InvalidArgument naming the suites for an unknown name.
aot::Suite suite(std::string_view name, int num_sms);

// The distinct kernel specs of a suite (its layout kernels, then its FP8 problems' planned kernels; "all" adds the
// BF16 GEMM's kernels for DeepGEMM's BF16 test shapes).
std::vector<jit::KernelSpec> catalog_specs(std::string_view suite, int num_sms = aot::kH200NumSms);

}  // namespace tessera::catalog
