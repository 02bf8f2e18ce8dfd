// FP8 GEMM heuristics: every choice is legal (tile, registers, shared memory, cluster) over a grid of shapes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <string>
#include <tuple>

#include "heuristics/fp8_gemm_plan.hpp"
#include "ops/fp8_gemm_common.hpp"
#include "tessera/error.hpp"

using namespace tessera::heuristics;

TEST(Fp8GemmHeuristics, ChoicesAreLegalForManyShapes) {
    for (Fp8GemmMode mode : {Fp8GemmMode::k1D2D, Fp8GemmMode::k1D1D})
        for (int sms : {132, 131, 64, 1})
            for (std::int64_t m : {1, 7, 64, 65, 128, 129, 1000, 4096, 4097})
                for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{2112, 7168}, {576, 7168}, {24576, 1536},
                                    {32768, 512}, {7168, 16384}, {136, 16}, {8, 128}}) {
                    SCOPED_TRACE(testing::Message() << "mode " << int(mode) << " sms " << sms << " " << m << "x" << n
                                                    << "x" << k);
                    const Fp8GemmConfig c = choose_fp8_gemm_config({m, n, k, mode, sms, 232448});
                    EXPECT_TRUE(fp8_gemm_block_n_legal(mode, c.block_n));
                    EXPECT_TRUE(fp8_gemm_fits_registers(mode, c.block_m, c.block_n, c.num_math_warpgroups));
                    EXPECT_EQ(c.block_m % (64 * c.num_math_warpgroups), 0);
                    EXPECT_LE(c.smem_bytes, 232448);
                    EXPECT_EQ(c.smem_bytes, fp8_gemm_smem_bytes(mode, c.block_m, c.block_n, c.num_stages));
                    EXPECT_GE(c.num_stages, 3);
                    EXPECT_EQ(c.num_sms, sms);  // set_num_sms is honored, odd values too
                    if (c.cluster_m * c.cluster_n > 1) {
                        EXPECT_EQ(sms % 2, 0) << "clusters of 2 need an even persistent grid";
                        EXPECT_EQ(c.group_size % 2, 0);
                    }
                }
}

TEST(Fp8GemmHeuristics, DecodeUsesSmallTilesAndPrefillLargeOnes) {
    const Fp8GemmConfig decode = choose_fp8_gemm_config({1, 7168, 16384, Fp8GemmMode::k1D2D, 132, 232448});
    EXPECT_EQ(decode.block_m, 64);
    EXPECT_LE(decode.block_n, 128);
    EXPECT_EQ(decode.cluster_m, 1);
    const Fp8GemmConfig prefill = choose_fp8_gemm_config({4096, 7168, 16384, Fp8GemmMode::k1D2D, 132, 232448});
    EXPECT_GE(prefill.block_m * prefill.block_n, 128 * 128);
}

// Pairs multicast A for 256-row tiles; no B pairs (across M): 128-row tiles measured faster alone.
TEST(Fp8GemmHeuristics, PairsMulticastAForTallTilesOnly) {
    const auto pick = [](std::int64_t m, std::int64_t n, std::int64_t k, Fp8GemmMode mode) {
        Fp8GemmProblem p{m, n, k, mode, 132, 232448};
        p.allow_a_multicast = true;
        return choose_fp8_gemm_config(p);
    };
    const Fp8GemmConfig tall = pick(4096, 7168, 16384, Fp8GemmMode::k1D2D);
    EXPECT_EQ(tall.block_m, 256);
    EXPECT_EQ(tall.cluster_n, 2);
    const Fp8GemmConfig wide = pick(4096, 2112, 7168, Fp8GemmMode::k1D2D);
    EXPECT_EQ(wide.block_m, 128);
    EXPECT_EQ(wide.cluster_m * wide.cluster_n, 1);
    const Fp8GemmConfig wgrad = pick(7168, 4096, 16384, Fp8GemmMode::k1D1D);
    EXPECT_EQ(wgrad.cluster_m * wgrad.cluster_n, 1);
}

