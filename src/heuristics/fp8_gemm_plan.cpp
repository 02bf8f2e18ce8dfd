// FP8 GEMM heuristics: enumerate legal tiles, rank them with a small wave/tile cost model, then pick stages and
// the cluster. Each filter says why it exists.
#include "heuristics/fp8_gemm_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/error.hpp"

namespace tessera::heuristics {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
int align_up(int a, int b) { return (a + b - 1) / b * b; }

Fp8GemmConfig finish_config(const Fp8GemmProblem& p, Fp8GemmConfig c);
Fp8GemmConfig forced_config(const Fp8GemmProblem& p);

// Per-128-K-block cost of one tile in the units of choose_fp8_gemm_config's model (1 unit ~ 22 ps on the H200:
// a 128x128 2-warpgroup tile's k-block of tensor-core work is 16384 units).
double tile_cost_per_k_block(int block_m, int block_n, int wgs) {
    // 256-row tiles give each warpgroup two batches per k-block, so part of the drains overlap the other batch.
    // Calibrated on the H200: at M = 4096 a 256x128 tile (A multicast) took 1.35-1.41x the time of a 128x192 tile (no
    // cluster) on five shapes with K from 512 to 16384, about the same time per output element; 37.5 columns (1.23x)
    // picked 256x128 where 128x192 ran 2.5-3 % faster (4096x24576x1536, 4096x32768x512).
    const double overhead_cols = wgs == 1 ? 150.0 : (block_m == 256 ? 58.0 : 75.0);
    const double math = block_m * (block_n + overhead_cols);
    return std::max<double>(math, 64.0 * (block_m + block_n)) + 2048.0;
}

// Per-tile cost of a 1D1D (FP32) tile's epilogue, the TMA reduce-add of its D tile, in the same units: ~1.35 per
// byte, and ~2.1 where the FP32 D tile leaves shared memory for only three stages and CTAs run several tiles (the
// producer cannot run as far ahead into the next tile across the epilogue). Calibrated on the H200, where it reproduces
// the measured times within 5 %: wgrad 24576x4096x1536 ran 128x152 in 418.2 us (40 waves of 12 k-blocks), 128x136 in
// 428.5 (46 waves) and 128x160 (three stages) in 476.6 (38 waves), 7168x4096x2048 128x152 in 158.2 (12 waves of 16);
// and it ranks 128x128 over 128x136 where both run the same waves (4096x2048x512: 28.8 against 29.7 us).
double fp32_epilogue_cost(const Fp8GemmProblem& p, int block_m, int block_n, std::int64_t waves) {
    const bool three_stages = fp8_gemm_smem_bytes(Fp8GemmMode::k1D1D, block_m, block_n, 4) > p.max_smem_bytes;
    return static_cast<double>(block_m) * block_n * 4 * (three_stages && waves > 1 ? 2.1 : 1.35);
}

// Splitting the wgmma along N works but costs issue slots: only tiles that fit whole, except for a lone 64-row block of
// a dense 1D2D problem (M <= 64), where a wider tile split in two can cut the wave count or the CTAs of a split-K plan.
// Measured on the H200: 1x32768x512 64x256 in one wave 9.1-9.2 us against two waves of 64x128 9.7; 1x7168x16384 64x256
// split-K 4 40.1 us against 64x112 split-K 2 42.8. Grouped kernels keep whole wgmmas (their larger register reserve
// made split 64-row tiles spill: masked 64x256 at N = 4096, K = 2048), except the m-grouped 1D2D 128x256 tile in two N
// halves (3 stages), which on the H200 ran every contiguous suite row 2-6 % faster than 128x192 whole (4 stages) and
// the masked e192 rows and e1024 4096x2048 2-6 % faster (e1024 6144x7168 1 % slower): a quarter fewer tiles, so less
// fixed cost per tile, and fewer operand bytes per output.
// Dense 1D2D problems take it where K >= 2048 and the 128x256 tiles fill a wave: at M = 4096 it ran 7168x16384
// 4.2 %, 4096x7168 3.8 % and 7168x2048 2.5 % faster than 256x128 with A pairs, but 24576x1536 and 32768x512 1.3 and
// 1.6 % slower than 128x192 (short K: one tile's fixed cost weighs more, and the ring has 3 stages, not 4).
bool wide_split(const Fp8GemmProblem& p, int block_m, int block_n, int n_splits) {
    if (n_splits != 2 || block_m != 128 || block_n != 256 || p.mode != Fp8GemmMode::k1D2D) return false;
    const bool dense_ok = p.allow_split_k && p.num_groups == 1 && p.k >= 2048 &&
                          ceil_div(p.m, 128) * ceil_div(p.n, 256) >= p.num_sms;
    return p.allow_wide_split || dense_ok;
}
bool n_split_allowed(const Fp8GemmProblem& p, int block_m, int block_n, int n_splits) {
    const bool dense_1d2d = p.allow_split_k && p.mode == Fp8GemmMode::k1D2D && p.num_groups == 1;
    return n_splits == 1 || (n_splits == 2 && dense_1d2d && p.m <= 64) ||
           wide_split(p, block_m, block_n, n_splits);
}
// The issue slots of a split tile, where they showed (the dense decode plans above); none for wide_split's 128x256.
double n_split_factor(const Fp8GemmProblem& p, int block_m, int block_n, int n_splits) {
    return n_splits == 1 || wide_split(p, block_m, block_n, n_splits) ? 1.0 : 1.1;
}

// Split-K for problems whose tiles leave SMs idle (decode: M <= a few hundred rows). Whole-problem time, in the same
// units, of the plan `c` (split 1) against each (tile, S) whose S*tiles CTAs fit one wave of clusters:
//   waves * ceil(kb / S) * per-k-block cost + (S > 1: the cluster reduction, ~1 us), but never below the time to
//   stream the operands once at HBM speed (bytes * 0.0105 units at 4.26 TB/s).
// A split plan must beat the unsplit one by 10 % (the model ignores the reduction's store pattern).
void choose_split_k(const Fp8GemmProblem& p, Fp8GemmConfig& c) {
    const auto reduce_cost = split_k_reduce_cost;
    const double kb = static_cast<double>(ceil_div(p.k, 128));
    const double hbm = 0.0105 * static_cast<double>(p.m * p.k + p.n * p.k + 2 * p.m * p.n);
    const auto plan_cost = [&](int bm, int bn, int wgs, int split, int n_splits) {
        const std::int64_t tiles = ceil_div(p.m, bm) * ceil_div(p.n, bn) * split;
        const int capacity = split == 1 ? p.num_sms : p.split_capacity(split);
        const double waves = static_cast<double>(ceil_div(tiles, capacity));
        const double per_k_block = tile_cost_per_k_block(bm, bn, wgs) * n_split_factor(p, bm, bn, n_splits);
        const double t = waves * (std::ceil(kb / split) * per_k_block + (split > 1 ? reduce_cost(bm, bn, split) : 0.0));
        return std::max(t, hbm);
    };
    // Two 64-row blocks (64 < M <= 128) that fill the machine unsplit: no split. Each B tile streams once from HBM
    // (the second m-block reads it from L2) and no reduction runs. Measured on the H200:
    // 128x7168x16384 64x112 40.4 us vs 128x112 split 2 41.8; 128x4096x7168 64x64 15.2 vs 128x144 split 4 16.9. At
    // M = 1 the single m-block's narrow tiles run latency-bound instead (1x7168x16384: 64x56 50.6 us vs split 42.8).
    if (p.m > 64 && p.m <= 128) {
        // The narrowest tile that still fits one wave: the most CTAs streaming B. First among the widths that divide
        // 128 (one B scale per k-block, no straddling), if they keep 80 % of the SMs busy: 128x7168x2048 ran 64x128
        // (112 CTAs) in 8.8 us against 9.3-9.4 for 64x112 (128 CTAs, straddling), and 128x7168x16384 in 39.9-40.0
        // against 40.7-40.9 (three runs each on the H200).
        for (const bool straddling : {false, true}) {
            for (int block_n = 64; block_n <= 256; block_n += 8) {
                int n_splits = 0;
                if ((!straddling && 128 % block_n != 0) || !fp8_gemm_block_n_legal(p.mode, block_n) ||
                    p.excluded(64, block_n) ||
                    !fp8_gemm_fits_registers(p.mode, 64, block_n, 1, &n_splits, p.consumer_reserved_regs(1)) || n_splits != 1)
                    continue;
                const std::int64_t tiles = 2 * ceil_div(p.n, block_n);
                if (tiles > p.num_sms) continue;
                // Wider tiles only leave more SMs idle.
                if (10 * tiles < (straddling ? 9 : 8) * static_cast<std::int64_t>(p.num_sms)) break;
                c.block_m = 64;
                c.block_n = block_n;
                c.num_math_warpgroups = 1;
                return;
            }
        }
    }
    int base_splits = 1;
    fp8_gemm_fits_registers(p.mode, c.block_m, c.block_n, c.num_math_warpgroups, &base_splits,
                            p.consumer_reserved_regs(c.num_math_warpgroups));
    double best = 0.9 * plan_cost(c.block_m, c.block_n, c.num_math_warpgroups, 1, base_splits);
    for (int split : {2, 4, 8}) {
        if (split > kb) break;
        for (int block_m : {64, 128}) {
            if (block_m > 64 && ceil_div(p.m, 64) * 64 < block_m) continue;
            // Two 64-row blocks of a split plan each stream B and run one warpgroup: at 128x2112x7168, 64x80 split 4
            // ran 16.7 us against 11.3 for 128x72 split 4 (H200).
            if (block_m == 64 && p.m > 64) continue;
            const int wgs = block_m == 64 ? 1 : 2;
            for (int block_n = 16; block_n <= 256; block_n += 8) {
                if (!fp8_gemm_block_n_legal(p.mode, block_n) || p.excluded(block_m, block_n)) continue;
                int n_splits = 0;
                if (!fp8_gemm_fits_registers(p.mode, block_m, block_n, wgs, &n_splits, p.consumer_reserved_regs(wgs)) ||
                    !n_split_allowed(p, block_m, block_n, n_splits))
                    continue;
                if (fp8_gemm_smem_bytes(p.mode, block_m, block_n, 4, split) > p.max_smem_bytes) continue;
                const std::int64_t ctas = ceil_div(p.m, block_m) * ceil_div(p.n, block_n) * split;
                if (ctas > p.split_capacity(split)) continue;  // one wave: every cluster resident at once
                const double cost = plan_cost(block_m, block_n, wgs, split, n_splits);
                if (cost < best) {
                    best = cost;
                    c.block_m = block_m;
                    c.block_n = block_n;
                    c.num_math_warpgroups = wgs;
                    c.split_k = split;
                    c.num_sms = static_cast<int>(ctas);
                }
            }
        }
    }
}

}  // namespace

