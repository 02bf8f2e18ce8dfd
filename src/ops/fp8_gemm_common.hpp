// Host side shared by the dense and grouped FP8 GEMM ops: the kernel's Params mirror, tensor-map helpers, operand
// checks, the JIT spec of a config and the launch.
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
#include "ops/validate.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/layout.hpp"
#include "tessera/tensor.hpp"
#include <tessera/prims/gemm_kind.cuh>

namespace tessera::ops {

// The kernel's problem kinds: one definition, compiled by the kernels and here.
using GemmKind = prims::GemmKind;

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
inline std::int64_t align_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// One hash of a plan key's fields, for the plan caches' hash maps.
inline std::size_t hash_fields(std::initializer_list<std::int64_t> fields) {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (std::int64_t f : fields) {
        h ^= static_cast<std::uint64_t>(f) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h *= 0xbf58476d1ce4e5b9ULL;
    }
    return static_cast<std::size_t>(h ^ (h >> 31));
}

// The device side aligns descriptors to 64 bytes; CUDA 13's CUtensorMap is 128-aligned, so the bytes are copied into
// a 64-aligned holder to keep the two layouts identical.
struct alignas(64) TmaBytes {
    unsigned char bytes[128];
    TmaBytes& operator=(const CUtensorMap& map) {
        static_assert(sizeof(CUtensorMap) == sizeof(bytes));
        std::memcpy(bytes, &map, sizeof(bytes));
        return *this;
    }
};

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

runtime::TmaDesc2d map_2d(const void* base, CUtensorMapDataType type, int bytes, std::int64_t inner,
                          std::int64_t outer, std::int64_t stride_elems, int box_inner, int box_outer,
                          runtime::TmaSwizzle swizzle);

// The D map of a GEMM's tile stores: [M rows][N] BF16 or FP32 (d's dtype), boxes of box_n columns by 64 rows; a
// 3-D d [G, M, N] (groups packed) is mapped as [G*M rows][N].
CUtensorMap d_store_map(const TensorRef& d, int box_n, int swizzle_bytes);

// The parameter fields every GEMM kernel shares (its Params mirror has them under these names).
template <class P>
void set_gemm_dims(P& params, std::int64_t m, std::int64_t n, std::int64_t k, const TensorRef& d) {
    params.m = static_cast<std::uint32_t>(m);
    params.n = static_cast<std::uint32_t>(n);
    params.k = static_cast<std::uint32_t>(k);
    params.d = d.data;
    params.ld_d = static_cast<std::uint32_t>(d.stride(-2));
    params.num_groups = 1;
}

// K-major e4m3 operand or D: unit inner stride, 16-byte row stride, 16-byte aligned base.
void check_tma_operand(Arg arg, const TensorRef& t);
// The shapes the TMA maps take: K > 0 and a multiple of 16 (16-byte rows of A and B); N > 0 and a multiple of
// n_multiple (16-byte rows of D: 8 for BF16, 4 for FP32). `arg` names where the value came from: the GEMMs' 'a' and
// 'd', the config queries' 'k' and 'n'.
void check_tma_k(Arg arg, std::int64_t k);
void check_tma_n(Arg arg, std::int64_t n, int n_multiple);
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

// The per-row expert layout of the m-grouped contiguous GEMMs: a tile takes its expert from its first row, so tiles
// must not straddle segments: BLOCK_M divides get_mk_alignment_for_contiguous_layout() (128 or 64). Throws
// Unsupported naming `op` otherwise.
int contiguous_block_m(const char* op);

// The SMs a plan for `device` may use: set_num_sms's value (at most the device's count), else all of them. Reads
// no driver state, unlike get_num_sms(), which asks the driver for the calling thread's current device.
int plan_num_sms(int device);

// The launch shape of a config: its grid (persistent, or one wave of split-K clusters), block, smem and cluster.
jit::LaunchConfig fp8_launch_config(const heuristics::Fp8GemmConfig& c, Stream stream, int device);
// Launches the planned kernel over the persistent grid (bytes: the parameter block).
void launch_fp8_gemm(const jit::Kernel& kernel, const heuristics::Fp8GemmConfig& c, const void* params,
                     std::size_t param_bytes, Stream stream, int device);

}  // namespace tessera::ops
