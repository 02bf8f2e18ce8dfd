// Ahead-of-time planning and compiling of tessera's kernels, with no GPU: what `tessera compile` does, for C++
// callers that fill or inspect the kernel cache themselves. FP8 and BF16 GEMMs by problem; every family's kernels
// by named suite or by spec line.
//
// Kernels are compiled for sm_90a and specialized per N, K (k-grouped: per group count instead) and SM count. M and
// expected_m only steer the planner's choice of tile: they are not part of the kernel, so one kernel serves every M
// that plans the same tile. A cache filled for the SM count of the serving GPU (kH200NumSms for H200, H100 SXM and
// H800) means no compile while serving.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/fp8_gemm.hpp"
#include "tessera/options.hpp"

namespace tessera::aot {

inline constexpr int kH200NumSms = 132;

// The FP8 GEMM kinds (tessera/fp8_gemm.hpp, tessera/fp8_grouped_gemm.hpp).
enum class Fp8Kind {
    kDense,       // fp8_gemm_nt: M x N x K
    kContiguous,  // m_grouped_fp8_gemm_nt_contiguous with per-row expert ids: M = all rows of all groups
    kPsum,        // the same with the psum layout: groups G, expected_m rows per group (0: M / G)
    kMasked,      // m_grouped_fp8_gemm_nt_masked: M = M_max, groups G, expected_m (0: M)
    kKGrouped,    // k_grouped_fp8_gemm_nt_contiguous: M x N per group, groups G; K is per group at run time (k = 0)
};

struct Fp8Problem {
    Fp8Kind kind = Fp8Kind::kDense;
    std::int64_t m = 0, n = 0, k = 0;
    std::int64_t groups = 1;      // dense: 1
    std::int64_t expected_m = 0;  // psum and masked only: rows per group, a hint (0: the default above)
    // Dense: either (1D1D is the FP32-out weight-gradient GEMM). The m-grouped kinds are 1D2D, k-grouped 1D1D.
    Fp8Recipe recipe = Fp8Recipe::k1D2D;
    int num_sms = kH200NumSms;  // the SMs the persistent kernel is planned and compiled for
};

// Parses "KIND:MxNxK[:G[:E]]" (G = groups, E = expected_m), KIND one of dense, wgrad (dense 1D1D), contiguous, psum,
// masked, kgrouped; num_sms keeps its default. Checks the syntax only (plan_fp8 checks the values). Throws
// InvalidArgument naming what it expected and quoting the text.
Fp8Problem parse_fp8_problem(std::string_view text);
// The same text form ("dense:4096x576x7168", "masked:4096x4096x2048:6:1024"), without num_sms.
std::string to_string(const Fp8Problem& problem);

struct Fp8Plan {
    std::string config;  // the planner's choice in one line: tile, stages, cluster, split-K, grid
    std::string kernel;  // the kernel spec: its compile-time fields, one line
};

// The plan the GEMMs would make for `problem` on a GPU with problem.num_sms SMs (TESSERA_FP8_CONFIG applies as at
// run time). First the checks the GEMMs make of their shapes: M > 0; K > 0 and a multiple of 16 and N > 0 and a
// multiple of 8 (BF16 out) or 4 (FP32 out), for 16-byte TMA rows; groups and expected_m where the kind uses them;
// a recipe the kind has. A problem that could not run throws InvalidArgument naming the argument, before anything is
// compiled.
Fp8Plan plan_fp8(const Fp8Problem& problem);

struct CompiledKernel {
    std::string name;   // kernel family: "fp8_gemm", "transpose_fp32", ...
    std::string spec;   // the kernel spec, one line
    std::string key;    // its cache key ("sm_90a/<family>/<digest>")
    double compile_seconds = 0.0;  // 0 when it came from the cache
    int registers = -1;            // per thread, from ptxas; -1 when unknown (from the cache, or no ptxas report)
    int spill_bytes = 0;           // spill stores + loads ptxas reported (with the spill check on, a spill fails)
    bool from_cache = false;
    std::string wgmma_serialized;  // ptxas' line when it serialized the kernel's wgmma (correct but far slower)
};

// Compiles problem's planned kernel with `compiler` into the disk cache under cache_dir (empty: the process cache,
// TESSERA_CACHE_DIR), or finds it there. Where the planned tile's kernel spills for this shape, the problem is
// planned again without that tile, as the GEMMs do at run time. Throws what plan_fp8 throws, Unsupported when the
// compiler is not installed, CompileError with the compiler's log.
CompiledKernel compile_fp8(const Fp8Problem& problem, CompilerKind compiler, const std::string& cache_dir = {});

// The BF16 GEMM kinds (tessera/bf16_gemm.hpp).
enum class Bf16Kind {
    kDense,       // bf16_gemm_{nt,nn,tn,tt}: M x N x K, the layout in the operand majors below
    kContiguous,  // m_grouped_bf16_gemm_nt_contiguous with per-row expert ids: M = all rows
    kPsum,        // the same with the psum layout: groups G, expected_m rows per group (0: M / G)
    kMasked,      // m_grouped_bf16_gemm_nt_masked: M = M_max, groups G, expected_m (0: M)
    kKGrouped,    // k_grouped_bf16_gemm_tn_contiguous: M x N per group, groups G; K per group at run time (k = 0)
};

struct Bf16Problem {
    Bf16Kind kind = Bf16Kind::kDense;
    std::int64_t m = 0, n = 0, k = 0;
    std::int64_t groups = 1;      // dense: 1
    std::int64_t expected_m = 0;  // psum and masked only: rows per group, a hint (0: the default above)
    bool mn_major_a = false;      // dense tn and tt (A given as [K, M]); k-grouped always
    bool mn_major_b = false;      // dense nn and tn, m-grouped nn (B given as [K, N]); k-grouped always
    bool out_f32 = false;         // D FP32 (dense; k-grouped unless its D is BF16)
    bool accumulate = false;      // with C: D = C + A·B (dense; k-grouped always)
    int num_sms = kH200NumSms;
};

// Parses "KIND:MxNxK[:G[:E]]": KIND is a dense layout nt, nn, tn or tt, optionally followed by -f32 (FP32 D) and -c
// (with C), or contiguous, contiguous-nn, psum, psum-nn (B as [G, K, N]), masked, kgrouped (FP32 D) or
// kgrouped-bf16; num_sms keeps its default. Checks the syntax only (plan_bf16 checks the values). Throws
// InvalidArgument naming what it expected and quoting the text.
Bf16Problem parse_bf16_problem(std::string_view text);
// The same text form ("nt:1x4096x7168", "tn-f32-c:7168x4096x2048", "masked:4096x4096x2048:6:1024"), without num_sms.
std::string to_string(const Bf16Problem& problem);

struct Bf16Plan {
    std::string config;  // the planner's choice in one line: tile, stages, grid, split-K
    std::string kernel;  // the kernel spec: its compile-time fields, one line
};

// The plan the BF16 GEMMs would make for `problem` on a GPU with problem.num_sms SMs and 227 KB of shared memory per
// block (a split-K plan assumes the H200's resident clusters; a device that keeps fewer re-plans at run time). First
// the checks the GEMMs make of their shapes (TMA rows of 16 bytes, grouped K a multiple of 64, ...): a problem that
// could not run throws InvalidArgument naming the argument, before anything is compiled.
Bf16Plan plan_bf16(const Bf16Problem& problem);

// Compiles problem's planned kernel with `compiler` into the disk cache (cache_dir as for compile_fp8), or finds it
// there. Throws what plan_bf16 throws, Unsupported when the compiler is not installed, CompileError with its log.
CompiledKernel compile_bf16(const Bf16Problem& problem, CompilerKind compiler, const std::string& cache_dir = {});

// The layout kernels (scale-factor transpose and UE8M0 packing); each serves every shape.
std::vector<std::string> layout_kernel_names();
// Throws InvalidArgument for a name not in layout_kernel_names().
CompiledKernel compile_layout_kernel(std::string_view name, CompilerKind compiler, const std::string& cache_dir = {});

// Compiles the kernel of a spec line, as `tessera compile` prints them ("bf16_gemm{kBlockM=128,...}"), into the disk
// cache (cache_dir as for compile_fp8). Throws InvalidArgument for a malformed line or an unknown family, and what
// compile_fp8 throws.
CompiledKernel compile_spec(std::string_view spec, CompilerKind compiler, const std::string& cache_dir = {});

// The named suites of `tessera compile --suite`: "layout", "fp8_gemm" (DeepGEMM's dense benchmark shapes),
// "fp8_grouped" (its grouped shapes), "bf16" (the BF16 GEMMs and einsum on DeepGEMM's test shapes), "hc_prenorm",
// "indexer" (MQA logits, paged MQA logits, skip-head-mid, fp8_einsum) and "all".
std::vector<std::string> suite_names();
struct Suite {
    std::vector<std::string> layout_kernels;
    std::vector<Fp8Problem> fp8_problems;  // planned for the num_sms given to suite()
    std::vector<std::string> kernel_specs;  // the other families' kernels, as spec lines for compile_spec
};
// Throws InvalidArgument for a name not in suite_names().
Suite suite(std::string_view name, int num_sms = kH200NumSms);

}  // namespace tessera::aot