double split_k_reduce_cost(int block_m, int block_n, int split) {
    // Calibrated on the H200: 1x7168x2048 ran 8.7 us unsplit (64x56) and 10.0 us split in two (64x112), which this
    // model only reproduces with a reduction (cluster barriers, DSMEM reads, row stores) worth ~3 us.
    constexpr double kReduceCost = 130000.0;
    // Plus the partials themselves: every split but one sends its FP32 tile through distributed shared memory, about
    // one unit per element. Calibrated on the H200 (three runs each): 128x2112x7168 ran
    // 128x72 split 4 in 11.1-11.3 us and 128x144 split 8 in 12.5-12.9, while at M = 1 the split-8 plans stay best
    // (1x2112x7168 64x144 s8 9.8 us, 64x80 s4 10.0); the flat term alone ranks both the other way.
    return kReduceCost + static_cast<double>(block_m) * block_n * (split - 1);
}

// Mirrors kernels/tessera/prims/store_layout.cuh (docs/fp8_gemm_kernel.md): the widest swizzle dividing the row,
// except FP32 rows whose largest odd number of 32-byte sectors is at least twice that swizzle, which go out
// unswizzled in atoms of that width.
void fp8_gemm_store_layout(Fp8GemmMode mode, int block_n, int* swizzle, int* box_n) {
    const int out = mode == Fp8GemmMode::k1D2D ? 2 : 4;
    const int row_bytes = block_n * out;
    *swizzle = 0;
    for (int s : {128, 64, 32})
        if (row_bytes % s == 0) {
            *swizzle = s;
            break;
        }
    int odd_sectors = row_bytes % 32 == 0 ? row_bytes : 0;
    while (odd_sectors > 0 && (odd_sectors / 32) % 2 == 0) odd_sectors /= 2;
    if (out == 4 && odd_sectors >= 2 * *swizzle && odd_sectors / out <= 256) {
        *swizzle = 0;
        *box_n = odd_sectors / out;
        return;
    }
    *box_n = *swizzle ? *swizzle / out : block_n;
}

