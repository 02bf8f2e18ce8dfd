// CPU check of prims::PersistentTileScheduler (compiled as host code by nvcc): every tile is visited exactly once,
// and for clusters of 2 the CTAs of a pair either multicast on adjacent tiles sharing one operand or both do not.
// Usage: nvcc -std=c++20 -arch=sm_90a -Ikernels -o /tmp/sched dev/fp8_gemm/scheduler_check.cu && /tmp/sched
#include <tessera/prims/scheduler.cuh>

#include <cstdio>
#include <vector>

using tessera::uint32_t;

template <int kGroup, int kCluster, bool kAlongM>
int check(uint32_t m, uint32_t n, uint32_t num_ctas) {
    using S = tessera::prims::PersistentTileScheduler<128, 128, kGroup, kCluster, kAlongM>;
    int errors = 0;
    S probe(m, n, 0, num_ctas);
    std::vector<int> seen(probe.num_tiles, 0);
    for (uint32_t cta = 0; cta < num_ctas; ++cta) {
        S s(m, n, cta, num_ctas);
        tessera::prims::TileCoord t;
        for (uint32_t id = cta; s.next(t); id += num_ctas) {
            if (t.m_block >= s.num_m_blocks || t.n_block >= s.num_n_blocks) { ++errors; continue; }
            ++seen[t.m_block * s.num_n_blocks + t.n_block];
            if (kCluster == 2) {
                const tessera::prims::TileCoord peer = s.tile_at(id ^ 1u);
                const bool peer_alive = (id ^ 1u) < s.num_tiles;
                if (t.peer_alive != peer_alive) ++errors;
                if (peer_alive && peer.multicast != t.multicast) ++errors;  // both CTAs decide alike
                if (t.multicast) {
                    const uint32_t tp = kAlongM ? t.m_block : t.n_block, pp = kAlongM ? peer.m_block : peer.n_block;
                    const uint32_t ts = kAlongM ? t.n_block : t.m_block, ps = kAlongM ? peer.n_block : peer.m_block;
                    if (ts != ps || (tp ^ 1u) != pp) ++errors;  // same shared block, adjacent pair (2i, 2i+1)
                }
            }
        }
    }
    for (int v : seen) errors += v != 1;
    if (errors) std::printf("FAIL m=%u n=%u group=%d cluster=%d along_m=%d: %d errors\n", m, n, kGroup, kCluster,
                            kAlongM, errors);
    return errors;
}

int main() {
    int errors = 0;
    for (uint32_t m : {1u, 128u, 129u, 640u, 1000u, 4096u, 7000u})
        for (uint32_t n : {1u, 128u, 384u, 2112u, 7168u, 7296u}) {
            errors += check<8, 1, true>(m, n, 132);
            errors += check<16, 1, false>(m, n, 132);
            errors += check<8, 2, true>(m, n, 132);
            errors += check<16, 2, false>(m, n, 132);
            errors += check<8, 2, true>(m, n, 2);
        }
    std::printf(errors ? "scheduler check FAILED\n" : "scheduler check passed\n");
    return errors != 0;
}
