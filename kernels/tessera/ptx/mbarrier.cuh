// mbarrier wrappers (PTX ISA "Parallel Synchronization and Communication Instructions: mbarrier").
// Addresses are 32-bit shared::cta offsets (see ptx::smem_addr). No policy lives here: callers pick counts,
// parities and scopes.
#pragma once

#include <tessera/common.cuh>

namespace tessera::ptx {

// wraps mbarrier.init.shared::cta.b64
TESSERA_DEVICE void mbarrier_init(uint32_t bar, uint32_t arrival_count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrival_count) : "memory");
}

// wraps fence.mbarrier_init.release.cluster: makes initialised barriers visible to the cluster (and to TMA).
TESSERA_DEVICE void fence_mbarrier_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

// wraps mbarrier.arrive.shared::cta.b64 (release, cta scope)
TESSERA_DEVICE void mbarrier_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// wraps mbarrier.arrive.expect_tx.shared::cta.b64: one arrival plus `bytes` of expected transaction count.
TESSERA_DEVICE void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// wraps mapa.shared::cluster.u32: the address of the same shared-memory offset in CTA `cta_rank` of the cluster.
TESSERA_DEVICE uint32_t map_shared_rank(uint32_t addr, uint32_t cta_rank) {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(cta_rank));
    return remote;
}

// wraps mbarrier.arrive.shared::cluster.b64 on an address from map_shared_rank (default .release.cta semantics).
// NOTE: the consumers only read the stage through wgmma (completed by wait_group) before arriving, so there are no
// generic writes to publish at cluster scope; .release.cluster would add a MEMBAR.ALL.GPU to every release.
TESSERA_DEVICE void mbarrier_arrive_cluster(uint32_t remote_bar) {
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote_bar) : "memory");
}

// The try_wait idiom: spin on mbarrier.try_wait.parity until the phase with parity `parity` has completed.
// try_wait (not test_wait) lets the hardware suspend the thread for a while inside each probe.
TESSERA_DEVICE void mbarrier_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    do {
        asm volatile(
            "{\n.reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (done == 0);
}

// mbarrier_wait with .acquire.cluster: the phase was completed by other CTAs' st.async (release at cluster scope),
// whose bytes this CTA's threads then read.
TESSERA_DEVICE void mbarrier_wait_cluster(uint32_t bar, uint32_t parity) {
    uint32_t done;
    do {
        asm volatile(
            "{\n.reg .pred p;\n"
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (done == 0);
}

}  // namespace tessera::ptx