std::string Fp8GemmConfig::describe() const {
    return detail::str_cat("block ", block_m, "x", block_n, "x", block_k, ", ", num_stages, " stages, ",
                           num_math_warpgroups, " math WG, cluster ", cluster_m, "x", cluster_n, ", split-K ", split_k,
                           ", ", num_sms, " CTAs, group ", group_size,
                           ", smem ", smem_bytes,
                           load_rows_a > 0 ? detail::str_cat(", A box ", load_rows_a, " rows") : std::string(),
                           d_in_ring ? ", D in ring" : "",
                           d_halves ? ", D in halves" : "");
}

int fp8_gemm_smem_bytes(Fp8GemmMode mode, int block_m, int block_n, int stages, int split_k, bool d_in_ring,
                        bool d_halves) {
    const int out = split_k > 1 ? 4 : (mode == Fp8GemmMode::k1D2D ? 2 : 4);  // split-K: the FP32 partial buffer
    // 1D2D: two floats, so kernels that stage the B scales in shared memory (two per k-block) fit the same plans; the
    // shipped kernel uses one (its layout is at most this size, which is what the launch must provide).
    const int sfb_stage = mode == Fp8GemmMode::k1D2D ? 8 : 4 * align_up(block_n, 32);
    return align_up(stages * (4 * block_m + sfb_stage + 16) + (d_in_ring ? 8 : 0), 1024) +
           (d_in_ring ? 0 : block_m * block_n * out / (d_halves ? 2 : 1)) + stages * 128 * (block_m + block_n);
}

