// BF16 GEMM planning: every choice is legal (tile, shared memory, stages) over a grid of shapes, the kernel's shared
// memory formula is the planner's, and set_block_size_multiple_of constrains block N.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <tuple>
#include <string>

#include "heuristics/bf16_gemm_plan.hpp"
#include "tessera/error.hpp"

using namespace tessera::heuristics;

TEST(Bf16GemmPlan, ChoicesAreLegalForManyShapes) {
    for (bool out_f32 : {false, true})
        for (bool mn_b : {false, true})
            for (int sms : {132, 78, 1})
                for (std::int64_t m : {1, 64, 65, 128, 129, 4096, 4097})
                    for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{2112, 7168}, {576, 7168}, {24576, 1536},
                                        {32768, 512}, {8, 8}, {136, 4096}}) {
                        Bf16GemmProblem p{m, n, k, false, mn_b, out_f32, out_f32};
                        p.num_sms = sms;
                        SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " f32 " << out_f32 << " mn_b "
                                                        << mn_b << " sms " << sms);
                        const Bf16GemmConfig c = choose_bf16_gemm_config(p);
                        EXPECT_TRUE(c.block_m == 64 || c.block_m == 128);
                        EXPECT_EQ(c.block_n % 16, 0);
                        EXPECT_LE(c.block_n, 256);
                        if (mn_b) EXPECT_EQ(c.block_n % 64, 0);
                        EXPECT_GE(c.num_stages, 3);
                        EXPECT_EQ(c.smem_bytes, bf16_gemm_smem_bytes(c.block_m, c.block_n, c.num_stages, out_f32));
                        EXPECT_LE(c.smem_bytes, 232448);
                        EXPECT_EQ(c.num_sms, sms);
                        EXPECT_GT(c.store_box_n, 0);
                    }
}

TEST(Bf16GemmPlan, LargeShapesTakeWideTilesAndDecodeFillsTheMachine) {
    const Bf16GemmConfig big = choose_bf16_gemm_config({4096, 7168, 16384});
    EXPECT_EQ(big.block_m, 128);
    EXPECT_GE(big.block_n, 128);
    const Bf16GemmConfig decode = choose_bf16_gemm_config({1, 7168, 16384});
    EXPECT_EQ(decode.block_m, 64);  // one warpgroup: a 128-row tile would compute 127 empty rows
}

// Split-K: decode shapes whose tiles leave SMs idle take clusters of 2-8 CTAs per tile (BF16 or FP32 D, with or
// without C); the grid is exactly tiles x split and fits the resident clusters; grouped and large shapes never split.
TEST(Bf16GemmPlan, DecodeShapesSplitKOverWholeClusters) {
    const auto ceil = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
    for (bool mn_a : {false, true})
        for (bool mn_b : {false, true})
            for (auto [m, n, k] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1, 576, 7168},
                                   {1, 7168, 16384}, {128, 576, 7168}, {5, 1000, 4000}}) {
                Bf16GemmProblem p{m, n, k, mn_a, mn_b};
                p.dense = true;
                SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " mn " << mn_a << mn_b);
                const Bf16GemmConfig c = choose_bf16_gemm_config(p);
                EXPECT_GT(c.split_k, 1);
                EXPECT_LE(c.split_k, 8);
                EXPECT_EQ(c.num_sms, ceil(m, c.block_m) * ceil(n, c.block_n) * c.split_k);
                EXPECT_LE(c.num_sms, c.split_k == 2 ? 132 : 128);
                EXPECT_LE(c.split_k, ceil(k, kBf16BlockK));
                if (mn_b) EXPECT_EQ(c.block_n % 64, 0);
                if (m <= 64) EXPECT_EQ(c.block_m, 64);
                EXPECT_EQ(c.smem_bytes, bf16_gemm_smem_bytes(c.block_m, c.block_n, c.num_stages, false, true, c.a_rows));
                EXPECT_EQ(c.a_rows, m <= 8 && !mn_a ? 8 : 0);  // decode: 8-row A stages
                EXPECT_NE(c.describe().find("split-K"), std::string::npos);
                // The driver's capacity, where it is below the estimate, bounds the grid.
                p.split_capacity[0] = p.split_capacity[1] = p.split_capacity[2] = 64;
                const Bf16GemmConfig capped = choose_bf16_gemm_config(p);
                if (capped.split_k > 1) EXPECT_LE(capped.num_sms, 64);
                p.split_capacity[0] = p.split_capacity[1] = p.split_capacity[2] = -1;
                EXPECT_EQ(choose_bf16_gemm_config(p).split_k, 1);
            }
    for (auto [out_f32, accumulate] : {std::pair{true, false}, {false, true}, {true, true}}) {
        Bf16GemmProblem p{1, 576, 7168, false, false, out_f32, accumulate};
        p.dense = true;
        const Bf16GemmConfig c = choose_bf16_gemm_config(p);
        EXPECT_GT(c.split_k, 1);
        EXPECT_EQ(c.smem_bytes, bf16_gemm_smem_bytes(c.block_m, c.block_n, c.num_stages, out_f32, true, c.a_rows));
        p.dense = false;
        EXPECT_EQ(choose_bf16_gemm_config(p).split_k, 1);
    }
    Bf16GemmProblem big{4096, 7168, 16384};
    big.dense = true;
    EXPECT_EQ(choose_bf16_gemm_config(big).split_k, 1);
    Bf16GemmProblem grouped{64, 2112, 7168};
    grouped.dense = true;
    grouped.num_groups = 4;
    EXPECT_EQ(choose_bf16_gemm_config(grouped).split_k, 1);
}

