// Host side shared by the dense and grouped FP8 GEMM ops: the kernel's Params mirror, the FP8 operand and scale
// checks, the JIT spec of a config, the plan cache and the launch (ops/gemm_common.hpp: what every GEMM op shares).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <vector>

#include "heuristics/fp8_gemm_plan.hpp"
#include "jit/jit.hpp"
#include "ops/gemm_common.hpp"
#include "ops/validate.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/layout.hpp"
#include "tessera/tensor.hpp"

namespace tessera::ops {

// Host mirror of Fp8GemmKernel::BaseParams (kernels/tessera/sm90/fp8_gemm.cuh); the kernel checks the size.
struct alignas(64) Fp8GemmParams {
    TmaBytes tensor_map_a, tensor_map_b, tensor_map_sfa, tensor_map_sfb, tensor_map_d;
    const float* sfb;
    std::uint32_t m, n, k;
    const std::int32_t* grouped_layout;
    void* d;
    std::uint32_t ld_d;
    std::uint32_t num_groups;
    std::uint32_t alignment;
};
static_assert(sizeof(Fp8GemmParams) == 704, "must match the kernel's BaseParams");
static_assert(offsetof(Fp8GemmParams, alignment) == 688, "must match the kernel's BaseParams");

// Host mirror of Fp8GemmKernel::KGroupedParams for G groups: built as bytes because G is a compile-time constant
// of the kernel, not of this file.
class KGroupedParamBytes {
public:
    KGroupedParamBytes(const Fp8GemmParams& base, const std::vector<CUtensorMap>& maps_a,
                       const std::vector<CUtensorMap>& maps_b, const std::vector<std::uint32_t>& ks,
                       const std::vector<std::uint32_t>& sf_k0);
    const void* data() const { return bytes_.data(); }
    std::size_t size() const { return size_; }

private:
    std::vector<std::uint64_t> bytes_;  // 8-byte units; the driver copies the parameters, alignment 8 suffices
    std::size_t size_ = 0;
};

// K-major e4m3 operand or D: unit inner stride, 16-byte row stride, 16-byte aligned base.
void check_tma_operand(Arg arg, const TensorRef& t);
// FP32 scales [mn, sf_k] in the MN-major TMA-aligned layout (element (i, j) at j*align(mn,4) + i).
bool sf_mn_major_aligned(const TensorRef& sf, std::int64_t mn, std::int64_t sf_k);

// The FP8 spec's FFMA reuse-hint interval (jit::PostCompile), 0 for none.
int fp8_ffma_yield_interval(const jit::KernelSpec& spec);
jit::KernelSpec make_fp8_gemm_spec(const heuristics::Fp8GemmConfig& c, heuristics::Fp8GemmMode mode, GemmKind kind,
                                   std::int64_t n, std::int64_t k, int num_groups = 1);

// A memoized (config, loaded kernel) per problem key. m is the rows the heuristic plans for (grouped: rows of one
// group, expected), k the K of the kernel (k-grouped: 0, dynamic per group; the heuristic sees k_for_heuristic).
struct Fp8PlanKey {
    std::int64_t m, n, k;
    heuristics::Fp8GemmMode mode;
    GemmKind kind;
    int num_groups, block_m, num_sms, device;
    int block_n_multiple = 1;  // Options::block_n_multiple when planned (fp8_plan fills it in)
    int head_left = 0, head_mid = 0, head_right = 0;  // skip-head-mid (dense 1D2D; mid 0: an ordinary D)
    bool operator==(const Fp8PlanKey&) const = default;
};
struct Fp8Plan {
    heuristics::Fp8GemmConfig config;
    const jit::Kernel* kernel = nullptr;
};
const Fp8Plan& fp8_plan(const Fp8PlanKey& key, const char* op);
// The heuristic's config for `problem`, built by `build` (which compiles and loads its kernel): where the kernel
// spills for this problem's shape constants (SpillError), the tile is excluded and the problem planned again, up to
// Fp8GemmProblem::kMaxExcludedTiles times. Forced configs (TESSERA_FP8_CONFIG) are not re-planned: their error
// stands. Returns the config that built; `problem` keeps the exclusions.
heuristics::Fp8GemmConfig choose_buildable_config(heuristics::Fp8GemmProblem& problem,
                                                  const std::function<void(const heuristics::Fp8GemmConfig&)>& build);
jit::KernelSpec fp8_spec(const Fp8PlanKey& key, const heuristics::Fp8GemmConfig& c);
// The heuristic's problem for a key (shared by fp8_plan and the ahead-of-time suites).
heuristics::Fp8GemmProblem fp8_problem(const Fp8PlanKey& key, int max_smem_bytes);

// The launch shape of a config: its grid (persistent, or one wave of split-K clusters), block, smem and cluster.
jit::LaunchConfig fp8_launch_config(const heuristics::Fp8GemmConfig& c, Stream stream, int device);
// Launches the planned kernel over the persistent grid (bytes: the parameter block).
void launch_fp8_gemm(const jit::Kernel& kernel, const heuristics::Fp8GemmConfig& c, const void* params,
                     std::size_t param_bytes, Stream stream, int device);

}  // namespace tessera::ops
