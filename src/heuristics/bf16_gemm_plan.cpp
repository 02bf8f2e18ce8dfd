#include "heuristics/bf16_gemm_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "heuristics/fp8_gemm_plan.hpp"
#include "tessera/error.hpp"

namespace tessera::heuristics {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// As many stages as shared memory holds, up to 15: a decode tile's stages are what keeps B's bytes in flight (at
// 1x7168x2048 DeepGEMM's 16 stages of a 64-column tile ran in 12.4 us where our 8 of the same columns took 16.1).
// With 16, NVRTC spilled 8 bytes in the masked kind's 64x32 kernel (masked 4x256x512x1024, expected m 100).
constexpr int kBf16MaxStages = 15;

// Relative cost of one tile's k-block: the wgmma work (m64nN k16 instructions take time in proportion to N, with a
// fixed issue cost per instruction; a 64-row tile runs one consumer warpgroup, which keeps the SM's tensor cores
// less busy than two) against the bytes the stage brings from L2, whichever bounds it.
double tile_cost_per_k_block(int block_m, int block_n) {
    const double math = static_cast<double>(block_m) * (block_n + 24) * (block_m == 64 ? 1.6 : 1.0);
    const double load = 80.0 * (block_m + block_n);
    return std::max(math, load) + 1024.0;
}

// A's rows per stage for a tile of block_m rows: 8 for a dense problem of at most 8 rows with K-major A on 64-row
// tiles (one swizzle group, which the kernel's descriptor reads as all 64 rows), else the tile's (0).
int narrow_a_rows(const Bf16GemmProblem& p, int block_m) {
    return p.dense && p.num_groups == 1 && p.m <= 8 && !p.mn_major_a && block_m == 64 ? 8 : 0;
}

int split_capacity(const Bf16GemmProblem& p, int split) {
    const int given = p.split_capacity[split == 2 ? 0 : split == 4 ? 1 : 2];
    if (given < 0) return 0;
    return given > 0 ? given : fp8_gemm_cluster_capacity(p.num_sms, split);
}

// Split-K for dense problems whose tiles leave SMs idle (decode). Each (tile, S) whose tiles * S CTAs fit one wave of
// clusters costs ceil(kb / S) k-blocks of its tile plus the cluster reduction (the FP8 kernel's epilogue and cost),
// never less than streaming the operands once. A split plan must beat the unsplit one by 10 %.
void choose_split_k(const Bf16GemmProblem& p, double unsplit_cost, double floor, Bf16GemmConfig& best) {
    const double kb = static_cast<double>(ceil_div(p.k, kBf16BlockK));
    const int n_step = p.block_n_multiple > 1 ? std::lcm(16, p.block_n_multiple) : 16;
    double best_cost = 0.9 * unsplit_cost;
    for (int split : {2, 4, 8}) {
        if (split > kb) break;
        for (int block_m : {64, 128}) {
            if (p.block_m == 0 && block_m == 128 && p.m <= 64) continue;  // a 128-row tile would compute empty rows
            for (int block_n = n_step; block_n <= 256; block_n += n_step) {
                if (p.mn_major_b && block_n % 64 != 0) continue;
                const int a_rows = narrow_a_rows(p, block_m);
                int stages = 0;
                for (int s = kBf16MaxStages; s >= 3 && stages == 0; --s)
                    if (bf16_gemm_smem_bytes(block_m, block_n, s, false, true, a_rows) <= p.max_smem_bytes) stages = s;
                if (stages == 0) continue;
                const std::int64_t ctas = ceil_div(p.m, block_m) * ceil_div(p.n, block_n) * split;
                if (ctas > split_capacity(p, split)) continue;
                const double mainloop = std::ceil(kb / split) * tile_cost_per_k_block(block_m, block_n);
                const double cost = std::max(mainloop + split_k_reduce_cost(block_m, block_n, split), floor) *
                                    (stages < 4 ? 1.03 : 1.0);
                if (cost >= best_cost) continue;
                best_cost = cost;
                std::tie(best.block_m, best.block_n, best.num_stages, best.split_k, best.a_rows) =
                    std::tuple{block_m, block_n, stages, split, a_rows};
                best.num_sms = static_cast<int>(ctas);
            }
        }
    }
}

}  // namespace

int bf16_gemm_smem_bytes(int block_m, int block_n, int stages, bool out_f32, bool split_k, int a_rows) {
    const int d_tile = block_m * block_n * (out_f32 || split_k ? 4 : 2);
    return 1024 + (d_tile + 1023) / 1024 * 1024 + stages * ((a_rows > 0 ? a_rows : block_m) + block_n) * kBf16BlockK * 2;
}

