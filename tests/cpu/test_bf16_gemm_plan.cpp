// BF16 GEMM planning: every choice is legal (tile, shared memory, stages) over a grid of shapes, the kernel's shared
// memory formula is the planner's, and set_block_size_multiple_of constrains block N.
#include <gtest/gtest.h>

#include <numeric>
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

TEST(Bf16GemmPlan, SharedMemoryFormula) {
    // barriers 1 KB + the D tile rounded up to 1 KB + stages of (BM + BN) rows of 128 bytes
    EXPECT_EQ(bf16_gemm_smem_bytes(128, 256, 4, false), 1024 + 65536 + 4 * 384 * 128);
    EXPECT_EQ(bf16_gemm_smem_bytes(64, 136, 6, true), 1024 + 34816 + 6 * 200 * 128);
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