// Tiles that fill at least 95 % of one wave run over the whole K, as DeepGEMM's plans for these rows do: split-K
// would add the cluster reduction where no SM is idle (1x4096x7168 split 4: 36.6 us against DeepGEMM's 29.5).
TEST(Bf16GemmPlan, OneWaveOfTilesRunsWholeK) {
    for (auto [m, n, k, block_m, block_n] : {std::tuple<std::int64_t, std::int64_t, std::int64_t, int, int>{
                                                 1, 4096, 7168, 64, 32},
                                             {128, 4096, 7168, 64, 64}, {128, 2112, 7168, 64, 32},
                                             {128, 7168, 16384, 64, 112}, {1, 2112, 7168, 64, 16}}) {
        Bf16GemmProblem p{m, n, k};
        p.dense = true;
        const Bf16GemmConfig c = choose_bf16_gemm_config(p);
        SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << ": " << c.describe());
        EXPECT_EQ(c.split_k, 1);
        EXPECT_EQ(c.block_m, block_m);
        EXPECT_EQ(c.block_n, block_n);
        const std::int64_t tiles = (m + block_m - 1) / block_m * ((n + block_n - 1) / block_n);
        EXPECT_LE(tiles, p.num_sms);
        EXPECT_GE(tiles * 20, std::int64_t{p.num_sms} * 19);
    }
    // Not a decode row: one full-K wave of 128x64 tiles into FP32 lost to the split plan there (45.2 us against
    // DeepGEMM's 38.0 on an H100).
    Bf16GemmProblem tall{4096, 256, 7168, false, false, true};
    tall.dense = true;
    EXPECT_GT(choose_bf16_gemm_config(tall).split_k, 1) << choose_bf16_gemm_config(tall).describe();
}

// A dense problem of at most 64 rows never takes a 128-row tile, split or not (byte-floor ties used to pick the larger
// tile: 1x24576x1536 ran 128x208, 1.24x DeepGEMM's time on the H200).
TEST(Bf16GemmPlan, DenseDecodeTakesSixtyFourRowTiles) {
    for (std::int64_t m : {1, 7, 64})
        for (bool out_f32 : {false, true})
            for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{24576, 1536}, {129280, 7168}, {32768, 512},
                                {2112, 7168}, {8, 8}}) {
                Bf16GemmProblem p{m, n, k, false, false, out_f32};
                p.dense = true;
                EXPECT_EQ(choose_bf16_gemm_config(p).block_m, 64) << m << "x" << n << "x" << k << " f32 " << out_f32;
            }
}

// Every plan takes as many stages as shared memory holds, up to 15: narrow decode tiles keep more of B in flight.
TEST(Bf16GemmPlan, StagesFillSharedMemoryUpToFifteen) {
    for (std::int64_t m : {1, 128, 4096})
        for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{7168, 2048}, {576, 7168}, {256, 7168}, {7168, 16384},
                            {24576, 1536}}) {
            Bf16GemmProblem p{m, n, k};
            p.dense = true;
            const Bf16GemmConfig c = choose_bf16_gemm_config(p);
            SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << ": " << c.describe());
            EXPECT_LE(c.num_stages, 15);
            EXPECT_LE(c.smem_bytes, p.max_smem_bytes);
            if (c.num_stages < 15)
                EXPECT_GT(bf16_gemm_smem_bytes(c.block_m, c.block_n, c.num_stages + 1, false, c.split_k > 1,
                                               c.a_rows),
                          p.max_smem_bytes);
        }
    Bf16GemmProblem decode{1, 7168, 2048};
    decode.dense = true;
    EXPECT_GT(choose_bf16_gemm_config(decode).num_stages, 8);  // 64x64: 13 stages
}