TEST(Fp8GemmHeuristics, SharedMemoryFormulaMatchesTheKernelDoc) {
    // Worked examples from docs/fp8_gemm_kernel.md.
    EXPECT_EQ(fp8_gemm_smem_bytes(Fp8GemmMode::k1D2D, 128, 128, 5), 199680);
    EXPECT_EQ(fp8_gemm_smem_bytes(Fp8GemmMode::k1D1D, 128, 152, 4), 226304);
    EXPECT_FALSE(fp8_gemm_block_n_legal(Fp8GemmMode::k1D2D, 152));
    EXPECT_TRUE(fp8_gemm_block_n_legal(Fp8GemmMode::k1D1D, 152));
}

// D over the ring: a dense 1D2D plan whose CTAs have one tile each takes the D tile's bytes as one more stage; plans
// with several tiles per CTA keep D apart (their epilogue would hold up the next tile's loads) unless forced.
TEST(Fp8GemmHeuristics, DInRingOnlyWhereEachCtaHasOneTile) {
    Fp8GemmProblem p{4096, 576, 7168, Fp8GemmMode::k1D2D, 132, 232448};
    EXPECT_FALSE(choose_fp8_gemm_config(p).d_in_ring);  // not allowed (the host allows it for dense 1D2D only)
    EXPECT_EQ(choose_fp8_gemm_config(p).num_stages, 5);
    p.allow_d_in_ring = true;
    const Fp8GemmConfig c = choose_fp8_gemm_config(p);
    EXPECT_EQ(c.block_m, 128);
    EXPECT_EQ(c.block_n, 144);
    EXPECT_TRUE(c.d_in_ring);
    EXPECT_EQ(c.num_stages, 6);
    EXPECT_EQ(c.smem_bytes, fp8_gemm_smem_bytes(Fp8GemmMode::k1D2D, 128, 144, 6, 1, true));
    EXPECT_EQ(c.smem_bytes, 212992);  // align(6 x 536 + 8, 1024) + 6 x 128 x 272
    EXPECT_NE(c.describe().find("D in ring"), std::string::npos);
    // Whatever tile the plan takes, D goes over the ring exactly where its tiles fit one per CTA.
    for (const std::int64_t m : {1, 64, 128, 1000, 4096, 4224, 4225, 8192})
        for (const int sms : {132, 120, 64}) {
            p.m = m;
            p.num_sms = sms;
            const Fp8GemmConfig q = choose_fp8_gemm_config(p);
            const std::int64_t tiles = (m + q.block_m - 1) / q.block_m * ((576 + q.block_n - 1) / q.block_n);
            SCOPED_TRACE(testing::Message() << m << " rows, " << sms << " SMs: " << q.describe());
            if (tiles > q.num_sms || q.split_k > 1 || q.cluster_m * q.cluster_n > 1) EXPECT_FALSE(q.d_in_ring);
            EXPECT_EQ(q.smem_bytes, fp8_gemm_smem_bytes(Fp8GemmMode::k1D2D, q.block_m, q.block_n, q.num_stages,
                                                        q.split_k, q.d_in_ring));
        }
}

// A masked problem as the host plans it: `expected_m` rows per group (a hint), 132 SMs, the full shared memory.
static Fp8GemmProblem masked_problem(std::int64_t expected_m, std::int64_t n, std::int64_t k, int groups) {
    Fp8GemmProblem p{expected_m, n, k, Fp8GemmMode::k1D2D, 132, 232448};
    p.num_groups = groups;
    p.m_is_hint = true;
    return p;
}