std::string Bf16GemmConfig::describe() const {
    return "block " + std::to_string(block_m) + "x" + std::to_string(block_n) + "x" + std::to_string(kBf16BlockK) +
           ", " + std::to_string(num_stages) + " stages, " + std::to_string(num_sms) + " CTAs, group " +
           std::to_string(group_size) + ", smem " + std::to_string(smem_bytes) +
           (split_k > 1 ? ", split-K " + std::to_string(split_k) : "") +
           (a_rows > 0 ? ", A " + std::to_string(a_rows) + " rows per stage" : "");
}

Bf16GemmConfig choose_bf16_gemm_config(const Bf16GemmProblem& p) {
    TESSERA_CHECK(p.m > 0 && p.n > 0 && p.k > 0 && p.num_sms > 0 && p.num_groups > 0,
                  "BF16 GEMM planning: expected positive m, n, k, SM and group counts, got m=", p.m, " n=", p.n,
                  " k=", p.k, " sms=", p.num_sms, " groups=", p.num_groups);
    const int n_step = p.block_n_multiple > 1 ? std::lcm(16, p.block_n_multiple) : 16;
    const double kb = static_cast<double>(ceil_div(p.k, kBf16BlockK));
    // Bytes every plan must move at least once, in the same units: a floor under memory-bound shapes.
    const double out_bytes = p.out_f32 ? 4.0 : 2.0;
    const double floor = 0.0105 * 2.0 *
                         static_cast<double>(p.m * p.k * p.num_groups + p.n * p.k * p.num_groups +
                                             out_bytes / 2.0 * p.m * p.n * p.num_groups);
    Bf16GemmConfig best;
    double best_cost = std::numeric_limits<double>::max(), best_stream = 0.0;
    bool best_at_floor = false;
    for (int block_m : {64, 128}) {
        if (p.block_m > 0 && block_m != p.block_m) continue;
        // At most 64 rows (per group), where the layout leaves the tile's rows free: a 128-row tile computes empty
        // rows and halves the stages. Without this, plans whose cost is the byte floor tie and the larger tile won
        // (dense 1x24576x1536 took 128x208: 1.24x DeepGEMM's time; 1x129280x7168 into FP32 128x160: 1.68x; einsum
        // 'bhr,hdr->bhd' at 4 rows and 128 heads 128x144 with 5 stages: 1.54x).
        if (p.block_m == 0 && block_m == 128 && p.m <= 64) continue;
        // Nor a tile wider than N needs (N rounded up to the column step): its extra columns are never loaded but
        // take stages' room (einsum's 128-column heads took 144- to 208-column tiles).
        const int n_align = p.mn_major_b ? std::lcm(n_step, 64) : n_step;
        const int n_cap = static_cast<int>(std::min<std::int64_t>(256, ceil_div(p.n, n_align) * n_align));
        for (int block_n = n_step; block_n <= n_cap; block_n += n_step) {
            if (p.mn_major_b && block_n % 64 != 0) continue;  // MN-major B arrives in 64-column boxes
            const int a_rows = narrow_a_rows(p, block_m);
            int stages = 0;
            for (int s = kBf16MaxStages; s >= 3 && stages == 0; --s)
                if (bf16_gemm_smem_bytes(block_m, block_n, s, p.out_f32, false, a_rows) <= p.max_smem_bytes) stages = s;
            if (stages == 0) continue;
            const std::int64_t tiles = ceil_div(p.m, block_m) * ceil_div(p.n, block_n) * p.num_groups;
            const double waves = static_cast<double>(ceil_div(tiles, p.num_sms));
            const double per_k_block = tile_cost_per_k_block(block_m, block_n);
            const double mainloop = waves * kb * per_k_block;
            const double cost = std::max(mainloop, floor) * (stages < 4 ? 1.03 : 1.0);
            // Ties at the byte floor go to the tile whose SMs each stream the fewest operand rows (waves times the
            // tile's rows plus columns), then the larger: on an H100 masked g6 e20 6144x7168 ran 194 us on the
            // larger tile's 64x208, 184 on 64x144, and 128x32768x512 21.6 on 128x176, 19.5 on 128x128. Other ties
            // keep the larger tile.
            const double stream = waves * (block_m + block_n);
            const bool at_floor = mainloop <= floor && best_at_floor;
            const bool larger = block_m * block_n > best.block_m * best.block_n;
            const bool wins_tie = at_floor ? stream < best_stream || (stream == best_stream && larger) : larger;
            if (cost < best_cost * 0.999 || (cost <= best_cost * 1.001 && wins_tie)) {
                best_cost = std::min(best_cost, cost);
                best_stream = stream;
                best_at_floor = mainloop <= floor;
                best.block_m = block_m;
                best.block_n = block_n;
                best.num_stages = stages;
                best.a_rows = a_rows;
            }
        }
    }
    TESSERA_CHECK(best_cost < std::numeric_limits<double>::max(), "BF16 GEMM planning: no tile fits for m=", p.m,
                  " n=", p.n, " k=", p.k, p.block_n_multiple > 1 ? " with block N a multiple of lcm(16, " : "",
                  p.block_n_multiple > 1 ? std::to_string(p.block_n_multiple) + ") by set_block_size_multiple_of" : "");
    best.num_sms = p.num_sms;
    // Split-K pays where the unsplit plan leaves SMs idle. Decode tiles (M <= 128, B's stream dominates) that fill at
    // least 95 % of one wave stream from every SM already; splitting them adds the cluster reduction and a pipeline
    // fill per split (1x4096x7168: split 4 of 64x128 tiles took 36.6 us where one wave of full-K 32-column tiles took
    // 29.5, on an H100). Taller problems keep the split: 4096x256x7168 into FP32 ran 45.2 us as one full-K wave of
    // 128x64 tiles against DeepGEMM's 38.0.
    const std::int64_t unsplit_tiles = ceil_div(p.m, best.block_m) * ceil_div(p.n, best.block_n);
    const bool fills_one_wave = p.m <= 128 && unsplit_tiles <= p.num_sms &&
                                unsplit_tiles * 20 >= std::int64_t{p.num_sms} * 19;
    if (p.dense && p.num_groups == 1 && !fills_one_wave) choose_split_k(p, best_cost, floor, best);
    best.smem_bytes =
        bf16_gemm_smem_bytes(best.block_m, best.block_n, best.num_stages, p.out_f32, best.split_k > 1, best.a_rows);
    // Raster groups of 8 or 16 m-blocks (as the FP8 plans): a wave then touches few blocks of A and of B.
    best.group_size = ceil_div(p.m, best.block_m) >= 16 ? 16 : 8;
    fp8_gemm_store_layout(p.out_f32 ? Fp8GemmMode::k1D1D : Fp8GemmMode::k1D2D, best.block_n, &best.swizzle_d_bytes,
                          &best.store_box_n);
    return best;
}