// Dense problems of at most 8 rows with K-major A load 8-row A stages (1 KB instead of 8), and the freed shared memory
// holds more stages; 9 rows, an MN-major A, or the grouped kinds keep whole-tile A stages.
TEST(Bf16GemmPlan, DecodeLoadsEightRowAStages) {
    for (std::int64_t m : {1, 8, 9})
        for (bool mn_a : {false, true}) {
            Bf16GemmProblem p{m, 7168, 2048, mn_a, false};
            p.dense = true;
            const Bf16GemmConfig c = choose_bf16_gemm_config(p);
            SCOPED_TRACE(c.describe());
            const bool narrow = m <= 8 && !mn_a;
            EXPECT_EQ(c.a_rows, narrow ? 8 : 0);
            EXPECT_EQ(c.a_box_rows(), narrow ? 8 : c.block_m);
            EXPECT_EQ(c.smem_bytes, bf16_gemm_smem_bytes(c.block_m, c.block_n, c.num_stages, false, c.split_k > 1,
                                                         c.a_rows));
            EXPECT_LE(c.smem_bytes, p.max_smem_bytes);
            EXPECT_EQ(c.describe().find("A 8 rows") != std::string::npos, narrow);
        }
    Bf16GemmProblem wide{1, 7168, 16384};  // the split-2 plan of 64x112 tiles: 13 stages instead of 8
    wide.dense = true;
    Bf16GemmProblem full = wide;
    full.mn_major_a = true;
    EXPECT_GT(choose_bf16_gemm_config(wide).num_stages, choose_bf16_gemm_config(full).num_stages);
    Bf16GemmProblem masked{1, 4096, 7168};
    masked.num_groups = 4;  // grouped: never
    EXPECT_EQ(choose_bf16_gemm_config(masked).a_rows, 0);
    EXPECT_EQ(bf16_gemm_smem_bytes(64, 64, 16, false, false, 8), 1024 + 8192 + 16 * (8 + 64) * 128);
}

TEST(Bf16GemmPlan, SharedMemoryFormula) {
    // barriers 1 KB + the D tile rounded up to 1 KB + stages of (BM + BN) rows of 128 bytes
    EXPECT_EQ(bf16_gemm_smem_bytes(128, 256, 4, false), 1024 + 65536 + 4 * 384 * 128);
    EXPECT_EQ(bf16_gemm_smem_bytes(64, 136, 6, true), 1024 + 34816 + 6 * 200 * 128);
    EXPECT_EQ(bf16_gemm_smem_bytes(64, 144, 7, false, true), 1024 + 36864 + 7 * 208 * 128);  // split-K: FP32 partial
}

TEST(Bf16GemmPlan, BlockNMultipleAndErrors) {
    Bf16GemmProblem p{4096, 7168, 4096};
    p.block_n_multiple = 48;
    EXPECT_EQ(choose_bf16_gemm_config(p).block_n % std::lcm(16, 48), 0);
    p.block_n_multiple = 512;
    try {
        choose_bf16_gemm_config(p);
        FAIL() << "no tile has a block N multiple of 512";
    } catch (const tessera::InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("set_block_size_multiple_of"), std::string::npos) << e.what();
    }
    EXPECT_THROW(choose_bf16_gemm_config({0, 128, 128}), tessera::InvalidArgument);
}