// D in halves: where the problem allows it (masked at 1536 < K <= 2048), a 128x256 tile whose whole D tile leaves 3
// stages stages D one N half at a time and takes a fourth; nowhere else, and never past 4 stages.
TEST(Fp8GemmHeuristics, DHalvesBuyTheFourthStageOf128x256) {
    Fp8GemmProblem p = masked_problem(192, 4096, 2048, 32);
    p.forced_block_m = 128;
    p.forced_block_n = 256;
    EXPECT_FALSE(choose_fp8_gemm_config(p).d_halves);  // not allowed: not masked, or outside its K range
    EXPECT_EQ(choose_fp8_gemm_config(p).num_stages, 3);
    p.allow_d_halves = true;
    const Fp8GemmConfig c = choose_fp8_gemm_config(p);
    EXPECT_TRUE(c.d_halves);
    EXPECT_EQ(c.num_stages, 4);
    EXPECT_EQ(c.smem_bytes, fp8_gemm_smem_bytes(Fp8GemmMode::k1D2D, 128, 256, 4, 1, false, true));
    EXPECT_EQ(c.smem_bytes, 232448);  // align(4 x 536, 1024) + 128 x 256 x 2 / 2 + 4 x 128 x 384: the limit exactly
    EXPECT_EQ(fp8_gemm_smem_bytes(Fp8GemmMode::k1D2D, 128, 256, 3), 215040);
    EXPECT_NE(c.describe().find("D in halves"), std::string::npos);
    // Forced stages: 4 takes the halves, 3 the whole tile, 5 does not fit.
    p.forced_num_stages = 4;
    EXPECT_TRUE(choose_fp8_gemm_config(p).d_halves);
    p.forced_num_stages = 3;
    EXPECT_FALSE(choose_fp8_gemm_config(p).d_halves);
    p.forced_num_stages = 5;
    EXPECT_THROW(choose_fp8_gemm_config(p), tessera::InvalidArgument);
    p.forced_num_stages = 0;
    // Tiles whose ring has 4 stages or more with the whole D tile keep it.
    for (const auto& [bm, bn] : {std::pair{128, 192}, {128, 128}, {64, 256}}) {
        p.forced_block_m = bm;
        p.forced_block_n = bn;
        const Fp8GemmConfig q = choose_fp8_gemm_config(p);
        SCOPED_TRACE(q.describe());
        EXPECT_FALSE(q.d_halves);
    }
    // The planner's own picks: only a 128x256 plan takes halves, and then with 4 stages.
    p.forced_block_m = p.forced_block_n = 0;
    for (const std::int64_t m : {8, 64, 192, 1024})
        for (const std::int64_t n : {1024, 4096, 7168}) {
            p.m = m;
            p.n = n;
            const Fp8GemmConfig q = choose_fp8_gemm_config(p);
            SCOPED_TRACE(q.describe());
            EXPECT_EQ(q.d_halves, q.block_m == 128 && q.block_n == 256);
            if (q.d_halves) EXPECT_EQ(q.num_stages, 4);
        }
}

TEST(Fp8GemmHeuristics, GroupedProblemsRespectTheLayoutAndTheKernelLimits) {
    // Contiguous per-row ids: BLOCK_M is fixed by the segment alignment; clusters stay allowed.
    Fp8GemmProblem contiguous{32768, 4096, 7168, Fp8GemmMode::k1D2D, 132, 232448};
    contiguous.block_m = 128;
    EXPECT_EQ(choose_fp8_gemm_config(contiguous).block_m, 128);
    contiguous.block_m = 64;
    EXPECT_EQ(choose_fp8_gemm_config(contiguous).block_m, 64);
    // Kinds that walk groups, as the host plans them (ops::fp8_problem): no cluster, and the accumulators leave 48
    // registers on one-warpgroup tiles and 32 on two-warpgroup tiles (the kernel's kReservedRegs).
    for (Fp8GemmMode mode : {Fp8GemmMode::k1D2D, Fp8GemmMode::k1D1D})
        for (std::int64_t m : {1, 20, 192, 1024, 4096, 7168})
            for (int groups : {1, 6, 32}) {
                const tessera::ops::GemmKind kind =
                    mode == Fp8GemmMode::k1D1D ? tessera::ops::GemmKind::kKGrouped : tessera::ops::GemmKind::kMasked;
                const tessera::ops::Fp8PlanKey key{m, 4096, 2048, mode, kind, groups, 0, 132, 0};
                const Fp8GemmProblem p = tessera::ops::fp8_problem(key, 232448);
                EXPECT_EQ(p.consumer_reserved_regs(1), 48);
                EXPECT_EQ(p.consumer_reserved_regs(2), 32);
                const Fp8GemmConfig c = choose_fp8_gemm_config(p);
                SCOPED_TRACE(testing::Message() << "mode " << int(mode) << " m " << m << " groups " << groups << ": "
                                                << c.describe());
                if (!p.allow_cluster) EXPECT_EQ(c.cluster_m * c.cluster_n, 1);  // (k-grouped pairs are an opt-in)
                EXPECT_TRUE(fp8_gemm_fits_registers(mode, c.block_m, c.block_n, c.num_math_warpgroups, nullptr,
                                                    c.num_math_warpgroups == 2 ? 32 : 48));
            }
    // The 48-register reserve is what keeps a two-warpgroup 128x192 from running whole (one wgmma per k-step).
    EXPECT_FALSE(fp8_gemm_fits_registers(Fp8GemmMode::k1D2D, 128, 192, 2, nullptr, 48) &&
                 [] { int s = 0; fp8_gemm_fits_registers(Fp8GemmMode::k1D2D, 128, 192, 2, &s, 48); return s == 1; }());
}

