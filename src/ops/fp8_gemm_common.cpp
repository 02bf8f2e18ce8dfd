#include "ops/fp8_gemm_common.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <unordered_map>

#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "runtime/tensor_map.hpp"
#include "tessera/error.hpp"
#include "tessera/layout.hpp"
#include "tessera/options.hpp"
#include "tessera/runtime.hpp"

namespace tessera::ops {

KGroupedParamBytes::KGroupedParamBytes(const Fp8GemmParams& base, const std::vector<CUtensorMap>& maps_a,
                                       const std::vector<CUtensorMap>& maps_b, const std::vector<std::uint32_t>& ks,
                                       const std::vector<std::uint32_t>& sf_k0) {
    const std::size_t groups = ks.size();
    TESSERA_ASSERT(maps_a.size() == groups && maps_b.size() == groups && sf_k0.size() == groups);
    // BaseParams, TmaDescriptor group_maps[2G], uint32 group_k[G], uint32 group_sf_k0[G], padded to 64 bytes.
    const std::size_t maps_at = sizeof(Fp8GemmParams);
    const std::size_t k_at = maps_at + 2 * groups * sizeof(CUtensorMap);
    const std::size_t sf_at = k_at + 4 * groups;
    size_ = align_up(static_cast<std::int64_t>(sf_at + 4 * groups), 64);
    bytes_.assign(size_ / 8, 0);
    auto* out = reinterpret_cast<unsigned char*>(bytes_.data());
    std::memcpy(out, &base, sizeof(base));
    for (std::size_t g = 0; g < groups; ++g) {
        std::memcpy(out + maps_at + g * sizeof(CUtensorMap), &maps_a[g], sizeof(CUtensorMap));
        std::memcpy(out + maps_at + (groups + g) * sizeof(CUtensorMap), &maps_b[g], sizeof(CUtensorMap));
    }
    std::memcpy(out + k_at, ks.data(), 4 * groups);
    std::memcpy(out + sf_at, sf_k0.data(), 4 * groups);
}

void check_tma_operand(Arg arg, const TensorRef& t) {
    TESSERA_CHECK(t.stride(-1) == 1 || t.size(-1) <= 1, arg.op, ": argument '", arg.name,
                  "': expected K-major (stride(-1) == 1; MN-major FP8 operands are not supported on SM90), got strides ",
                  strides_string(t));
    for (int dim = 0; dim + 1 < t.ndim; ++dim)
        TESSERA_CHECK((t.stride(dim) * dtype_size(t.dtype)) % 16 == 0 || t.size(dim) <= 1, arg.op, ": argument '",
                      arg.name, "': expected strides that are multiples of 16 bytes (TMA), got ",
                      t.stride(dim) * dtype_size(t.dtype), " bytes in dimension ", dim);
    TESSERA_CHECK(reinterpret_cast<std::uintptr_t>(t.data) % 16 == 0, arg.op, ": argument '", arg.name,
                  "': expected a 16-byte aligned data pointer (TMA), got ", t.data);
}

bool sf_mn_major_aligned(const TensorRef& sf, std::int64_t mn, std::int64_t sf_k) {
    return sf.ndim == 2 && sf.size(0) == mn && sf.size(1) == sf_k && is_mn_major_tma_aligned(sf) &&
           reinterpret_cast<std::uintptr_t>(sf.data) % 16 == 0;
}

jit::KernelSpec fp8_spec(const Fp8PlanKey& key, const heuristics::Fp8GemmConfig& c) {
    jit::KernelSpec spec = make_fp8_gemm_spec(c, key.mode, key.kind, key.n, key.k, key.num_groups);
    if (key.head_mid > 0)  // (only then: every other spec keeps its text, and so its cache key)
        spec.set("kHeadLeft", key.head_left).set("kHeadMid", key.head_mid).set("kHeadRight", key.head_right);
    return spec;
}

// The FP8 family's post-compile policy: the yield interval of the promotion's reuse-hint pass (jit/ffma_hints.hpp),
// or 0 where it does not run. It runs on the 1D2D kernels where the H200 measured a gain (dense, psum, masked:
// 0.7-1.5 %), not on the m-grouped contiguous kind, which it made 0.7 % slower, nor on 1D1D, whose promotion FFMAs
// each read their own per-column scale (no run shares a register to cache). The interval is 4, and 6 for the masked
// and psum 128x256 kernels at K >= 3072 (0.3-1 % faster there; at K = 2048 and on 128x192 tiles 6 lost).
int fp8_ffma_yield_interval(const jit::KernelSpec& spec) {
    if (spec.get("kMode") != 0) return 0;
    const std::int64_t kind = spec.get_or("kGemmKind", static_cast<int>(GemmKind::kDense));
    if (kind == static_cast<int>(GemmKind::kContiguous)) return 0;
    const bool long_wide_grouped =
        (kind == static_cast<int>(GemmKind::kPsum) || kind == static_cast<int>(GemmKind::kMasked)) &&
        spec.get("kBlockN") == 256 && spec.get("kShapeK") >= 3072;
    return long_wide_grouped ? 6 : 4;
}

jit::KernelSpec make_fp8_gemm_spec(const heuristics::Fp8GemmConfig& c, heuristics::Fp8GemmMode mode, GemmKind kind,
                                   std::int64_t n, std::int64_t k, int num_groups) {
    jit::KernelSpec spec(jit::Family::kFp8Gemm);
    spec.set("kMode", static_cast<int>(mode))
        .set("kBlockM", c.block_m)
        .set("kBlockN", c.block_n)
        .set("kBlockK", c.block_k)
        .set("kNumStages", c.num_stages)
        .set("kNumMathWarpgroups", c.num_math_warpgroups)
        .set("kClusterM", c.cluster_m)
        .set("kClusterN", c.cluster_n)
        .set("kNumSMs", c.num_sms)
        .set("kShapeM", 0)
        .set("kShapeN", n)
        .set("kShapeK", k)
        .set("kGroupSize", c.group_size);
    // Dense specs keep their original text (and cache keys): the kind fields are optional in the kernel.
    if (kind != GemmKind::kDense) spec.set("kGemmKind", static_cast<int>(kind));
    if (kind == GemmKind::kKGrouped) spec.set("kNumGroups", num_groups);
    if (c.split_k > 1) spec.set("kSplitK", c.split_k);
    if (c.load_rows_a > 0) spec.set("kLoadRowsA", c.load_rows_a);
    if (c.d_in_ring) spec.set("kDInRing", 1);
    if (c.d_halves) spec.set("kDHalves", 1);
    spec.post.ffma_yield_interval = static_cast<std::uint8_t>(fp8_ffma_yield_interval(spec));
    return spec;
}

namespace {

struct Fp8PlanKeyHash {
    std::size_t operator()(const Fp8PlanKey& k) const noexcept {
        return hash_fields({k.m, k.n, k.k, static_cast<int>(k.mode), static_cast<int>(k.kind), k.num_groups, k.block_m,
                            k.num_sms, k.device, k.block_n_multiple, k.head_left, k.head_mid, k.head_right});
    }
};

// TESSERA_FP8_CONFIG = "BMxBN[:1x2][:sS][:pP]": tile, A multicast pair, split-K S, P ring stages.
void apply_forced_config(const std::string& text, heuristics::Fp8GemmProblem& p) {
    int bm = 0, bn = 0, cm = 1, cn = 1, split = 1, stages = 0;
    const char* s = text.c_str();
    int used = 0;
    bool ok = std::sscanf(s, "%dx%d%n", &bm, &bn, &used) == 2;
    s += used;
    if (ok && std::strncmp(s, ":s", 2) != 0 && std::strncmp(s, ":p", 2) != 0 && *s == ':') {
        used = 0;
        ok = std::sscanf(s, ":%dx%d%n", &cm, &cn, &used) == 2 && cm == 1 && (cn == 1 || cn == 2);
        s += used;
    }
    if (ok && std::strncmp(s, ":s", 2) == 0) {
        used = 0;
        ok = std::sscanf(s, ":s%d%n", &split, &used) == 1;
        s += used;
    }
    if (ok && std::strncmp(s, ":p", 2) == 0) {  // ring stages (pipeline depth)
        used = 0;
        ok = std::sscanf(s, ":p%d%n", &stages, &used) == 1 && stages > 0;
        s += used;
    }
    TESSERA_CHECK(ok && *s == '\0', "TESSERA_FP8_CONFIG: expected 'BMxBN[:1x2][:sS][:pP]', got '", text, "'");
    p.forced_block_m = bm;
    p.forced_block_n = bn;
    p.forced_cluster_n = cn;
    p.forced_split_k = split;
    p.forced_num_stages = stages;
}

}  // namespace

heuristics::Fp8GemmProblem fp8_problem(const Fp8PlanKey& key, int max_smem_bytes) {
    heuristics::Fp8GemmProblem problem;
    problem.m = key.m;
    problem.n = key.n;
    // k-grouped: K varies per group and the plan is shared by every K; tiles are ranked as for 4096 per group (the
    // suite's groups hold 2000-8800), which sets how much the per-tile FP32 epilogue weighs against the mainloop.
    problem.k = key.k > 0 ? key.k : 4096;
    problem.mode = key.mode;
    problem.num_sms = key.num_sms;
    problem.max_smem_bytes = max_smem_bytes;
    problem.num_groups = key.num_groups;
    problem.m_is_hint = key.kind == GemmKind::kMasked;
    problem.block_m = key.block_m;
    problem.allow_cluster = key.kind == GemmKind::kDense || key.kind == GemmKind::kContiguous;
    // Mirrors the kernel's kReservedRegs: one-warpgroup tiles of the kinds that walk groups keep 48, every
    // two-warpgroup tile 32 (psum, masked and k-grouped measured on the H200).
    problem.reserved_regs = key.kind == GemmKind::kDense || key.kind == GemmKind::kContiguous ? 32 : 48;
    problem.reserved_regs_two_wg = 32;
    problem.allow_split_k = key.kind == GemmKind::kDense && key.mode == heuristics::Fp8GemmMode::k1D2D;
    problem.allow_a_multicast = key.kind == GemmKind::kDense;
    // Psum too: its wide tiles past K = 2048 unroll their k-block loop over the stages (H200: the unroll made K = 4096
    // and 7168 2.7-3.4 % faster; without it, K = 7168 ran better on 128x192).
    problem.allow_wide_split = key.kind == GemmKind::kContiguous || key.kind == GemmKind::kMasked ||
                               key.kind == GemmKind::kPsum;
    problem.small_m_box_rows = key.kind == GemmKind::kDense ? 16 : 0;
    // Masked only, and only where its tiles run the rolled k-block loop (K <= 2048): the rows that gained. Not
    // at K <= 1536, where the 128x256 kernels spilled with it (K = 1024, 1536; choose_buildable_config falls back).
    problem.allow_d_halves = key.kind == GemmKind::kMasked && key.k > 1536 && key.k <= 2048;
    problem.allow_d_in_ring = key.kind == GemmKind::kDense && key.mode == heuristics::Fp8GemmMode::k1D2D;
    problem.block_n_multiple = options().block_n_multiple;
    // Tuning sweeps force dense, per-row contiguous (whose BLOCK_M stays the alignment's), psum and masked plans.
    if (key.kind != GemmKind::kKGrouped && !options().fp8_config.empty())
        apply_forced_config(options().fp8_config, problem);
    return problem;
}

heuristics::Fp8GemmConfig choose_buildable_config(heuristics::Fp8GemmProblem& problem,
                                                  const std::function<void(const heuristics::Fp8GemmConfig&)>& build) {
    for (;;) {
        const heuristics::Fp8GemmConfig config = heuristics::choose_fp8_gemm_config(problem);
        try {
            build(config);
            return config;
        } catch (const SpillError& e) {
            // D in halves changes the kernel's loop (a fourth stage), and ptxas spilled some of those where the whole
            // D tile did not (masked 128x256 at K = 1024 and 1536, 16 bytes): the same tile with the whole D tile
            // comes first, before any tile is given up (also for a forced tile; not for forced stages).
            if (config.d_halves && problem.allow_d_halves && problem.forced_num_stages == 0) {
                if (options().print_configs)
                    std::fprintf(stderr, "[tessera] %s refused here (%s); planning again without D in halves\n",
                                 config.describe().c_str(), e.what());
                problem.allow_d_halves = false;
                continue;
            }
            // A tile at the register budget's edge can spill for some shape constants (masked 64x192 at K = 1536,
            // any N: the consumers need 250 of their 248 registers there), or ptxas can serialize its wgmma. Plan
            // without it rather than fail the call or run a kernel at a fraction of its speed.
            if (problem.forced_block_m > 0 || problem.num_excluded_tiles == problem.kMaxExcludedTiles) throw;
            if (options().print_configs)
                std::fprintf(stderr, "[tessera] %s refused here (%s); planning again without %dx%d\n",
                             config.describe().c_str(), e.what(), config.block_m, config.block_n);
            problem.excluded_tiles[problem.num_excluded_tiles][0] = config.block_m;
            problem.excluded_tiles[problem.num_excluded_tiles][1] = config.block_n;
            ++problem.num_excluded_tiles;
        }
    }
}

const Fp8Plan& fp8_plan(const Fp8PlanKey& asked, const char* op) {
    Fp8PlanKey key = asked;
    key.block_n_multiple = options().block_n_multiple;  // a plan made under another constraint is another plan
    // A thread's last plan first: repeated calls of one shape skip the lock. Plans are never erased and map nodes do
    // not move, so the pointer stays valid.
    thread_local Fp8PlanKey last_key{};
    thread_local const Fp8Plan* last_plan = nullptr;
    if (last_plan != nullptr && key == last_key) [[likely]] return *last_plan;
    static std::mutex mutex;
    static std::unordered_map<Fp8PlanKey, Fp8Plan, Fp8PlanKeyHash> plans;
    {
        std::lock_guard lock(mutex);
        if (auto it = plans.find(key); it != plans.end()) [[likely]] {
            last_key = key;
            last_plan = &it->second;
            return it->second;
        }
    }
    heuristics::Fp8GemmProblem problem = fp8_problem(key, runtime::device_info(key.device).max_smem_per_block);
    Fp8Plan plan;
    // Loading the module needs the device's context current (a C++ caller may not have made it so).
    runtime::make_current(key.device);
    const auto build = [&](const heuristics::Fp8GemmConfig& c) { plan.kernel = &jit::jit().get(fp8_spec(key, c)); };
    for (int attempt = 0;; ++attempt) {
        plan.config = choose_buildable_config(problem, build);
        const int split = plan.config.split_k;
        if (split == 1 || attempt > 0) break;
        // A split-K plan assumes all its clusters are resident at once; where the driver says fewer fit, plan again
        // with the driver's capacity (correct either way: surplus clusters would only wait for a free GPC).
        const int resident = split * plan.kernel->max_active_clusters(fp8_launch_config(plan.config, nullptr, key.device));
        if (resident >= plan.config.num_sms) break;
        problem.cluster_ctas[split == 2 ? 1 : split == 4 ? 2 : 3] = resident > 0 ? resident : -1;
    }
    if (options().print_configs)
        std::fprintf(stderr, "[tessera] %s m=%lld n=%lld k=%lld groups=%d %s: %s\n", op,
                     static_cast<long long>(key.m), static_cast<long long>(key.n), static_cast<long long>(key.k),
                     key.num_groups, key.mode == heuristics::Fp8GemmMode::k1D2D ? "1D2D" : "1D1D",
                     plan.config.describe().c_str());
    std::lock_guard lock(mutex);
    const Fp8Plan& stored = plans.emplace(key, plan).first->second;
    last_key = key;
    last_plan = &stored;
    return stored;
}

jit::LaunchConfig fp8_launch_config(const heuristics::Fp8GemmConfig& c, Stream stream, int device) {
    jit::LaunchConfig launch;
    launch.grid_x = static_cast<unsigned>(c.num_sms);
    launch.block_x = static_cast<unsigned>(c.num_threads());
    launch.smem_bytes = static_cast<unsigned>(c.smem_bytes);
    launch.cluster_x = static_cast<unsigned>(c.cluster_m * c.cluster_n * c.split_k);
    launch.stream = static_cast<CUstream>(stream);
    launch.device = device;
    return launch;
}

void launch_fp8_gemm(const jit::Kernel& kernel, const heuristics::Fp8GemmConfig& c, const void* params,
                     std::size_t param_bytes, Stream stream, int device) {
    kernel.launch_bytes(fp8_launch_config(c, stream, device), params, param_bytes);
}

}  // namespace tessera::ops
