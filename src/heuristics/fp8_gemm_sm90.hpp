// Pure heuristics of the SM90 FP8 GEMM: which tile, stages and cluster to use for a shape. No CUDA, no state:
// (problem, device facts) -> config, so CPU tests check the choices and the legality invariants.
#pragma once

#include <cstdint>
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
    bool allow_cluster = true;   // multicast pairs need equal k-block counts per pair (dense, contiguous)
    int reserved_regs = 32;      // consumer registers outside the accumulators (48 for kinds that walk groups)
};

struct Fp8GemmConfig {
    int block_m = 128, block_n = 128, block_k = 128;
    int num_stages = 4;
    int num_math_warpgroups = 2;
    int cluster_m = 1, cluster_n = 1;
    int num_sms = 132;
    int group_size = 8;
    int smem_bytes = 0;
    int swizzle_d_bytes = 0;  // the D store swizzle the kernel will use (mirrors the kernel's rule)
    int store_box_n = 0;
    int num_threads() const { return 128 * (num_math_warpgroups + 1); }
    std::string describe() const;
};

// Dynamic shared memory of the kernel for a tile and stage count (the kernel static_asserts the same formula).
int fp8_gemm_smem_bytes(Fp8GemmMode mode, int block_m, int block_n, int stages);

// Whether the accumulators of this tile fit the consumer register budget (possibly with an N split).
bool fp8_gemm_fits_registers(Fp8GemmMode mode, int block_m, int block_n, int math_warpgroups, int* n_splits = nullptr,
                             int reserved_regs = 32);

// Whether the kernel accepts this BLOCK_N (1D2D above 128 may span at most two 128-wide scale blocks).
bool fp8_gemm_block_n_legal(Fp8GemmMode mode, int block_n);

Fp8GemmConfig choose_fp8_gemm_config(const Fp8GemmProblem& problem);

}  // namespace tessera::heuristics