TEST(Fp8GemmHeuristics, DecodeShapesSplitKIntoOneWaveOfClusters) {
    for (std::int64_t m : {1, 7, 64, 128})
        for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{2112, 7168}, {576, 7168}, {4096, 7168}, {7168, 16384}}) {
            if (m == 128 && n >= 4096) continue;  // two 64-row blocks fill the machine unsplit (next test)
            Fp8GemmProblem p{m, n, k, Fp8GemmMode::k1D2D, 132, 232448};
            p.allow_split_k = true;
            const Fp8GemmConfig c = choose_fp8_gemm_config(p);
            SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << ": " << c.describe());
            EXPECT_GT(c.split_k, 1);
            // One tile per cluster: the grid is exactly tiles * split and fits the estimated cluster capacity.
            const std::int64_t tiles = (m + c.block_m - 1) / c.block_m * ((n + c.block_n - 1) / c.block_n);
            EXPECT_EQ(c.num_sms, tiles * c.split_k);
            EXPECT_LE(c.num_sms, fp8_gemm_cluster_capacity(132, c.split_k));
            EXPECT_LE(c.split_k, (k + 127) / 128);
            EXPECT_EQ(c.cluster_m * c.cluster_n, 1);
            EXPECT_EQ(c.smem_bytes, fp8_gemm_smem_bytes(Fp8GemmMode::k1D2D, c.block_m, c.block_n, c.num_stages, 8));
        }
    // Short K streams fast enough unsplit (the reduction costs more than it saves: 1x7168x2048 measured).
    Fp8GemmProblem short_k{1, 7168, 2048, Fp8GemmMode::k1D2D, 132, 232448};
    short_k.allow_split_k = true;
    EXPECT_EQ(choose_fp8_gemm_config(short_k).split_k, 1);
    // Large M keeps whole tiles; without permission nothing splits.
    Fp8GemmProblem big{4096, 7168, 16384, Fp8GemmMode::k1D2D, 132, 232448};
    big.allow_split_k = true;
    EXPECT_EQ(choose_fp8_gemm_config(big).split_k, 1);
    Fp8GemmProblem grouped{1, 2112, 7168, Fp8GemmMode::k1D2D, 132, 232448};
    EXPECT_EQ(choose_fp8_gemm_config(grouped).split_k, 1);
}

// 64 < M <= 128 with enough columns: two 64-row blocks of the narrowest tile that fits one wave, no split-K
// (measured faster than the split 128-row plans), preferring widths that divide 128 while they keep 80 % of the SMs
// (N = 7168: 64x128 on 112 SMs, not 64x112 on 128); M <= 64 keeps splitting (a lone m-block's narrow tiles are slow).
TEST(Fp8GemmHeuristics, TwoRowBlocksFillingTheMachineDoNotSplit) {
    for (std::int64_t m : {65, 100, 128})
        for (auto [n, k, bn] : {std::tuple<std::int64_t, std::int64_t, int>{4096, 7168, 64}, {7168, 16384, 128},
                                {7168, 2048, 128}, {6144, 7168, 96}, {8192, 2048, 128}}) {
            Fp8GemmProblem p{m, n, k, Fp8GemmMode::k1D2D, 132, 232448};
            p.allow_split_k = true;
            const Fp8GemmConfig c = choose_fp8_gemm_config(p);
            SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << ": " << c.describe());
            EXPECT_EQ(c.block_m, 64);
            EXPECT_EQ(c.block_n, bn);
            EXPECT_EQ(c.split_k, 1);
            EXPECT_EQ(c.num_sms, 132);
            EXPECT_LE(2 * ((n + bn - 1) / bn), 132);
        }
    Fp8GemmProblem lone{64, 7168, 16384, Fp8GemmMode::k1D2D, 132, 232448};
    lone.allow_split_k = true;
    EXPECT_GT(choose_fp8_gemm_config(lone).split_k, 1);
}

