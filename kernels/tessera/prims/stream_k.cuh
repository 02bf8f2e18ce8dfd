// Stream-K split of a persistent GEMM's partial last wave (usable on the host: CPU tests check the invariants).
//
// A dense problem of T work units (tiles, or multicast pairs of tiles) on P persistent workers (CTAs, or clusters)
// runs floor(T / P) whole waves as usual. The last R = T mod P units have R * kb k-blocks in all; worker w takes the
// contiguous range [w * U / P, (w + 1) * U / P) of them (U = R * kb, integer division), in unit-major order. Since
// R < P, a range is shorter than one unit, so it holds at most two pieces: the tail of one unit and the head of the
// next. The worker whose range holds a unit's first k-block owns the unit: that is always its last piece, and it
// stores the unit after adding the other workers' partial sums. Every other piece is a contribution; a worker makes
// at most one (its first piece), so contributions are addressed by worker.
#pragma once

#include <tessera/common.cuh>

namespace tessera::prims {

struct StreamKPiece {
    uint32_t unit;         // index among all T units
    uint32_t k_begin;      // first k-block of the piece
    uint32_t num_k_blocks;
    bool owner;            // the piece holds the unit's first k-block: add the contributions, then store
    uint32_t first_contributor;  // owner: workers [first_contributor, first_contributor + num_contributors) add
    uint32_t num_contributors;   // partials to this unit (0: the owner's range holds the whole unit)
};

struct StreamKPartition {
    uint32_t num_units;       // T
    uint32_t num_workers;     // P
    uint32_t k_blocks;        // kb per unit
    uint32_t first_sk_unit;   // T - R: units below run whole, in waves
    uint32_t sk_k_blocks;     // U = R * kb

    __host__ __device__ __forceinline__ StreamKPartition(uint32_t units, uint32_t workers, uint32_t kb)
        : num_units(units), num_workers(workers), k_blocks(kb),
          first_sk_unit(units - units % workers), sk_k_blocks((units % workers) * kb) {}

    __host__ __device__ __forceinline__ bool active() const { return sk_k_blocks >= num_workers && k_blocks > 0; }
    // 32-bit products: the host plans stream-K only where workers^2 * kb < 2^31 (U * P stays below it).
    __host__ __device__ __forceinline__ uint32_t range_begin(uint32_t w) const { return w * sk_k_blocks / num_workers; }
    // The worker whose range holds stream-K k-block u.
    __host__ __device__ __forceinline__ uint32_t worker_of(uint32_t u) const {
        return ((u + 1) * num_workers - 1) / sk_k_blocks;
    }
    // Piece i (0 or 1) of worker w's range; false when it has no such piece.
    __host__ __device__ __forceinline__ bool piece(uint32_t w, uint32_t i, StreamKPiece& p) const {
        uint32_t u = range_begin(w);
        const uint32_t end = range_begin(w + 1);
        if (u >= end || i > 1) return false;
        if (i == 1) {
            u = (u / k_blocks + 1) * k_blocks;  // the next unit's head
            if (u >= end) return false;
        }
        const uint32_t local_unit = u / k_blocks;
        const uint32_t unit_end = (local_unit + 1) * k_blocks;
        p.unit = first_sk_unit + local_unit;
        p.k_begin = u - local_unit * k_blocks;
        p.num_k_blocks = (end < unit_end ? end : unit_end) - u;
        p.owner = p.k_begin == 0;
        p.first_contributor = w + 1;
        p.num_contributors = p.owner ? worker_of(unit_end - 1) - w : 0;
        return true;
    }
};

}  // namespace tessera::prims