// einsum 'bmk,bnk->mn': tiles divide M and N, every (batch, k-block) step belongs to exactly one split, the grid is
// at most the SMs and at least one CTA per (tile, split) pair up to that, and shared memory fits.
TEST(Bf16GemmPlan, BatchSumCoversTheBatchOnce) {
    for (int sms : {132, 78, 1})
        for (auto [m, n, k] : {std::tuple<int, int, int>{128, 384, 128}, {256, 256, 256}, {384, 128, 384},
                               {64, 64, 64}, {192, 320, 64}})
            for (int batch : {1, 3, 129, 4096, 8192}) {
                Bf16GemmProblem p{m, n, k, false, false, true, true};
                p.num_groups = batch;
                p.num_sms = sms;
                SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " batch " << batch << " sms " << sms);
                const Bf16GemmConfig c = choose_bf16_batch_sum_config(p);
                EXPECT_EQ(m % c.block_m, 0);
                EXPECT_EQ(n % c.block_n, 0);
                const std::int64_t k_blocks = std::int64_t{batch} * (k / kBf16BlockK);
                const std::int64_t splits = (k_blocks + c.k_blocks_per_split - 1) / c.k_blocks_per_split;
                EXPECT_GE(c.k_blocks_per_split, 1);
                EXPECT_GT(splits * c.k_blocks_per_split, k_blocks - c.k_blocks_per_split);  // no empty split
                const std::int64_t tiles = std::int64_t{m / c.block_m} * (n / c.block_n) * splits;
                EXPECT_EQ(c.num_sms, std::min<std::int64_t>(sms, tiles));
                EXPECT_GE(c.num_stages, 2);
                EXPECT_EQ(c.smem_bytes, bf16_gemm_smem_bytes(c.block_m, c.block_n, c.num_stages, true));
                EXPECT_LE(c.smem_bytes, 232448);
            }
    Bf16GemmProblem odd{100, 128, 64, false, false, true, true};
    EXPECT_THROW(choose_bf16_batch_sum_config(odd), tessera::Error);
}

// Every kind plans at most 64 rows (per group) on 64-row tiles, never wider than N needs: einsum's 128-column heads of
// 4-32 rows took 128x144-128x208 tiles with 4-5 stages (1.26-1.54x DeepGEMM's time, whose plan for them is one
// narrow tile of each head with all of K in flight); masked experts of 20 expected rows took 128x208 (DeepGEMM 64x256).
TEST(Bf16GemmPlan, FewRowsPerGroupTakeSixtyFourRowTilesNoWiderThanN) {
    struct Row {
        std::int64_t m, n, k;
        bool mn_b;
        int groups, block_m, block_n, min_stages;
    };
    for (const Row r : {Row{4, 128, 512, false, 128, 64, 128, 8}, Row{32, 128, 512, false, 128, 64, 128, 8},
                        Row{4, 512, 128, true, 128, 64, 256, 3}, Row{20, 6144, 7168, false, 32, 64, 256, 4},
                        Row{20, 4096, 2048, false, 6, 64, 192, 4}}) {
        Bf16GemmProblem p{r.m, r.n, r.k, false, r.mn_b};
        p.num_groups = r.groups;
        const Bf16GemmConfig c = choose_bf16_gemm_config(p);
        SCOPED_TRACE(testing::Message() << r.m << "x" << r.n << "x" << r.k << " groups " << r.groups << ": "
                                        << c.describe());
        EXPECT_EQ(c.block_m, r.block_m);
        EXPECT_EQ(c.block_n, r.block_n);
        EXPECT_GE(c.num_stages, r.min_stages);
    }
    // Memory-bound ties go to the tile whose SMs stream the fewest operand rows (the masked rows: DeepGEMM's tile
    // widths; the larger tile, which won these ties before, was 64x208, 64x240 and 64x256).
    for (const Row r : {Row{20, 6144, 7168, false, 6, 64, 144, 4}, Row{20, 7168, 3072, false, 6, 64, 176, 4},
                        Row{1, 24576, 1536, false, 1, 64, 192, 4}}) {
        Bf16GemmProblem p{r.m, r.n, r.k, false, r.mn_b};
        p.num_groups = r.groups;
        p.dense = r.groups == 1;
        const Bf16GemmConfig c = choose_bf16_gemm_config(p);
        EXPECT_EQ(c.block_n, r.block_n) << r.m << "x" << r.n << "x" << r.k << ": " << c.describe();
    }
    for (std::int64_t m : {1, 64}) {  // a layout that fixes 128-row tiles keeps them, however few the rows
        Bf16GemmProblem contiguous{m, 4096, 7168};
        contiguous.block_m = 128;
        EXPECT_EQ(choose_bf16_gemm_config(contiguous).block_m, 128) << m;
    }
    for (std::int64_t n : {8, 72, 128, 200}) {  // a tile never wider than N rounded up to its column step
        Bf16GemmProblem p{4096, n, 4096};
        EXPECT_LE(choose_bf16_gemm_config(p).block_n, (n + 15) / 16 * 16) << n;
        p.mn_major_b = true;
        EXPECT_LE(choose_bf16_gemm_config(p).block_n, (n + 63) / 64 * 64) << n;
    }
}
