// Options: every setting tessera reads from the environment, filled once (Options::from_env) and then only
// changed through the setters of the public API. No other code reads environment variables.
#pragma once

#include <string>

namespace tessera {

enum class CompilerKind { kNvrtc, kNvcc };

struct Options {
    // JIT
    CompilerKind compiler = CompilerKind::kNvrtc;
    std::string nvcc_path;        // empty: <cuda_home>/bin/nvcc
    std::string cuda_home;        // toolkit root (headers for NVRTC, nvcc, libnvrtc)
    std::string cache_dir;        // disk cache root; empty disables the disk cache
    std::string kernel_dir;       // root of the device headers (holds tessera/...)
    bool line_info = false;       // -lineinfo for profilers
    bool dump_ptx = false;        // write kernel.ptx next to the cubin
    bool dump_sass = false;       // write kernel.sass next to the cubin (needs cuobjdump; off the hot path)
    bool ptxas_verbose = false;   // print ptxas resource usage of each compile
    bool check_spills = true;     // fail a compile whose kernel uses local memory
    bool print_compile = false;   // log each compile (command, time)
    bool print_configs = false;   // print the chosen config once per new shape
    // Extra ptxas options for both compilers, space separated (e.g. "--register-usage-level=10"); part of the cache
    // key. For tuning the code generation; the defaults are what the benchmarks measured.
    std::string ptxas_options;
    // Operand-reuse hints for the FP8 promotion (jit/ffma_hints.hpp), applied to 1D2D FP8 GEMM cubins after the
    // compile: the scale stays in the reuse cache along each FFMA run and every n-th FFMA yields
    // (TESSERA_JIT_FFMA_HINTS=n for every kernel; 0 keeps ptxas's hints; -1, the default: the interval measured
    // best per kernel, Jit::ffma_hints_for). Part of the cache key.
    int ffma_hints = -1;
    // Experiment: the pass on contiguous kernels too, which it leaves alone by default (measured slower there;
    // TESSERA_JIT_FFMA_HINTS=n:all), so that a profile can compare the same contiguous kernel with and without it.
    bool ffma_hints_all_kinds = false;
    // Tuning: force the FP8 GEMM config of dense and per-row contiguous calls, "BMxBN[:CMxCN][:sS][:o2][:pP][:d]"
    // (e.g. "256x128:1x2", "64x112:s2" for split-K 2, "128x144:p4" for 4 stages, "128x144:p6:d" for D over the
    // ring; contiguous keeps BM = its alignment's block); empty: the heuristic decides. For sweeps
    // (bench/sweep_fp8.py, bench/run.py); not for production use.
    std::string fp8_config;
    // Tuning (A/B comparisons of the FP8 mainloop; -1 = the kernel's default): the turn order of two consumer
    // warpgroups on two-wave tiles (TESSERA_FP8_MATH_ORDER=0/1), the pipelined mainloop (TESSERA_FP8_PIPELINE=0/1).
    int fp8_math_order = -1;
    int fp8_pipeline = -1;
    // Experiment (TESSERA_FP8_KGROUPED_CLUSTER=1): k-grouped GEMMs may pair adjacent m-blocks in a cluster of two
    // with B multicast, where every group's tile count is even (both CTAs of a pair then stay in one group and walk
    // equal k-block counts). Off: measured no faster (docs/perf/fp8_grouped.md v5).
    bool fp8_kgrouped_cluster = false;
    // Short A boxes (TESSERA_FP8_SMALL_M_BOX = 0, 16 or 32; 1 means 32): a dense problem of at most this many rows on
    // 64-row tiles loads A and its scales in boxes of 16 (M <= 16) or 32 rows instead of 64 (the wgmma still reads 64
    // rows of shared memory; the rows it computes past the box are never stored), sparing the TMA the out-of-bounds
    // rows. 16 by default: measured 1-2.5 % faster on five of the seven M = 1 suite rows and never slower
    // (docs/perf/fp8_gemm.md v11); the 32-row boxes of M = 17..32 are not measured yet.
    int fp8_small_m_box = 16;
    // Experiment (TESSERA_FP8_STREAM_K=1): a dense 1D2D problem whose last wave leaves at least a tenth of the SMs
    // idle runs its whole waves as usual and spreads the last wave's k-blocks evenly over every CTA, the owner of
    // each such tile adding the others' partial sums from a workspace (one per device and stream, allocated at first
    // use, zeroed once). Not used while the stream is being captured into a CUDA graph (a replay elsewhere could
    // share the workspace with a launch in flight). Measured slower on every M = 4096 suite row (docs/perf/fp8_gemm.md v11).
    bool fp8_stream_k = false;
    // D over the ring (TESSERA_FP8_D_IN_RING=0 turns it off, for A/B runs): a dense 1D2D plan whose CTAs have one
    // tile each stages its D tile over the A ring and takes the freed shared memory as one more stage
    // (docs/perf/fp8_gemm.md v22).
    bool fp8_d_in_ring = true;
    // D in halves (TESSERA_FP8_D_HALVES=0 turns it off, for A/B runs): masked plans at 1536 < K <= 2048 whose whole
    // D tile leaves a ring of 3 stages (128x256) stage it one N half at a time and take a fourth
    // (docs/perf/fp8_grouped.md v26).
    bool fp8_d_halves = true;
    // Launch
    bool pdl = false;             // programmatic dependent launch attribute
    int num_sms = 0;              // 0: all SMs of the device

    // Reads TESSERA_* (and DeepGEMM's DG_* aliases). Unknown values give InvalidArgument naming the variable.
    static Options from_env();
};

// The process-wide options, created from the environment on first use.
Options& options();

}  // namespace tessera
