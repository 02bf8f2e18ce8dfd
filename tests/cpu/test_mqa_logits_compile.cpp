// The non-paged MQA logits family without a GPU: its planner's choices, and every kernel of its catalog (DeepGEMM's
// test shapes as the op plans them, plus the clean kernel) compiled for sm_90a through NVRTC and NVCC with no spill,
// no stack frame and no wgmma serialization.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "catalog/family_specs.hpp"
#include "heuristics/mqa_logits_plan.hpp"
#include "jit/jit.hpp"
#include "ops/fp8_gemm_specs.hpp"
#include "ops/mqa_logits_specs.hpp"
#include "tessera/error.hpp"
#include "tessera/mqa_logits.hpp"
#include "compile_check.hpp"
#include "test_helpers.hpp"

using namespace tessera;

namespace {

heuristics::MqaLogitsConfig plan(std::int64_t s, std::int64_t s_kv, int h, int d, int num_sms = 132) {
    return heuristics::choose_mqa_logits_config({s, s_kv, h, d, false, num_sms, ops::kSm90MaxSmemBytes});
}

}  // namespace

TEST(MqaLogitsPlan, StagesFillSharedMemoryUpToTheCap) {
    for (int h : {32, 64}) {
        for (int d : {32, 64, 128}) {
            const heuristics::MqaLogitsConfig c = plan(2048, 8192, h, d);
            SCOPED_TRACE(c.describe());
            EXPECT_LE(c.smem_bytes, ops::kSm90MaxSmemBytes);
            EXPECT_EQ(c.smem_bytes, heuristics::mqa_logits_smem_bytes(h, d, c.query_pieces, c.num_stages));
            EXPECT_TRUE(c.num_stages == heuristics::kMqaMaxStages ||
                        heuristics::mqa_logits_smem_bytes(h, d, c.query_pieces, c.num_stages + 1) > ops::kSm90MaxSmemBytes);
            EXPECT_GE(c.num_stages, 4);
        }
    }
    // D = 128: two 32 KB Q stages and 16.5 KB per KV stage leave room for 9.
    EXPECT_EQ(plan(2048, 8192, 32, 128).num_stages, 9);
    // The formula the kernel static_asserts: Q, KV + scales, weights, metadata, piece scales, lane-ordered weights,
    // barriers, rounded to 1 KB. 2 x 32768 + 9 x (16384 + 512) + 2048 + 256 + 64 + 2304 + 8 x 24 = 222464 -> 223232.
    EXPECT_EQ(heuristics::mqa_logits_smem_bytes(32, 128, false, 9), 223232);
    // D = 32, H = 32: a q-group's 128 head rows and 16 piece rows of 32 bytes, padded to 5 KB.
    // 2 x 2 x 5120 + 12 x (4096 + 512) + 2048 + 256 + 64 + 2304 + 8 x 30 = 80688 -> 80896.
    EXPECT_EQ(heuristics::mqa_logits_smem_bytes(32, 32, true, 12), 80896);
}

TEST(MqaLogitsPlan, QueryPiecesOnlyWhereTheFfmasBoundATile) {
    // Four FP8 pieces of each query's weighted sum (the linear half of the head reduction on the tensor cores) at
    // head dims 32 and 64; at 128 the tensor cores bound a tile already.
    for (int h : {32, 64}) {
        EXPECT_TRUE(plan(2048, 8192, h, 32).query_pieces);
        EXPECT_TRUE(plan(2048, 8192, h, 64).query_pieces);
        EXPECT_FALSE(plan(2048, 8192, h, 128).query_pieces);
    }
    EXPECT_EQ(heuristics::mqa_logits_piece_rows(32, true), 16);
    EXPECT_EQ(heuristics::mqa_logits_piece_rows(64, true), 8);
    EXPECT_EQ(heuristics::mqa_logits_piece_rows(64, false), 0);
    // D = 128 with pieces would still fit 9 stages: 2 x 18 KB Q stages.
    EXPECT_LE(heuristics::mqa_logits_smem_bytes(32, 128, true, 9), ops::kSm90MaxSmemBytes);
}

TEST(MqaLogitsPlan, QueryBlocksAreUnitsAndFewBlocksAreSplitAlongKv) {
    // DeepGEMM's shapes: enough query blocks (256 / H queries each), no split; the grid is persistent.
    heuristics::MqaLogitsConfig c = plan(2048, 65536, 32, 128);
    EXPECT_EQ(c.block_q, 8);
    EXPECT_EQ(c.num_q_blocks, 256);
    EXPECT_EQ(c.num_kv_splits, 1);
    EXPECT_EQ(c.split_len, 65536);
    EXPECT_EQ(c.num_units, 256);
    EXPECT_EQ(c.grid, 132);
    c = plan(8192, 8192, 64, 32);
    EXPECT_EQ(c.block_q, 4);
    EXPECT_EQ(c.num_units, 2048);
    // S not a multiple of the block: the last block is partial.
    EXPECT_EQ(plan(13, 8192, 32, 64).num_q_blocks, 2);
    // Few queries: each block's KV rows are split (multiples of 128 rows, at least 8 tiles) for about 2 units per SM.
    c = plan(64, 65536, 64, 128);
    EXPECT_EQ(c.num_q_blocks, 16);
    EXPECT_EQ(c.num_kv_splits, 17);
    EXPECT_EQ(c.split_len % heuristics::kMqaBlockKv, 0);
    EXPECT_GE(c.split_len * c.num_kv_splits, 65536);
    EXPECT_LT(c.split_len * (c.num_kv_splits - 1), 65536);
    EXPECT_EQ(c.num_units, 16 * 17);
    // A short KV sequence is not split below 8 tiles; a tiny problem gets a grid of its units.
    c = plan(1, 1000, 32, 32);
    EXPECT_EQ(c.num_kv_splits, 1);
    EXPECT_EQ(c.grid, 1);
}

