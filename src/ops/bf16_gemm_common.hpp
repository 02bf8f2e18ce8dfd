// What the BF16 GEMM ops share (dense, m-grouped): the kernel's spec, the plan cache, the host mirror of the
// kernel's parameters, the operand checks and maps, and the launch.
#pragma once

#include <cstdint>
#include <vector>

#include "heuristics/bf16_gemm_plan.hpp"
#include "jit/jit.hpp"
#include "jit/spec.hpp"
#include "ops/gemm_common.hpp"
#include "tessera/layout.hpp"

namespace tessera::ops {

// `family` names the entry (kBf16Gemm, or a legacy name); batch-sum kernels always take kBf16BatchSumGemm.
jit::KernelSpec make_bf16_gemm_spec(const heuristics::Bf16GemmConfig& c, const heuristics::Bf16GemmProblem& p,
                                    GemmKind kind, jit::Family family = jit::Family::kBf16Gemm);

// k-grouped plans are shared by every K: their tiles are ranked as for this K per group (DeepGEMM's groups hold
// 2000-8800), the weight of the FP32 epilogue against the mainloop.
constexpr std::int64_t kKGroupedPlanK = 4096;

// A memoized (config, loaded kernel) per problem. m-grouped: m is the rows the heuristic plans for (contiguous: all
// rows with block_m fixed by the alignment; psum and masked: the expected rows of one group).
struct Bf16PlanKey {
    std::int64_t m, n, k;
    bool mn_major_a, mn_major_b, out_f32, accumulate;
    GemmKind kind;
    int num_groups, block_m, num_sms, device, block_n_multiple;
    // The kernel's entry name: kBf16Gemm, or one of the names DeepGEMM's legacy tests profile (same code).
    jit::Family family = jit::Family::kBf16Gemm;
    bool operator==(const Bf16PlanKey&) const = default;
};
struct Bf16Plan {
    heuristics::Bf16GemmConfig config;
    const jit::Kernel* kernel = nullptr;
};
const Bf16Plan& bf16_plan(const Bf16PlanKey& key, const char* op);
// The planner's problem for `key` (what bf16_plan plans), on a device allowing max_smem_bytes per block.
heuristics::Bf16GemmProblem bf16_planner_problem(const Bf16PlanKey& key, int max_smem_bytes);
// The rows an m-grouped kind's tiles are planned for: contiguous, all M rows; psum, expected_m per group (0: M / G);
// masked, expected_m (0: M), at most M_max = m.
std::int64_t bf16_grouped_plan_rows(GemmKind kind, std::int64_t m, std::int64_t groups, std::int64_t expected_m);

// Host mirror of Bf16GemmKernel::Params (kernels/tessera/sm90/bf16_gemm.cuh); the kernel checks the size.
struct alignas(64) Bf16GemmParams {
    TmaBytes tensor_map_a, tensor_map_b, tensor_map_d;
    std::uint32_t m, n, k;
    const std::int32_t* grouped_layout;
    void* d;
    std::uint32_t ld_d;
    std::uint32_t num_groups;
    std::uint32_t alignment;
    std::uint32_t k_blocks_per_split;
};
static_assert(sizeof(Bf16GemmParams) == 448, "must match the kernel's Params");
static_assert(offsetof(Bf16GemmParams, k_blocks_per_split) == 428, "must match the kernel's Params");

// A BF16 operand [rows, K]: whether it is MN-major (stride(-2) == 1, the transpose of a row-major [K, rows]) rather
// than K-major (stride(-1) == 1); its other stride must make 16-byte TMA rows, its base 16-byte aligned.
bool mn_major_operand(const char* op, const char* name, const TensorRef& t, bool through_tma = true);
// The tensor map of an operand [rows, K] (`rows` may span several groups) whose stage box covers block_rows rows
// and 64 K elements; row_stride is the stride between rows (K-major) or between K rows (MN-major), in elements.
CUtensorMap bf16_operand_map(const void* data, bool mn_major, std::int64_t rows, std::int64_t k,
                             std::int64_t row_stride, int block_rows);
// d row-major (its dtype checked before), 16-byte rows and base.
void check_bf16_output(const char* op, const TensorRef& d, std::int64_t n);

// The FP32 -> BF16 copy of einsum's BF16 output (kernels/tessera/sm90/cast.cuh).
const jit::KernelSpec& cast_fp32_to_bf16_spec();

jit::LaunchConfig bf16_launch_config(const heuristics::Bf16GemmConfig& c, Stream stream, int device);
void launch_bf16_gemm(const Bf16Plan& plan, const void* params, std::size_t bytes, Stream stream, int device);
inline void launch_bf16_gemm(const Bf16Plan& plan, const Bf16GemmParams& params, Stream stream, int device) {
    launch_bf16_gemm(plan, &params, sizeof(params), stream, device);
}

}  // namespace tessera::ops