int fp8_gemm_cluster_capacity(int num_sms, int size) {
    if (size <= 2) return num_sms / size * size;
    return std::max(size, (num_sms - 4) / size * size);
}

bool fp8_gemm_fits_registers(Fp8GemmMode mode, int block_m, int block_n, int math_warpgroups, int* n_splits,
                             int reserved_regs) {
    const int waves = block_m / (64 * math_warpgroups);
    const int budget = (math_warpgroups == 2 ? 232 : 248) - reserved_regs;  // the kernel's kMathRegs
    for (int s : {1, 2, 4}) {
        if (block_n % (8 * s) != 0) continue;
        const int regs = waves * block_n / 2 + block_n / (2 * s) + (mode == Fp8GemmMode::k1D1D ? block_n / (4 * s) : 0);
        if (regs <= budget) {
            if (n_splits) *n_splits = s;
            return true;
        }
    }
    return false;
}

bool fp8_gemm_block_n_legal(Fp8GemmMode mode, int block_n) {
    if (block_n < 16 || block_n > 256 || block_n % 8 != 0) return false;
    if (mode == Fp8GemmMode::k1D2D && block_n > 128)
        return block_n == 136 || block_n == 144 || block_n == 160 || block_n == 192 || block_n == 256;
    return true;
}

namespace {
// Waves of tiles over the SMs; for a row-count hint (Fp8GemmProblem::m_is_hint), of the mean tile count over 0.75 m,
// m and 1.25 m.
std::int64_t plan_waves(const Fp8GemmProblem& p, int block_m, int block_n) {
    const std::int64_t per_row_block = p.num_groups * ceil_div(p.n, block_n);
    if (!p.m_is_hint) return ceil_div(per_row_block * ceil_div(p.m, block_m), p.num_sms);
    std::int64_t row_blocks = 0;  // summed over the three row counts
    for (const std::int64_t m : {std::max<std::int64_t>(1, p.m * 3 / 4), p.m, p.m * 5 / 4})
        row_blocks += ceil_div(m, block_m);
    return ceil_div(per_row_block * row_blocks, 3 * static_cast<std::int64_t>(p.num_sms));
}
}  // namespace

