// Stage/phase state of an S-stage mbarrier ring. Each role (producer, each consumer) keeps its own copy; the copies
// advance in the same order, so they agree on which (stage, phase) a given k-block uses. The state persists across
// tiles: a tile never resets it.
#pragma once

#include <tessera/common.cuh>

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

}  // namespace tessera::prims