Bf16GemmConfig choose_bf16_batch_sum_config(const Bf16GemmProblem& p) {
    TESSERA_CHECK(p.m > 0 && p.n > 0 && p.k > 0 && p.num_sms > 0 && p.num_groups > 0 && p.m % 64 == 0 &&
                      p.n % 64 == 0 && p.k % kBf16BlockK == 0,
                  "BF16 batch-sum planning: expected positive m, n, k (multiples of 64), SM and batch counts, got m=",
                  p.m, " n=", p.n, " k=", p.k, " sms=", p.num_sms, " batch=", p.num_groups);
    Bf16GemmConfig c;
    c.block_m = p.m % 128 == 0 ? 128 : 64;
    // 128 columns where they divide N: the FP32 D tile (64 KB) leaves room for 5 stages; 192 keeps 3.
    c.block_n = p.n % 128 == 0 ? 128 : p.n % 192 == 0 ? 192 : 64;
    if (p.block_n_multiple > 1) {
        const int step = std::lcm(16, p.block_n_multiple);
        c.block_n = 0;
        for (int bn : {128, 192, 256, 64})
            if (c.block_n == 0 && bn % step == 0 && p.n % bn == 0) c.block_n = bn;
        TESSERA_CHECK(c.block_n > 0, "BF16 batch-sum planning: no tile fits for n=", p.n, " with block N a multiple "
                      "of lcm(16, ", p.block_n_multiple, ") by set_block_size_multiple_of");
    }
    c.num_stages = 0;
    for (int s = 8; s >= 2 && c.num_stages == 0; --s)
        if (bf16_gemm_smem_bytes(c.block_m, c.block_n, s, true) <= p.max_smem_bytes) c.num_stages = s;
    TESSERA_CHECK(c.num_stages > 0, "BF16 batch-sum planning: block ", c.block_m, "x", c.block_n,
                  " does not fit in ", p.max_smem_bytes, " bytes of shared memory");
    const std::int64_t mn_tiles = (p.m / c.block_m) * (p.n / c.block_n);
    const std::int64_t k_blocks = p.num_groups * (p.k / kBf16BlockK);
    // At least 4 k-blocks per tile: below that the reduce-add of the FP32 tile outweighs its mainloop.
    const std::int64_t splits =
        std::max<std::int64_t>(1, std::min<std::int64_t>(p.num_sms / std::max<std::int64_t>(mn_tiles, 1),
                                                         k_blocks / 4));
    const std::int64_t per = ceil_div(k_blocks, splits);
    c.k_blocks_per_split = static_cast<int>(per);
    c.num_sms = static_cast<int>(std::min<std::int64_t>(p.num_sms, mn_tiles * ceil_div(k_blocks, per)));
    c.smem_bytes = bf16_gemm_smem_bytes(c.block_m, c.block_n, c.num_stages, true);
    c.group_size = 8;
    fp8_gemm_store_layout(Fp8GemmMode::k1D1D, c.block_n, &c.swizzle_d_bytes, &c.store_box_n);
    return c;
}

}  // namespace tessera::heuristics
