// Thread-organisation wrappers: register reconfiguration, cluster barrier and rank, elect, lane id, named barriers.
#pragma once

#include <tessera/common.cuh>

namespace tessera::ptx {

// wraps setmaxnreg.inc.sync.aligned.u32 (all threads of the warpgroup execute it)
template <int kRegs>
TESSERA_DEVICE void setmaxnreg_inc() {
    static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// wraps setmaxnreg.dec.sync.aligned.u32
template <int kRegs>
TESSERA_DEVICE void setmaxnreg_dec() {
    static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// wraps mov.u32 %cluster_ctarank
TESSERA_DEVICE uint32_t cluster_cta_rank() {
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

// wraps barrier.cluster.arrive.release.aligned
TESSERA_DEVICE void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }

// wraps barrier.cluster.arrive.relaxed.aligned: an arrival that publishes nothing by itself (a preceding
// fence.mbarrier_init.release.cluster publishes barrier inits), without the release's memory barriers.
TESSERA_DEVICE void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory"); }

// wraps barrier.cluster.wait.acquire.aligned
TESSERA_DEVICE void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

// wraps elect.sync with a full mask: true in exactly one active lane of the warp.
TESSERA_DEVICE bool elect_one() {
    uint32_t elected;
    asm volatile(
        "{\n.reg .pred p;\n"
        "elect.sync _|p, 0xffffffff;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(elected));
    return elected != 0;
}

// wraps mov.u32 %laneid
TESSERA_DEVICE uint32_t lane_id() {
    uint32_t lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

// The warp index, made warp-uniform with a shuffle so the compiler keeps role branches uniform.
TESSERA_DEVICE uint32_t warp_id_uniform() { return __shfl_sync(0xffffffffu, threadIdx.x / 32, 0); }

// wraps bar.sync id, count. Id 0 is __syncthreads; callers use ids >= 1 (see kNamedBarrierBase users).
TESSERA_DEVICE void named_barrier_sync(uint32_t id, uint32_t num_threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(num_threads) : "memory");
}

// wraps bar.arrive id, count: counts this warp's threads toward barrier `id` without waiting for it.
TESSERA_DEVICE void named_barrier_arrive(uint32_t id, uint32_t num_threads) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(num_threads) : "memory");
}

}  // namespace tessera::ptx