// Decode picks that forced-config sweeps on the H200 measured faster, three runs each.
TEST(Fp8GemmHeuristics, DecodePicksFollowTheH200Sweeps) {
    const auto pick = [](std::int64_t m, std::int64_t n, std::int64_t k, int groups = 1) {
        Fp8GemmProblem p{m, n, k, Fp8GemmMode::k1D2D, 132, 232448};
        p.allow_split_k = groups == 1;
        p.num_groups = groups;
        p.cluster_ctas[3] = 120;  // the H200's driver: 15 resident clusters of 8
        return choose_fp8_gemm_config(p);
    };
    // A lone row block prefers a tile whose columns never straddle two B-scale blocks (64x64 8.2 us, 64x56 8.5).
    const Fp8GemmConfig uniform = pick(1, 7168, 2048);
    EXPECT_EQ(uniform.block_n, 64) << uniform.describe();
    EXPECT_EQ(uniform.split_k, 1) << uniform.describe();
    // ... and takes a wgmma split in two when that makes one wave of two (64x256 9.1 us, 64x128 9.7).
    const Fp8GemmConfig wide = pick(1, 32768, 512);
    EXPECT_EQ(wide.block_n, 256) << wide.describe();
    int n_splits = 0;
    EXPECT_TRUE(fp8_gemm_fits_registers(Fp8GemmMode::k1D2D, 64, 256, 1, &n_splits, 32));
    EXPECT_EQ(n_splits, 2);
    // ... also inside a split-K plan (1x7168x16384: 64x256 split 4 40.1 us, 64x112 split 2 42.8).
    const Fp8GemmConfig long_k = pick(1, 7168, 16384);
    EXPECT_EQ(long_k.block_n, 256) << long_k.describe();
    EXPECT_EQ(long_k.split_k, 4) << long_k.describe();
    // Grouped problems keep whole wgmmas.
    const Fp8GemmConfig masked = pick(20, 6144, 7168, 32);
    EXPECT_TRUE(fp8_gemm_fits_registers(Fp8GemmMode::k1D2D, masked.block_m, masked.block_n, 1, &n_splits, 32) &&
                n_splits == 1)
        << masked.describe();
    // ... and so does a one-group grouped problem (no split-K permission, larger register reserve).
    Fp8GemmProblem one_group{20, 32768, 2048, Fp8GemmMode::k1D2D, 132, 232448};
    one_group.reserved_regs = 48;
    const Fp8GemmConfig grouped_pick = choose_fp8_gemm_config(one_group);
    EXPECT_TRUE(fp8_gemm_fits_registers(Fp8GemmMode::k1D2D, grouped_pick.block_m, grouped_pick.block_n, 1, &n_splits,
                                        48) &&
                n_splits == 1)
        << grouped_pick.describe();
    // Split-K: the reduction grows with the partial tiles, so 128 rows split in 4 beat 8 (128x72 s4 11.2 us, 128x144 s8
    // 12.9), while a lone 64-row block still splits in 8 (1x2112x7168 64x144 s8 9.8 us, 64x80 s4 10.0).
    const Fp8GemmConfig two_blocks = pick(128, 2112, 7168);
    EXPECT_EQ(two_blocks.block_m, 128) << two_blocks.describe();
    EXPECT_EQ(two_blocks.split_k, 4) << two_blocks.describe();
    EXPECT_EQ(pick(1, 2112, 7168).split_k, 8);
}

