// Pure heuristics of the SM90 TF32 HyperConnection pre-norm GEMM (kernels/tessera/sm90/hc_prenorm_gemm.cuh): stages,
// and how many CTAs share an m-block's K. No CUDA, no state: (problem, device facts) -> config, so CPU tests check
// the choices.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::heuristics {

constexpr int kHcBlockM = 64;  // rows per CTA: one math warpgroup
constexpr int kHcBlockK = 64;  // K per stage: one 128-byte swizzle row of BF16 A
constexpr int kHcMaxStages = 16;
constexpr int kHcMaxInternalSplits = 128;
constexpr int kHcMaxCluster = 16;  // SM90's widest cluster (above 8 with the kernel's non-portable opt-in)

struct HcPrenormProblem {
    std::int64_t m = 0, n = 0, k = 0;  // m > 0; n in {8, 16, 24, 32}; k a positive multiple of 64
    int num_splits = 0;                // the caller's num_splits, 0 for None (the planner may split K itself)
    int num_sms = 132;
    int max_smem_bytes = 232448;       // the device's opt-in limit per block
    int max_cluster = kHcMaxCluster;   // the widest cluster whose m-blocks' clusters the device keeps resident at once
};

struct HcPrenormConfig {
    int block_n = 0;      // = n: one wgmma m64nN per k8 slice
    int num_stages = 0;
    int num_splits = 1;   // CTAs per m-block along K (S)
    bool reduce = false;  // S > 1 partials summed inside the kernel into one D (num_splits was None)
    int cluster = 1;      // reduce: > 1 when the S CTAs of an m-block are one cluster (S = cluster, summed through
                          // distributed shared memory); 1: through the workspace
    int num_accumulators = 2;
    int smem_bytes = 0;
    std::int64_t num_m_blocks = 0;
    std::int64_t grid() const { return num_m_blocks * num_splits; }
    static constexpr int num_threads() { return 128 + 32; }
    // reduce through the workspace: floats of the partial sums (m blocks x S x (64 N + 64)) and counters (one per m
    // block); a cluster plan needs neither.
    bool uses_workspace() const { return reduce && cluster == 1; }
    std::int64_t workspace_floats() const {
        return uses_workspace() ? grid() * (kHcBlockM * block_n + kHcBlockM) : 0;
    }
    std::int64_t num_counters() const { return uses_workspace() ? num_m_blocks : 0; }
    std::string describe() const;
};

// Dynamic shared memory of the kernel (the kernel static_asserts the same formula): 1 KB of barriers, then per stage
// an A tile (64 x 64 BF16) and a B tile (N x 64 FP32); with a cluster sum (cluster > 1), the receive buffer: for each
// of the N / 8 piece groups a rank owns, one float4 per thread from every rank, then every rank's 64 row sums of
// squares, rounded up to 1 KB.
int hc_prenorm_smem_bytes(int n, int stages, int cluster = 1);

// The splits whose partials the kernel's final sum loads at once (its kReduceUnroll): 24 float4 loads per thread.
int hc_prenorm_reduce_unroll(int n);

// With num_splits given, its S and no reduction. Without, S is chosen by a cost model of one wave: k-blocks per CTA
// at the slower of a per-SM rate and the HBM bandwidth shared by the CTAs that run, plus the sum of the S partials:
// through distributed shared memory when the S CTAs of an m-block form one cluster (S a power of two up to
// max_cluster), else by the last CTA through the workspace (a fence, an atomic and load rounds at L2 latency).
// S > 1 only while m blocks x S fit on the SMs at once, which also bounds the workspace by num_sms x (64 N + 64)
// floats.
HcPrenormConfig choose_hc_prenorm_config(const HcPrenormProblem& p);

}  // namespace tessera::heuristics
