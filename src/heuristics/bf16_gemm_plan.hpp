// Pure heuristics of the SM90 BF16 GEMM (kernels/tessera/sm90/bf16_gemm.cuh): which tile and how many stages for a
// shape. No CUDA, no state: (problem, device facts) -> config, so CPU tests check the choices and legality rules.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::heuristics {

struct Bf16GemmProblem {
    std::int64_t m = 0, n = 0, k = 0;
    bool mn_major_a = false, mn_major_b = false;  // operand layouts in memory (K-major otherwise)
    bool out_f32 = false;                         // D FP32 (else BF16)
    bool accumulate = false;                      // D += A·B (the tile is reduce-added into D)
    int num_sms = 132;                            // persistent grid
    int max_smem_bytes = 232448;                  // the device's opt-in limit per block
    int num_groups = 1;   // m-grouped: m is the (expected) rows of one group, tiles are counted num_groups times
    int block_m = 0;      // > 0: the layout fixes BLOCK_M (contiguous: the segment alignment)
    int block_n_multiple = 1;  // set_block_size_multiple_of: > 1 makes block N a multiple of lcm(16, this)
    // A dense problem (the op sets it; the grouped and einsum kinds plan without): it may split K over a cluster,
    // and at most 64 rows take 64-row tiles. split_capacity[i]: CTAs of clusters of 2, 4, 8 the device keeps
    // resident at once (0: the planner's estimate; < 0: none).
    bool dense = false;
    int split_capacity[3] = {0, 0, 0};
};

struct Bf16GemmConfig {
    int block_m = 128, block_n = 128;
    int num_stages = 4;
    int num_sms = 132;  // CTAs in the persistent grid
    int group_size = 8;
    int smem_bytes = 0;
    int swizzle_d_bytes = 0;  // the D store swizzle the kernel will use (mirrors prims/store_layout.cuh)
    int store_box_n = 0;
    int k_blocks_per_split = 0;  // batch-sum: the flattened (batch, k-block) steps of one tile
    int split_k = 1;             // dense: CTAs of a cluster sharing one tile along K (the grid is tiles * split_k)
    int a_rows = 0;              // > 0: A's rows per stage when fewer than block_m (8: a dense problem of <= 8 rows)
    int a_box_rows() const { return a_rows > 0 ? a_rows : block_m; }
    int num_threads() const { return 128 * (block_m / 64 + 1); }
    std::string describe() const;
};

constexpr int kBf16BlockK = 64;  // K elements per stage: one 128-byte swizzle row of BF16

// Dynamic shared memory of the kernel (the kernel static_asserts the same formula): the barriers' 1 KB, the D tile
// (4-byte elements for FP32 D and for a split-K plan's partial), the A stages (a_rows rows each, 0: block_m) and the
// B stages.
int bf16_gemm_smem_bytes(int block_m, int block_n, int stages, bool out_f32, bool split_k = false, int a_rows = 0);

// Persistent tiles that fill the SMs best; a dense decode shape whose tiles leave SMs idle may instead
// take a cluster of 2, 4 or 8 CTAs per tile, each over its share of K, all clusters resident at once.
Bf16GemmConfig choose_bf16_gemm_config(const Bf16GemmProblem& p);

// einsum 'bmk,bnk->mn' (num_groups = the batch; m, n and k multiples of 64): whole-output tiles of the widest block
// that divides M and N, and the batch's k-blocks split so that tiles x splits fill the SMs once; each tile's FP32
// sum is reduce-added into D.
Bf16GemmConfig choose_bf16_batch_sum_config(const Bf16GemmProblem& p);

}  // namespace tessera::heuristics