TEST(Fp8GemmHeuristics, ForcedConfigsAreCheckedAndHonored) {
    Fp8GemmProblem p{4096, 4096, 7168, Fp8GemmMode::k1D2D, 132, 232448};
    p.allow_a_multicast = true;
    p.forced_block_m = 256;
    p.forced_block_n = 128;
    p.forced_cluster_n = 2;
    const Fp8GemmConfig c = choose_fp8_gemm_config(p);
    EXPECT_EQ(c.block_m, 256);
    EXPECT_EQ(c.block_n, 128);
    EXPECT_EQ(c.cluster_n, 2);
    EXPECT_EQ(c.num_sms, 132);
    EXPECT_EQ(c.num_stages, 3);  // what shared memory holds
    p.forced_num_stages = 2;     // a shallower ring is honored, a deeper one than fits refused
    EXPECT_EQ(choose_fp8_gemm_config(p).num_stages, 2);
    p.forced_num_stages = 4;
    EXPECT_THROW(choose_fp8_gemm_config(p), tessera::InvalidArgument);
    p.forced_num_stages = 0;
    p.forced_block_n = 200;  // not a legal 1D2D width above 128
    EXPECT_THROW(choose_fp8_gemm_config(p), tessera::InvalidArgument);
    p.forced_block_n = 128;
    p.allow_a_multicast = false;  // grouped kinds cannot multicast A
    EXPECT_THROW(choose_fp8_gemm_config(p), tessera::InvalidArgument);
    // Per-row contiguous plans fix BLOCK_M to the layout's alignment: a forced tile keeps it or is refused.
    p.block_m = 128;
    p.forced_block_m = 128;
    p.forced_cluster_n = 1;
    EXPECT_EQ(choose_fp8_gemm_config(p).block_m, 128);
    p.forced_block_m = 256;
    EXPECT_THROW(choose_fp8_gemm_config(p), tessera::InvalidArgument);
    // Masked plans take no cluster: a forced tile is honored, a forced pair is refused.
    Fp8GemmProblem masked{192, 6144, 7168, Fp8GemmMode::k1D2D, 132, 232448};
    masked.num_groups = 32;
    masked.allow_cluster = false;
    masked.reserved_regs = 48;
    masked.forced_block_m = 128;
    masked.forced_block_n = 128;
    EXPECT_EQ(choose_fp8_gemm_config(masked).block_n, 128);
    EXPECT_EQ(choose_fp8_gemm_config(masked).cluster_m * choose_fp8_gemm_config(masked).cluster_n, 1);
    masked.forced_cluster_n = 2;
    EXPECT_THROW(choose_fp8_gemm_config(masked), tessera::InvalidArgument);
}

// Short A boxes: only dense problems of at most small_m_box_rows (16 by default, 32 when
// asked) rows on 64-row tiles, in 16- or 32-row boxes; never for grouped problems or taller tiles.
TEST(Fp8GemmHeuristics, ShortABoxesOnlyForSmallDenseM) {
    const auto pick = [](std::int64_t m, int rows, int groups = 1) {
        Fp8GemmProblem p{m, 7168, 2048, Fp8GemmMode::k1D2D, 132, 232448};
        p.allow_split_k = groups == 1;
        p.num_groups = groups;
        p.small_m_box_rows = rows;
        return choose_fp8_gemm_config(p);
    };
    EXPECT_EQ(pick(1, 0).load_rows_a, 0);
    for (auto [m, rows] : {std::pair<std::int64_t, int>{1, 16}, {16, 16}, {17, 32}, {32, 32}, {33, 0}, {128, 0}}) {
        const Fp8GemmConfig c = pick(m, 32);
        SCOPED_TRACE(testing::Message() << "m=" << m << ": " << c.describe());
        EXPECT_EQ(c.load_rows_a, c.block_m == 64 ? rows : 0);
        if (rows > 0) EXPECT_NE(c.describe().find("A box"), std::string::npos);
    }
    // The default limit, 16: M = 17..32 keep full boxes.
    EXPECT_EQ(pick(16, 16).load_rows_a, 16);
    EXPECT_EQ(pick(17, 16).load_rows_a, 0);
    EXPECT_EQ(pick(8, 32, 4).load_rows_a, 0);  // grouped: rows per group are not known on the host
}

