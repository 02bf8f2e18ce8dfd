// The BF16 GEMMs behind DeepGEMM's legacy names (tessera.legacy): the same kernels as m_grouped_bf16_gemm_nt_contiguous
// (per-row expert ids) and k_grouped_bf16_gemm_tn_contiguous (c = d), compiled under the entry names of DeepGEMM's
// legacy Triton kernels, which its test_legacy.py profiles. Internal: for the bindings.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/layout.hpp"
#include "tessera/tensor.hpp"

namespace tessera::ops {

void m_grouped_bf16_gemm_contiguous_tl(const TensorRef& a, const TensorRef& b, const TensorRef& d,
                                       const TensorRef& m_indices, Stream stream);
void k_grouped_bf16_gemm_tn_contiguous_tl(const TensorRef& a, const TensorRef& b, const TensorRef& d,
                                          const std::vector<std::int64_t>& ks, const TensorRef& ks_tensor,
                                          Stream stream);

}  // namespace tessera::ops