Fp8GemmConfig choose_fp8_gemm_config(const Fp8GemmProblem& p) {
    TESSERA_ASSERT(p.m > 0 && p.n > 0 && p.k > 0 && p.num_sms > 0 && p.num_groups > 0);
    TESSERA_ASSERT(p.block_m == 0 || p.block_m == 64 || p.block_m == 128 || p.block_m == 256);
    Fp8GemmConfig best;
    double best_cost = std::numeric_limits<double>::max();
    for (int block_m : {64, 128, 256}) {
        if (p.block_m > 0 && block_m != p.block_m) continue;
        // A tile taller than M (rounded to the 64-row wgmma) only multiplies padding.
        if (p.block_m == 0 && block_m > 64 && ceil_div(p.m, 64) * 64 < block_m) continue;
        const int wgs = block_m == 64 ? 1 : 2;
        for (int block_n = 16; block_n <= 256; block_n += 8) {
            if (!fp8_gemm_block_n_legal(p.mode, block_n) || p.excluded(block_m, block_n)) continue;
            // 256-row tiles narrower than 128 starve on shared-memory reads of A (4096x2112x7168: 256x88 ran 135 us,
            // 128x192 97 us).
            if (block_m == 256 && block_n < 128) continue;
            int splits = 0;
            if (!fp8_gemm_fits_registers(p.mode, block_m, block_n, wgs, &splits, p.consumer_reserved_regs(wgs)) ||
                !n_split_allowed(p, block_m, block_n, splits))
                continue;
            if (fp8_gemm_smem_bytes(p.mode, block_m, block_n, 3) > p.max_smem_bytes) continue;  // >= 3 stages
            const std::int64_t waves = plan_waves(p, block_m, block_n);
            // Per-tile time per 128-K block: the larger of tensor-core work and operand bytes (BM+BN, in the same
            // units: balanced at 128x128), plus a fixed cost for prologue and epilogue. Each 64-row wgmma batch
            // also pays a drain (wait_group, then the FP32 promotion) worth about 75 columns of work: measured on
            // the H200, 4096x2112x7168 ran 135 us with 256x88 tiles and 97 us with 128x192.
            // With one consumer warpgroup no second one issues wgmma during the drain: twice the exposed cost.
            double per_k_block =
                tile_cost_per_k_block(block_m, block_n, wgs) * n_split_factor(p, block_m, block_n, splits);
            // 1D2D tiles narrower than 128 whose columns can straddle two 128-column B-scale blocks read and select
            // two scales per k-block. Measured where it shows, on a lone row block's latency-bound k-blocks:
            // 1x7168x2048 ran 64x64 in 8.2-8.3 us and 64x56 in 8.5-8.6 (three H200 runs), ~20 ns per k-block (~850
            // units). Wider tiles' costs were calibrated with their two-scale reads included.
            if (p.mode == Fp8GemmMode::k1D2D && block_n < 128 && 128 % block_n != 0) per_k_block += 850.0;
            // 1D1D tiles also pay their FP32 reduce-add epilogue once per tile, which matters at short K (wgrad).
            const double cost = p.mode == Fp8GemmMode::k1D1D
                                    ? static_cast<double>(waves) * (static_cast<double>(ceil_div(p.k, 128)) * per_k_block +
                                                                    fp32_epilogue_cost(p, block_m, block_n, waves))
                                    : static_cast<double>(waves) * per_k_block;
            // Ties go to the larger tile (fewer loads of the other operand).
            if (cost < best_cost * 0.999 || (cost <= best_cost * 1.001 && block_m * block_n > best.block_m * best.block_n)) {
                best_cost = std::min(best_cost, cost);
                best.block_m = block_m;
                best.block_n = block_n;
                best.num_math_warpgroups = wgs;
            }
        }
    }
    Fp8GemmConfig& c = best;
    c.num_sms = p.num_sms;
    if (p.forced_block_m > 0) return forced_config(p);
    TESSERA_CHECK(best_cost < std::numeric_limits<double>::max(), "FP8 GEMM planning: no tile left for m=", p.m,
                  " n=", p.n, " k=", p.k, " (", p.num_excluded_tiles, " excluded after spilling",
                  p.block_n_multiple > 1 ? ", block N a multiple of lcm(16, " : "",
                  p.block_n_multiple > 1 ? std::to_string(p.block_n_multiple) + ") by set_block_size_multiple_of" : "",
                  ")");
    if (p.allow_split_k && p.mode == Fp8GemmMode::k1D2D && p.num_groups == 1) choose_split_k(p, best);
    // Multicast A across an N-pair of tall tiles (dense) when there are enough tiles for pairs to form and the grid
    // is even: 256x128 pairs ran ~7 % faster than no cluster on the H200 (6144x6144x7168: 392.2 against 419.4 us).
    // B pairs along M measured 1.5-4.5 % slower than no cluster on every dense and contiguous row, so none are
    // planned (docs/performance.md, tried and rejected).
    const std::int64_t n_blocks = ceil_div(p.n, c.block_n);
    const std::int64_t tiles = p.num_groups * ceil_div(p.m, c.block_m) * n_blocks;
    if (c.split_k == 1 && p.allow_cluster && p.allow_a_multicast && p.num_sms % 2 == 0 && tiles >= p.num_sms &&
        p.m >= 512 && c.block_m > c.block_n && n_blocks >= 2)
        c.cluster_n = 2;
    return finish_config(p, c);
}