// The library's plans give dense problems of at most 16 rows the short boxes; grouped kinds never.
TEST(Fp8GemmHeuristics, ShortABoxesUpTo16Rows) {
    namespace ops = tessera::ops;
    const ops::Fp8PlanKey dense{1, 7168, 2048, Fp8GemmMode::k1D2D, ops::GemmKind::kDense, 1, 0, 132, 0};
    EXPECT_EQ(ops::fp8_problem(dense, 232448).small_m_box_rows, 16);
    EXPECT_EQ(choose_fp8_gemm_config(ops::fp8_problem(dense, 232448)).load_rows_a, 16);
    const ops::Fp8PlanKey masked{1, 7168, 2048, Fp8GemmMode::k1D2D, ops::GemmKind::kMasked, 4, 0, 132, 0};
    EXPECT_EQ(ops::fp8_problem(masked, 232448).small_m_box_rows, 0);
}

// 1D1D tiles pay their FP32 reduce-add epilogue per tile: at short K a three-stage 128x160 tile loses to 128x152
// despite fewer waves (wgrad 24576x4096x1536: 418.2 against 476.6 us on the H200), while a one-wave 128x160 plan
// stays (576x4096x7168: 43.8 against 71.2 us for 128x152's two waves).
TEST(Fp8GemmHeuristics, WgradTilesPayTheirEpilogue) {
    const auto pick = [](std::int64_t m, std::int64_t n, std::int64_t k) {
        return choose_fp8_gemm_config({m, n, k, Fp8GemmMode::k1D1D, 132, 232448});
    };
    EXPECT_EQ(pick(24576, 4096, 1536).block_n, 152);
    EXPECT_EQ(pick(7168, 4096, 2048).block_n, 152);
    EXPECT_EQ(pick(576, 4096, 7168).block_n, 160);
    EXPECT_EQ(pick(4096, 2048, 512).block_n, 128);  // 28.8 us against 29.7 for 128x136, same waves
}

// Masked plans: expected_m is a hint (each group's rows vary around it), so tiles are counted over 0.75, 1 and 1.25 x
// the hint. At g32 e192 the heavier groups overflow three 64-row blocks but not two 128-row ones: H200, same kernels,
// 128x192 ran 611.5 / 137.2 us against 641.2 / 145.6 for 64x192. Two-warpgroup masked tiles reserve 32 registers like
// dense, so 128x192 keeps one wgmma per k-step; one-warpgroup tiles keep 48.
TEST(Fp8GemmHeuristics, MaskedRowsAreAHintAndItsTwoWarpgroupTilesRunWhole) {
    Fp8GemmProblem p{192, 6144, 7168, Fp8GemmMode::k1D2D, 132, 232448};
    p.num_groups = 32;
    p.allow_cluster = false;
    p.reserved_regs = 48;
    p.reserved_regs_two_wg = 32;
    EXPECT_EQ(p.consumer_reserved_regs(1), 48);
    EXPECT_EQ(p.consumer_reserved_regs(2), 32);
    EXPECT_EQ(choose_fp8_gemm_config(p).block_m, 64) << "a point estimate of 192 rows fits three 64-row blocks";
    p.m_is_hint = true;
    const Fp8GemmConfig c = choose_fp8_gemm_config(p);
    EXPECT_EQ(c.block_m, 128) << c.describe();
    EXPECT_EQ(c.block_n, 192) << c.describe();
    int splits = 0;
    EXPECT_TRUE(fp8_gemm_fits_registers(p.mode, 128, 192, 2, &splits, p.consumer_reserved_regs(2)));
    EXPECT_EQ(splits, 1);
    // Decode-sized groups stay on 64-row tiles whatever the spread.
    p.m = 20;
    EXPECT_EQ(choose_fp8_gemm_config(p).block_m, 64);
    // Without a two-warpgroup value, both tile heights use reserved_regs.
    Fp8GemmProblem q{192, 6144, 7168, Fp8GemmMode::k1D2D, 132, 232448};
    q.reserved_regs = 48;
    EXPECT_EQ(q.consumer_reserved_regs(2), 48);
}

