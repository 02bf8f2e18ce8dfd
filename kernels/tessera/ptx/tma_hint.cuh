// TMA loads that carry an L2 cache policy (cp.async.bulk.tensor ... .L2::cache_hint) and the policy itself
// (createpolicy). Data streamed through once (a paged KV cache) is loaded evict-first, so that it does not push out of
// L2 what the kernel reads again or writes (queries, block tables, the logits being written).
#pragma once

#include <tessera/common.cuh>
#include <tessera/ptx/tma.cuh>

namespace tessera::ptx {

// wraps createpolicy.fractional.L2::evict_first.b64 (fraction 1.0: every access of the policy's loads)
TESSERA_DEVICE uint64_t l2_policy_evict_first() {
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}

// wraps cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint
TESSERA_DEVICE void tma_load_2d_hint(uint32_t smem_dst, const TmaDescriptor& desc, uint32_t bar, int32_t c0,
                                     int32_t c1, uint64_t policy) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%3, %4}], [%2], %5;"
        ::"r"(smem_dst), "l"(desc_addr(desc)), "r"(bar), "r"(c0), "r"(c1), "l"(policy)
        : "memory");
}

// wraps cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint
TESSERA_DEVICE void tma_load_3d_hint(uint32_t smem_dst, const TmaDescriptor& desc, uint32_t bar, int32_t c0,
                                     int32_t c1, int32_t c2, uint64_t policy) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%3, %4, %5}], [%2], %6;"
        ::"r"(smem_dst), "l"(desc_addr(desc)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "l"(policy)
        : "memory");
}

}  // namespace tessera::ptx
