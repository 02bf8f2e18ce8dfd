// The S-stage TMA/mbarrier ring every SM90 kernel runs between its producer and its consumers.
//
//   full[s]   count 1: the producer's arrive.expect_tx(bytes of the stage's loads); the TMA completes the bytes.
//   empty[s]  count = consumer warps x CTAs of the cluster: each consumer warp of each CTA that reads the stage
//             arrives once when done with it.
//
// Each role (producer, each consumer) keeps its own RingState; the copies advance in the same order, so they agree on
// which (stage, phase) a given k-block uses. The state persists across tiles: a tile never resets it.
#pragma once

#include <tessera/common.cuh>
#include <tessera/ptx/mbarrier.cuh>
#include <tessera/ptx/memory.cuh>
#include <tessera/ptx/sync.cuh>

namespace tessera::prims {

template <int kNumStages>
struct RingState {
    static_assert(kNumStages >= 1 && kNumStages <= 32, "stage count out of range");

    uint32_t stage = 0;
    uint32_t phase = 0;  // parity of the barrier phase that completes this pass over the ring

    // Move to the next stage; the phase flips each time the ring wraps.
    __host__ __device__ void advance() {
        if (++stage == kNumStages) {
            stage = 0;
            phase ^= 1u;
        }
    }
};

// Initialises the ring's barriers (one thread; the caller fences and synchronizes after its own barriers).
template <int kNumStages>
TESSERA_DEVICE void init_ring(uint64_t* full, uint64_t* empty, uint32_t empty_arrivals) {
    for (int s = 0; s < kNumStages; ++s) {
        ptx::mbarrier_init(ptx::smem_addr(&full[s]), 1);
        ptx::mbarrier_init(ptx::smem_addr(&empty[s]), empty_arrivals);
    }
}

// Every barrier of the cluster is initialised before any thread (or a peer's multicast) uses one.
template <int kClusterCtas>
TESSERA_DEVICE void sync_after_init() {
    if constexpr (kClusterCtas > 1) {
        ptx::cluster_arrive();
        ptx::cluster_wait();
    } else {
        __syncthreads();
    }
}

// The entry of a warp-specialized kernel whose math warpgroups come first and whose producer warpgroup follows them
// (warp kNumMathThreads / 32 on): one elected lane of the producer warp prefetches the tensor maps (prefetch()), one
// of the next warp initializes the barriers (init(), then the init fence), the CTA synchronizes, setmaxnreg moves
// registers from the producer warpgroup to the math warpgroups (the kernel asserts the split fits its launch pool),
// and the producer warp runs produce(lane) while every math warp runs consume(warpgroup, warp in group, lane); then
// every warp of the producer warpgroup runs producer_group(warp in the group, lane): the other three warps' own role
// (they start on it at once), or a split-K kernel's cluster barriers.
template <int kNumMathThreads, int kProducerRegs, int kConsumerRegs, class Prefetch, class Init, class Produce,
          class Consume, class ProducerGroup>
TESSERA_DEVICE void run_warp_roles(Prefetch&& prefetch, Init&& init, Produce&& produce, Consume&& consume,
                                   ProducerGroup&& producer_group) {
    const uint32_t warp = ptx::warp_id_uniform();
    const uint32_t lane = ptx::lane_id();
    constexpr uint32_t kProducerWarp = kNumMathThreads / 32;
    if (warp == kProducerWarp && ptx::elect_one()) prefetch();
    if (warp == kProducerWarp + 1 && ptx::elect_one()) {
        init();
        ptx::fence_mbarrier_init();
    }
    sync_after_init<1>();
    if (warp >= kProducerWarp) {
        ptx::setmaxnreg_dec<kProducerRegs>();
        if (warp == kProducerWarp) produce(lane);
        producer_group(warp - kProducerWarp, lane);
    } else {
        ptx::setmaxnreg_inc<kConsumerRegs>();
        consume(warp / 4, warp % 4, lane);
    }
}
template <int kNumMathThreads, int kProducerRegs, int kConsumerRegs, class Prefetch, class Init, class Produce,
          class Consume>
TESSERA_DEVICE void run_warp_roles(Prefetch&& prefetch, Init&& init, Produce&& produce, Consume&& consume) {
    run_warp_roles<kNumMathThreads, kProducerRegs, kConsumerRegs>(prefetch, init, produce, consume,
                                                                   [](uint32_t, uint32_t) {});
}

// Producer, one k-block: waits until the consumers released the stage, then either issues its loads
// (issue(stage, full_barrier)) and arms the full barrier with their byte count, or, for a tile that loads nothing (a
// cluster's zero tile), arrives without bytes so that both rings of the pair stay in step. Returns whether it loaded.
template <int kNumStages, class Issue>
TESSERA_DEVICE bool produce_stage(RingState<kNumStages>& ring, uint64_t* full, uint64_t* empty, bool loads,
                                  uint32_t tx_bytes, const Issue& issue) {
    const uint32_t s = ring.stage;
    ptx::mbarrier_wait(ptx::smem_addr(&empty[s]), ring.phase ^ 1u);
    const uint32_t full_bar = ptx::smem_addr(&full[s]);
    if (!loads) {
        ptx::mbarrier_arrive(full_bar);
        ring.advance();
        return false;
    }
    issue(s, full_bar);
    ptx::mbarrier_arrive_expect_tx(full_bar, tx_bytes);
    ring.advance();
    return true;
}

// Producer, before exit in a cluster: waits for the release of every stage still in use, after which no remote
// arrival can target this CTA's barriers (its shared memory may then be reused).
template <int kNumStages>
TESSERA_DEVICE void drain_ring(RingState<kNumStages>& ring, uint64_t* empty) {
    for (int i = 0; i < kNumStages; ++i) {
        ptx::mbarrier_wait(ptx::smem_addr(&empty[ring.stage]), ring.phase ^ 1u);
        ring.advance();
    }
}

// Consumer warp, done with a stage: one arrival on its empty barrier. In a cluster of two, lane i arrives on CTA i's
// barrier whenever the peer has a tile (a multicast into the peer must not land in a stage the peer still reads, so
// the two rings advance in lock step); without a peer tile both lanes arrive locally.
template <int kClusterSize>
TESSERA_DEVICE void release_stage(uint64_t* empty, uint32_t stage, bool peer_alive, uint32_t lane) {
    const uint32_t bar = ptx::smem_addr(&empty[stage]);
    if constexpr (kClusterSize == 1) {
        if (lane == 0) ptx::mbarrier_arrive(bar);
    } else if (lane < 2) {
        const uint32_t target = peer_alive ? lane : ptx::cluster_cta_rank();
        ptx::mbarrier_arrive_cluster(ptx::map_shared_rank(bar, target));
    }
}

}  // namespace tessera::prims