// 128x256 in two N halves: dense plans as the host makes them take it at M = 4096 where K >= 2048 and N fills 256-wide
// tiles (7168x16384, 4096x7168, 7168x2048 ran 2.5-4.2 % faster than 256x128 pairs), not at short K or narrow N, and
// never for decode; contiguous and masked plans take it when allowed.
TEST(Fp8GemmHeuristics, WideSplitTilesFollowTheH200Sweeps) {
    const auto dense = [](std::int64_t m, std::int64_t n, std::int64_t k) {
        Fp8GemmProblem p{m, n, k, Fp8GemmMode::k1D2D, 132, 232448};
        p.allow_split_k = true;
        p.allow_a_multicast = true;
        return choose_fp8_gemm_config(p);
    };
    for (const auto [n, k] : {std::pair{7168, 16384}, {4096, 7168}, {7168, 2048}}) {
        const Fp8GemmConfig c = dense(4096, n, k);
        EXPECT_EQ(c.block_m, 128) << c.describe();
        EXPECT_EQ(c.block_n, 256) << c.describe();
        EXPECT_EQ(c.cluster_m * c.cluster_n, 1) << c.describe();
        int splits = 0;
        EXPECT_TRUE(fp8_gemm_fits_registers(Fp8GemmMode::k1D2D, 128, 256, 2, &splits, 32));
        EXPECT_EQ(splits, 2);
    }
    for (const auto [m, n, k] : {std::tuple{4096, 24576, 1536}, {4096, 32768, 512}, {4096, 2112, 7168},
                                 {4096, 576, 7168}, {128, 7168, 16384}, {1, 7168, 16384}}) {
        const Fp8GemmConfig c = dense(m, n, k);
        EXPECT_FALSE(c.block_m == 128 && c.block_n == 256) << m << "x" << n << "x" << k << ": " << c.describe();
    }
    Fp8GemmProblem contiguous{8192, 6144, 7168, Fp8GemmMode::k1D2D, 132, 232448};
    contiguous.num_groups = 4;
    contiguous.block_m = 128;
    contiguous.allow_cluster = true;
    EXPECT_EQ(choose_fp8_gemm_config(contiguous).block_n, 192) << "without allow_wide_split, tiles run whole";
    contiguous.allow_wide_split = true;
    EXPECT_EQ(choose_fp8_gemm_config(contiguous).block_n, 256);
    Fp8GemmProblem masked{192, 4096, 2048, Fp8GemmMode::k1D2D, 132, 232448};
    masked.num_groups = 32;
    masked.allow_cluster = false;
    masked.m_is_hint = true;
    masked.reserved_regs = 48;
    masked.reserved_regs_two_wg = 32;
    masked.allow_wide_split = true;
    const Fp8GemmConfig c = choose_fp8_gemm_config(masked);
    EXPECT_EQ(c.block_m, 128) << c.describe();
    EXPECT_EQ(c.block_n, 256) << c.describe();
    masked.m = 20;  // decode-sized groups stay on 64-row tiles
    EXPECT_EQ(choose_fp8_gemm_config(masked).block_m, 64);
}

// set_block_size_multiple_of(n): every plan's block N is a multiple of lcm(16, n), on the split-K decode path, the
// 64 < M <= 128 path and the prefill search; a multiple no legal tile meets fails naming the setting.
TEST(Fp8GemmHeuristics, BlockNMultipleConstrainsEveryPath) {
    for (int multiple : {1, 8, 32, 48, 64, 128}) {
        const int step = multiple > 1 ? std::lcm(16, multiple) : 8;
        for (std::int64_t m : {1, 100, 4096})
            for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{2112, 7168}, {576, 7168}, {7168, 2048}}) {
                Fp8GemmProblem p{m, n, k, Fp8GemmMode::k1D2D, 132, 232448};
                p.allow_split_k = true;
                p.block_n_multiple = multiple;
                const Fp8GemmConfig c = choose_fp8_gemm_config(p);
                EXPECT_EQ(c.block_n % step, 0) << "multiple " << multiple << " " << m << "x" << n << "x" << k
                                               << ": " << c.describe();
            }
    }
    Fp8GemmProblem p{4096, 2112, 7168, Fp8GemmMode::k1D2D, 132, 232448};
    p.block_n_multiple = 512;
    try {
        choose_fp8_gemm_config(p);
        FAIL() << "a block N multiple of 512 has no legal tile";
    } catch (const tessera::InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("lcm(16, 512) by set_block_size_multiple_of"), std::string::npos)
            << e.what();
    }
}
