#include "heuristics/hc_prenorm_plan.hpp"

#include <algorithm>
#include <limits>

#include "tessera/error.hpp"

namespace tessera::heuristics {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The cost model's constants, in microseconds and bytes per microsecond (H200 estimates; tune on the device).
constexpr double kPerSmKBlockUs = 0.2;       // one CTA's k-block when bandwidth is not the limit (load + math loop)
constexpr double kHbmBytesPerUs = 3.3e6;     // sustained HBM read bandwidth of the streaming kernel
// The in-kernel sum, fitted to the H200 (bench hc-prenorm, 2026-12-05): unsplit-call times less the explicit-split
// mainloop of the same share (2.3 us + 0.22 us per k-block) left 9.0 us for 64 slices, 5.8 for 38-40 and 4.5-5.4
// for 23-24 (three m-blocks).
constexpr double kReduceBaseUs = 2.0;        // partial store, fences and the counter's round trip
constexpr double kReduceRoundUs = 0.9;       // one batch of the final sum's L2 loads
constexpr double kClusterSumUs = 0.4;        // a cluster's sum: pushes into the owners' shared memory, their adds

enum class Sum { kNone, kWorkspace, kCluster };

// Estimated time of a plan with S splits per m block (reduce: the partials are summed in the kernel).
double plan_cost(std::int64_t m, std::int64_t n, std::int64_t num_m_blocks, std::int64_t num_k_blocks, int splits,
                 int num_sms, Sum sum) {
    const std::int64_t ctas = num_m_blocks * splits;
    const double waves = static_cast<double>(ceil_div(ctas, num_sms));
    const double active = static_cast<double>(std::min<std::int64_t>(ctas, num_sms));
    // HBM bytes per CTA k-block: A's rows of the block (the TMA box's rows past M are zero-filled, not read) and
    // B, which the m blocks share through L2.
    const double rows = static_cast<double>(std::min<std::int64_t>(m, kHcBlockM));
    const double bytes = rows * kHcBlockK * 2 + static_cast<double>(n) * kHcBlockK * 4 / num_m_blocks;
    const double per_k_block = std::max(kPerSmKBlockUs, active * bytes / kHbmBytesPerUs);
    double cost = waves * static_cast<double>(ceil_div(num_k_blocks, splits)) * per_k_block;
    if (sum == Sum::kWorkspace)
        cost += kReduceBaseUs + static_cast<double>(ceil_div(splits, hc_prenorm_reduce_unroll(n))) * kReduceRoundUs;
    if (sum == Sum::kCluster) cost += kClusterSumUs;
    return cost;
}

}  // namespace

int hc_prenorm_smem_bytes(int n, int stages, int cluster) {
    const int slots = (n / 8 + cluster - 1) / cluster;
    const int recv = cluster > 1 ? (slots * cluster * 128 * 16 + cluster * kHcBlockM * 4 + 1023) / 1024 * 1024 : 0;
    return 1024 + stages * (kHcBlockM * kHcBlockK * 2 + n * kHcBlockK * 4) + recv;
}

int hc_prenorm_reduce_unroll(int n) { return 24 / (n / 8); }

std::string HcPrenormConfig::describe() const {
    return "n " + std::to_string(block_n) + ", " + std::to_string(num_stages) + " stages, " +
           std::to_string(num_splits) +
           (!reduce ? " splits" : cluster > 1 ? " splits summed in a cluster" : " splits summed in the kernel") + ", " +
           std::to_string(num_accumulators) + " accumulators, grid " + std::to_string(grid()) + ", smem " +
           std::to_string(smem_bytes);
}

HcPrenormConfig choose_hc_prenorm_config(const HcPrenormProblem& p) {
    TESSERA_CHECK(p.m > 0 && p.n >= 8 && p.n <= 32 && p.n % 8 == 0 && p.k > 0 && p.k % kHcBlockK == 0 &&
                      p.num_splits >= 0 && p.num_sms > 0,
                  "HC pre-norm GEMM planning: expected m > 0, n in {8, 16, 24, 32}, k a positive multiple of 64, "
                  "num_splits >= 0 and sms > 0, got m=", p.m, " n=", p.n, " k=", p.k, " num_splits=", p.num_splits,
                  " sms=", p.num_sms);
    HcPrenormConfig c;
    c.block_n = static_cast<int>(p.n);
    c.num_m_blocks = ceil_div(p.m, kHcBlockM);
    for (int s = kHcMaxStages; s >= 2 && c.num_stages == 0; --s)
        if (hc_prenorm_smem_bytes(c.block_n, s) <= p.max_smem_bytes) c.num_stages = s;
    TESSERA_CHECK(c.num_stages > 0, "HC pre-norm GEMM planning: two stages of N = ", p.n, " need ",
                  hc_prenorm_smem_bytes(c.block_n, 2), " bytes of shared memory, the device allows ",
                  p.max_smem_bytes);
    c.smem_bytes = hc_prenorm_smem_bytes(c.block_n, c.num_stages);
    if (p.num_splits > 0) {
        c.num_splits = p.num_splits;
        return c;
    }
    // Internal splits: one wave of m blocks x S CTAs, S at most the k-blocks.
    const std::int64_t num_k_blocks = p.k / kHcBlockK;
    const std::int64_t max_splits =
        std::min<std::int64_t>({num_k_blocks, kHcMaxInternalSplits, std::max<std::int64_t>(1, p.num_sms / c.num_m_blocks)});
    double best = plan_cost(p.m, p.n, c.num_m_blocks, num_k_blocks, 1, p.num_sms, Sum::kNone);
    // Cluster sums first: at equal cost they win (no workspace, nothing that depends on the stream).
    for (int s = 2; s <= std::min<std::int64_t>(max_splits, p.max_cluster); s *= 2) {
        if (hc_prenorm_smem_bytes(c.block_n, 2, s) > p.max_smem_bytes) break;  // no room for its receive buffer
        const double cost = plan_cost(p.m, p.n, c.num_m_blocks, num_k_blocks, s, p.num_sms, Sum::kCluster);
        if (cost < best) {
            best = cost;
            c.num_splits = c.cluster = s;
        }
    }
    for (int s = 2; s <= max_splits; ++s) {
        const double cost = plan_cost(p.m, p.n, c.num_m_blocks, num_k_blocks, s, p.num_sms, Sum::kWorkspace);
        if (cost < best) {
            best = cost;
            c.num_splits = s;
            c.cluster = 1;
        }
    }
    c.reduce = c.num_splits > 1;
    // A cluster sum's receive buffer takes its room from the stages (a split's share of K needs few of them).
    while (c.num_stages > 2 && hc_prenorm_smem_bytes(c.block_n, c.num_stages, c.cluster) > p.max_smem_bytes)
        --c.num_stages;
    c.smem_bytes = hc_prenorm_smem_bytes(c.block_n, c.num_stages, c.cluster);
    TESSERA_CHECK(c.smem_bytes <= p.max_smem_bytes, "HC pre-norm GEMM planning: a cluster sum of ", c.cluster,
                  " CTAs needs ", c.smem_bytes, " bytes of shared memory, the device allows ", p.max_smem_bytes);
    return c;
}

}  // namespace tessera::heuristics