namespace {

Fp8GemmConfig finish_config(const Fp8GemmProblem& p, Fp8GemmConfig c) {
    const std::int64_t primary_blocks = c.cluster_n == 2 ? ceil_div(p.n, c.block_n) : ceil_div(p.m, c.block_m);
    c.group_size = primary_blocks >= 16 ? 16 : 8;
    // Deeper rings add nothing once loads are hidden; split-K plans stream from HBM and keep more bytes in flight.
    const int max_stages = c.split_k > 1 ? 20 : 12;
    const auto deepest = [&](bool d_in_ring, bool d_halves = false) {
        int stages = 2;
        for (int s = 3; s <= max_stages; ++s)
            if (fp8_gemm_smem_bytes(p.mode, c.block_m, c.block_n, s, c.split_k, d_in_ring, d_halves) <=
                p.max_smem_bytes)
                stages = s;
        return stages;
    };
    c.num_stages = deepest(false);
    // D in halves (where the problem allows it: masked at 1536 < K <= 2048) when the whole D tile leaves a ring of 3
    // stages (128x256: 64 KB of D) and half of it makes 4: the epilogue then stores the two N halves in turn, the
    // second after the TMA has read the first. H200: masked e192 4096x2048 2.7-4.4 % faster, e1024 0.8-1.1 %; at
    // K = 7168 (the unrolled loop) masked ran level, contiguous and psum 1.4-1.6 % slower. Not to 5 stages: a 4-stage
    // ring runs the loop unrolled over its passes. BF16 tiles of an even number of store atoms only.
    int store_swizzle = 0, store_box_n = 0;
    fp8_gemm_store_layout(p.mode, c.block_n, &store_swizzle, &store_box_n);
    const bool halves_allowed = p.allow_d_halves && p.mode == Fp8GemmMode::k1D2D && c.split_k == 1 &&
                                (c.block_n / store_box_n) % 2 == 0 && c.num_stages <= 3;
    const int halves_stages = halves_allowed ? std::min(deepest(false, true), 4) : 0;
    // D over the ring where every CTA has at most one tile (then nothing waits for the D tile to be read out) and the
    // freed bytes make one more stage. The A ring must hold the D tile (rows x columns x 2 bytes over rows x 128).
    // H200: 4096x576x7168, 128x144 one wave of 128 tiles, 6 stages instead of 5: 3.7 % faster. Only two-warpgroup tiles
    // whose ring already has 5 stages or more: a 4-stage ring runs the loop unrolled over its passes, which a fifth
    // stage gives up (128x24576x1536, 128x192: 2.5 % slower), and the decode plans' 64-row tiles ran level with one
    // more stage (1x24576x1536, 1x7168x16384, 1x7168x2048).
    const int ring_stages = deepest(true);
    const bool one_tile_per_cta = ceil_div(p.m, c.block_m) * ceil_div(p.n, c.block_n) <= c.num_sms;
    const bool ring_allowed = p.allow_d_in_ring && p.mode == Fp8GemmMode::k1D2D && p.num_groups == 1 &&
                              !p.m_is_hint && c.split_k == 1 && c.cluster_m * c.cluster_n == 1;
    const bool ring_pays = c.num_math_warpgroups == 2 && c.num_stages >= 5 && c.num_stages < ceil_div(p.k, 128);
    const auto ring_holds_d = [&](int stages) { return 2 * c.block_n <= stages * 128; };
    if (p.forced_num_stages > 0) {
        const bool ring = ring_allowed && one_tile_per_cta && ring_holds_d(p.forced_num_stages);
        const int most = std::max({c.num_stages, ring ? ring_stages : 0, halves_stages});
        TESSERA_CHECK(p.forced_num_stages >= 2 && p.forced_num_stages <= most, "TESSERA_FP8_CONFIG: ", c.block_m,
                      "x", c.block_n, " takes 2 to ", most, " stages here, got ", p.forced_num_stages);
        c.d_in_ring = p.forced_num_stages > c.num_stages && ring && p.forced_num_stages <= ring_stages;
        c.d_halves = p.forced_num_stages > c.num_stages && !c.d_in_ring;
        c.num_stages = p.forced_num_stages;
    } else if (ring_allowed && ring_pays && one_tile_per_cta && ring_stages > c.num_stages &&
               ring_holds_d(ring_stages)) {  // (a ring that already holds a whole tile's k-blocks gains nothing)
        c.d_in_ring = true;
        c.num_stages = ring_stages;
    } else if (halves_stages > c.num_stages) {
        c.d_halves = true;
        c.num_stages = halves_stages;
    }
    c.smem_bytes =
        fp8_gemm_smem_bytes(p.mode, c.block_m, c.block_n, c.num_stages, c.split_k, c.d_in_ring, c.d_halves);
    fp8_gemm_store_layout(p.mode, c.block_n, &c.swizzle_d_bytes, &c.store_box_n);
    // The stage layout keeps 64 rows of A (the wgmma reads them all); only the box shrinks.
    if (p.num_groups == 1 && c.block_m == 64 && p.m <= p.small_m_box_rows) c.load_rows_a = p.m <= 16 ? 16 : 32;
    return c;
}

Fp8GemmConfig forced_config(const Fp8GemmProblem& p) {
    Fp8GemmConfig c;
    c.block_m = p.forced_block_m;
    c.block_n = p.forced_block_n;
    c.num_math_warpgroups = c.block_m == 64 ? 1 : 2;
    c.cluster_n = p.forced_cluster_n;
    c.split_k = p.forced_split_k;
    int splits = 0;
    TESSERA_CHECK((c.block_m == 64 || c.block_m == 128 || c.block_m == 256) && fp8_gemm_block_n_legal(p.mode, c.block_n) &&
                      fp8_gemm_fits_registers(p.mode, c.block_m, c.block_n, c.num_math_warpgroups, &splits,
                                              p.consumer_reserved_regs(c.num_math_warpgroups)) &&
                      fp8_gemm_smem_bytes(p.mode, c.block_m, c.block_n, 2, c.split_k) <= p.max_smem_bytes,
                  "TESSERA_FP8_CONFIG: tile ", c.block_m, "x", c.block_n, " is not legal for this kernel");
    TESSERA_CHECK(p.block_m == 0 || c.block_m == p.block_m, "TESSERA_FP8_CONFIG: this problem fixes the tile's rows to ",
                  p.block_m, " (contiguous layout alignment), got ", c.block_m);
    TESSERA_CHECK(c.cluster_m * c.cluster_n <= (p.allow_cluster ? 2 : 1) && (c.cluster_n == 1 || p.allow_a_multicast) &&
                      (c.split_k == 1 || (p.allow_split_k && c.cluster_m * c.cluster_n == 1 && c.split_k <= 8)),
                  "TESSERA_FP8_CONFIG: cluster ", c.cluster_m, "x", c.cluster_n, " / split-K ", c.split_k,
                  " not available for this problem");
    const std::int64_t tiles = p.num_groups * ceil_div(p.m, c.block_m) * ceil_div(p.n, c.block_n);
    c.num_sms = c.split_k > 1 ? static_cast<int>(tiles * c.split_k) : p.num_sms;
    return finish_config(p, c);
}

}  // namespace

}  // namespace tessera::heuristics
