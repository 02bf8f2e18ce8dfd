// Pure heuristics of the SM90 FP8 GEMM: which tile, stages and cluster to use for a shape. No CUDA, no state:
// (problem, device facts) -> config, so CPU tests check the choices and the legality invariants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>

namespace tessera::heuristics {

enum class Fp8GemmMode { k1D2D = 0, k1D1D = 1 };  // BF16 out with 128x128 B scales / FP32 out, per-row B scales

struct Fp8GemmProblem {
    std::int64_t m = 0, n = 0, k = 0;
    Fp8GemmMode mode = Fp8GemmMode::k1D2D;
    int num_sms = 132;         // persistent grid (set_num_sms honored, odd values too)
    int max_smem_bytes = 232448;  // the device's opt-in limit per block
    // Grouped problems: m is the (expected) rows of one group and tiles are counted num_groups times.
    int num_groups = 1;
    int block_m = 0;             // > 0: the layout fixes BLOCK_M (contiguous: the segment alignment)
    bool allow_cluster = true;   // multicast pairs need equal k-block counts (dense, contiguous)
    // m is a hint (masked: expected_m; each group's real row count varies around it): tiles are counted as the mean
    // over 0.75 m, m and 1.25 m, so a hint just under a tile boundary does not favor tiles that the heavier groups
    // overflow (g32 e192, masked_m in 192 x U(0.7, 1.3): 64-row tiles need 3-4 blocks per group, 128-row tiles 2).
    bool m_is_hint = false;
    int reserved_regs = 32;  // consumer registers outside the accumulators (48: one-warpgroup tiles that walk groups)
    int reserved_regs_two_wg = 0;  // > 0: the value for two-warpgroup tiles instead (all kinds: 32)
    int consumer_reserved_regs(int math_warpgroups) const {
        return math_warpgroups == 2 && reserved_regs_two_wg > 0 ? reserved_regs_two_wg : reserved_regs;
    }
    bool allow_split_k = false;  // dense 1D2D: tiles may be shared along K by the CTAs of a cluster
    // contiguous, masked and psum (1D2D): 128x256 tiles in two N halves (dense plans take them by their own rule:
    // wide_split in fp8_gemm_plan.cpp)
    bool allow_wide_split = false;
    bool allow_a_multicast = false;  // dense: pairs along N may share A (cluster_n = 2; rasterized along N)
    int small_m_box_rows = 0;  // dense: M <= this (16 or 32) on 64-row tiles loads A in 16- or 32-row boxes
    bool allow_d_halves = false;  // 3-stage 1D2D rings may stage D in N halves for a 4th (masked, 1536 < K <= 2048)
    bool allow_d_in_ring = false;  // dense 1D2D: plans with one tile per CTA may stage D over the A ring
    // Debug override (TESSERA_FP8_CONFIG): when forced_block_m > 0 the search is skipped and this tile, A multicast
    // pair and split are used (the rest still derived); illegal values throw InvalidArgument.
    int forced_block_m = 0, forced_block_n = 0, forced_cluster_n = 1, forced_split_k = 1;
    int forced_num_stages = 0;   // > 0: this many ring stages (at least 2, at most what shared memory holds)
    // CTAs that clusters of 2, 4, 8 keep resident (0: fp8_gemm_cluster_capacity's estimate; -1: none; the plan fills
    // in the driver's answer when the estimate proved too high).
    int cluster_ctas[4] = {0, 0, 0, 0};
    int split_capacity(int split) const;
    // Tiles (block_m, block_n) the search skips: the planner excludes a tile whose kernel spilled for this problem's
    // shape constants and plans again (ops::choose_buildable_config).
    static constexpr int kMaxExcludedTiles = 6;
    int excluded_tiles[kMaxExcludedTiles][2] = {};
    int num_excluded_tiles = 0;
    // set_block_size_multiple_of: > 1 makes every searched block N a multiple of lcm(16, this).
    int block_n_multiple = 1;
    bool excluded(int block_m, int block_n) const {
        if (block_n_multiple > 1 && block_n % std::lcm(16, block_n_multiple) != 0) return true;
        for (int i = 0; i < num_excluded_tiles; ++i)
            if (excluded_tiles[i][0] == block_m && excluded_tiles[i][1] == block_n) return true;
        return false;
    }
};

struct Fp8GemmConfig {
    int block_m = 128, block_n = 128, block_k = 128;
    int num_stages = 4;
    int num_math_warpgroups = 2;
    int cluster_m = 1, cluster_n = 1;
    int split_k = 1;    // CTAs of a cluster sharing each tile along K (then num_sms is the whole grid of clusters)
    int num_sms = 132;  // CTAs in the grid
    int group_size = 8;
    int smem_bytes = 0;
    int swizzle_d_bytes = 0;  // the D store swizzle the kernel will use (mirrors the kernel's rule)
    int store_box_n = 0;
    int load_rows_a = 0;  // rows of A (and of its scales) each stage loads: 0 = block_m; 16 or 32 (small_m_box_rows)
    bool d_in_ring = false;  // the D tile is staged over the A ring (one tile per CTA), its bytes given to a stage
    bool d_halves = false;   // the D tile is staged one N half at a time, the other half's bytes given to a stage
    int num_threads() const { return 128 * (num_math_warpgroups + 1); }
    std::string describe() const;
};

// The D store swizzle (0, 32, 64 or 128 bytes) and TMA box width in columns the kernel uses for a tile width
// (kernels/tessera/prims/store_layout.cuh; a CPU test checks this mirror against it).
void fp8_gemm_store_layout(Fp8GemmMode mode, int block_n, int* swizzle, int* box_n);

// Dynamic shared memory of the kernel for a tile and stage count (the kernel static_asserts the same formula).
// d_in_ring: the D tile has no shared memory of its own (it is staged over the A ring); one more barrier.
// d_halves: the D tile's shared memory holds half of it (the epilogue stores its N halves in turn).
int fp8_gemm_smem_bytes(Fp8GemmMode mode, int block_m, int block_n, int stages, int split_k = 1,
                        bool d_in_ring = false, bool d_halves = false);

// CTAs that clusters of `size` can keep resident at once on a device with `num_sms` SMs (an estimate: SMs come in
// GPCs of 16-18, so clusters of 4 leave a few idle; the plan corrects it with the driver's occupancy query).
int fp8_gemm_cluster_capacity(int num_sms, int size);
// The split-K cluster reduction (sm90/gemm_epilogue.cuh, shared by the FP8 and BF16 kernels) of one block_m x block_n
// tile over `split` CTAs, in the planners' cost units (1 unit ~ 22 ps: 0.0105 per byte at 4.26 TB/s).
double split_k_reduce_cost(int block_m, int block_n, int split);

// Whether the accumulators of this tile fit the consumer register budget (possibly with an N split).
bool fp8_gemm_fits_registers(Fp8GemmMode mode, int block_m, int block_n, int math_warpgroups, int* n_splits = nullptr,
                             int reserved_regs = 32);

// Whether the kernel accepts this BLOCK_N (1D2D above 128 may span at most two 128-wide scale blocks).
bool fp8_gemm_block_n_legal(Fp8GemmMode mode, int block_n);

Fp8GemmConfig choose_fp8_gemm_config(const Fp8GemmProblem& problem);

inline int Fp8GemmProblem::split_capacity(int split) const {
    const int index = split == 2 ? 1 : split == 4 ? 2 : 3;
    if (cluster_ctas[index] < 0) return 0;
    return cluster_ctas[index] > 0 ? cluster_ctas[index] : fp8_gemm_cluster_capacity(num_sms, split);
}

}  // namespace tessera::heuristics