TEST(MqaLogitsPlan, RejectsWhatTheKernelDoesNotHave) {
    EXPECT_THROW(plan(16, 16, 16, 128), InvalidArgument);
    EXPECT_THROW(plan(16, 16, 32, 256), InvalidArgument);
    EXPECT_THROW(plan(0, 16, 32, 128), InvalidArgument);
}

TEST(MqaLogitsPlan, CleanRowsPerBlockMakeOneWave) {
    EXPECT_EQ(heuristics::clean_logits_rows_per_block(8192, 132), 8);
    EXPECT_EQ(heuristics::clean_logits_rows_per_block(2048, 132), 2);
    EXPECT_EQ(heuristics::clean_logits_rows_per_block(5, 132), 1);
    EXPECT_EQ(heuristics::clean_logits_rows_per_block(1 << 24, 132), 64);
}

TEST(MqaLogitsLayout, BufferGeometryIsDeepGemms) {
    // Normal: align(S_kv + 256, 1024 B / element); compressed: align(align(max_seqlen_k, 256), 1024 B / element).
    EXPECT_EQ(mqa_logits_row_stride(8192, 0, DType::kFloat32), 8192 + 256);
    EXPECT_EQ(mqa_logits_row_stride(8192, 0, DType::kBFloat16), 8704);
    EXPECT_EQ(mqa_logits_row_stride(1, 0, DType::kFloat32), 512);
    EXPECT_EQ(mqa_logits_row_stride(8192, 7000, DType::kFloat32), 7168);
    EXPECT_EQ(mqa_logits_row_stride(8192, 7000, DType::kBFloat16), 7168);
    EXPECT_EQ(mqa_logits_row_stride(8192, 100, DType::kBFloat16), 512);
    EXPECT_EQ(mqa_logits_buffer_rows(13, 32), 16);
    EXPECT_EQ(mqa_logits_buffer_rows(13, 64), 14);
    EXPECT_THROW(mqa_logits_row_stride(16, 0, DType::kFloat16), InvalidArgument);
}

TEST(MqaLogitsCatalog, CoversDeepGemmsShapesAndTheCleanKernel) {
    const std::vector<jit::KernelSpec> specs = catalog::mqa_logits_specs(132);
    // H x D x logits dtype main kernels (stages follow D), and the clean kernel per dtype.
    EXPECT_EQ(specs.size(), 2u * 3u * 2u + 2u);
    int clean = 0;
    for (const jit::KernelSpec& spec : specs) {
        if (spec.family == jit::Family::kCleanLogits) ++clean;
        else EXPECT_EQ(spec.family, jit::Family::kMqaLogits);
    }
    EXPECT_EQ(clean, 2);
    // The profiler substrings of DeepGEMM's test: the clean kernel's name must not match the main kernel's.
    const std::string main_entry(jit::family_info(jit::Family::kMqaLogits).entry);
    const std::string clean_entry(jit::family_info(jit::Family::kCleanLogits).entry);
    EXPECT_NE(main_entry.find("mqa_logits"), std::string::npos);
    EXPECT_NE(clean_entry.find("clean_logits"), std::string::npos);
    EXPECT_EQ(clean_entry.find("mqa_logits"), std::string::npos);
}

class MqaLogitsCompile : public ::testing::TestWithParam<CompilerKind> {};

// The catalog's kernels are compiled by test_compile_kernels.cpp; here the shallowest ring a smaller shared memory
// would give.
TEST_P(MqaLogitsCompile, ShallowRingCompilesWithoutSpills) {
    const auto cache = test::make_temp_dir("tessera-cache");
    jit::Jit j(test::test_options(cache, GetParam()));
    const jit::KernelSpec spec =
        ops::mqa_logits_spec(heuristics::choose_mqa_logits_config({8, 8192, 64, 128, true, 132, 200000}));
    const bool reported = test::expect_clean_build(j, spec, GetParam());
    std::filesystem::remove_all(cache);
    if (!reported) GTEST_SKIP() << test::kNoPtxasReport;
}

INSTANTIATE_TEST_SUITE_P(Compilers, MqaLogitsCompile, ::testing::Values(CompilerKind::kNvrtc, CompilerKind::kNvcc),
                         [](const auto& info) { return info.param == CompilerKind::kNvrtc ? "nvrtc" : "nvcc"; });
