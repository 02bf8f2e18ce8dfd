// TMA (cp.async.bulk.tensor) wrappers: 2D tile loads (plain and multicast), 3D and 4D loads, loads with an L2 policy,
// 3D stores (batched maps), stores, reduce-add stores, plain bulk stores (no map), bulk-group
// commit/wait, descriptor prefetch and the generic->async proxy fence. Coordinates are element indices, innermost
// first, as the tensor map defines them. `desc` is the address of a __grid_constant__ TmaDescriptor.
#pragma once

#include <tessera/common.cuh>

namespace tessera::ptx {

TESSERA_DEVICE uint64_t desc_addr(const TmaDescriptor& desc) { return reinterpret_cast<uint64_t>(&desc); }

// wraps prefetch.tensormap
TESSERA_DEVICE void prefetch_tensormap(const TmaDescriptor& desc) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(desc_addr(desc)) : "memory");
}

// wraps cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
TESSERA_DEVICE void tma_load_2d(uint32_t smem_dst, const TmaDescriptor& desc, uint32_t bar, int32_t c0, int32_t c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
        ::"r"(smem_dst), "l"(desc_addr(desc)), "r"(bar), "r"(c0), "r"(c1)
        : "memory");
}

// wraps cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
TESSERA_DEVICE void tma_load_3d(uint32_t smem_dst, const TmaDescriptor& desc, uint32_t bar, int32_t c0, int32_t c1,
                                int32_t c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
        ::"r"(smem_dst), "l"(desc_addr(desc)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
}

// wraps cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes
TESSERA_DEVICE void tma_load_4d(uint32_t smem_dst, const TmaDescriptor& desc, uint32_t bar, int32_t c0, int32_t c1,
                                int32_t c2, int32_t c3) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
        "[%2];" ::"r"(smem_dst),
        "l"(desc_addr(desc)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
}

// Loads with an L2 cache policy: data streamed through once (a paged KV cache) is loaded evict-first, so that it does
// not push out of L2 what the kernel reads again or writes.
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

// wraps cp.async.bulk.tensor.2d...multicast::cluster: the box lands at the same offset in every CTA of `cta_mask`
// and completes `bytes` on the same-offset barrier of each of them.
TESSERA_DEVICE void tma_load_2d_multicast(uint32_t smem_dst, const TmaDescriptor& desc, uint32_t bar, int32_t c0,
                                          int32_t c1, uint16_t cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4}], [%2], %5;"
        ::"r"(smem_dst), "l"(desc_addr(desc)), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask)
        : "memory");
}

// wraps cp.async.bulk.prefetch.tensor.2d.L2.global.tile: brings a box into L2 only (no shared memory, no barrier;
// clipped at the tensor bounds)
TESSERA_DEVICE void tma_prefetch_l2_2d(const TmaDescriptor& desc, int32_t c0, int32_t c1) {
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(desc_addr(desc)), "r"(c0),
                 "r"(c1)
                 : "memory");
}

// wraps cp.async.bulk.tensor.2d.global.shared::cta.bulk_group (store; clipped at the tensor bounds)
TESSERA_DEVICE void tma_store_2d(const TmaDescriptor& desc, uint32_t smem_src, int32_t c0, int32_t c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                 ::"l"(desc_addr(desc)), "r"(smem_src), "r"(c0), "r"(c1)
                 : "memory");
}

// wraps cp.async.bulk.tensor.3d.global.shared::cta.bulk_group (store; clipped at the tensor bounds)
TESSERA_DEVICE void tma_store_3d(const TmaDescriptor& desc, uint32_t smem_src, int32_t c0, int32_t c1, int32_t c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];"
                 ::"l"(desc_addr(desc)), "r"(smem_src), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

// wraps cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.bulk_group (global += smem, clipped)
TESSERA_DEVICE void tma_reduce_add_2d(const TmaDescriptor& desc, uint32_t smem_src, int32_t c0, int32_t c1) {
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.bulk_group [%0, {%2, %3}], [%1];"
                 ::"l"(desc_addr(desc)), "r"(smem_src), "r"(c0), "r"(c1)
                 : "memory");
}

// wraps cp.async.bulk.global.shared::cta.bulk_group: `bytes` (a multiple of 16) from shared memory to global memory
// (both 16-byte aligned), no tensor map.
TESSERA_DEVICE void bulk_store(void* dst, uint32_t smem_src, uint32_t bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(smem_src), "r"(bytes)
                 : "memory");
}

// wraps cp.async.bulk.commit_group
TESSERA_DEVICE void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// wraps cp.async.bulk.wait_group.read N: the source smem of all but the newest N groups may be reused.
template <int N>
TESSERA_DEVICE void bulk_wait_group_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// wraps cp.async.bulk.wait_group N: all but the newest N groups have completed (writes performed).
template <int N>
TESSERA_DEVICE void bulk_wait_group() {
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// wraps fence.proxy.async.shared::cta: orders this thread's generic smem writes before later async-proxy (TMA) reads.
TESSERA_DEVICE void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

}  // namespace tessera::ptx
