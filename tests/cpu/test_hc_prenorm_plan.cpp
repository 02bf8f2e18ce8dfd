// HC pre-norm GEMM planning and host validation (no GPU): the planner's splits and stages are legal and fill the SMs
// where it splits, explicit splits are kept, the shared-memory formula is the kernel's, and the op refuses bad
// arguments with InvalidArgument / TypeMismatch naming them before it touches a device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "heuristics/hc_prenorm_plan.hpp"
#include "tessera/error.hpp"
#include "tessera/hc_prenorm_gemm.hpp"

using namespace tessera;
using namespace tessera::heuristics;

TEST(HcPrenormPlan, ChoicesAreLegalForManyShapes) {
    for (int sms : {132, 78, 1})
        for (std::int64_t n : {8, 16, 24, 32})
            for (std::int64_t m : {1, 13, 64, 65, 137, 1024, 4096, 8192, 100000})
                for (std::int64_t k : {64, 128, 7168, 7680, 28672})
                    for (int splits : {0, 1, 3, 16}) {
                        SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " splits " << splits << " sms "
                                                        << sms);
                        const HcPrenormConfig c = choose_hc_prenorm_config({m, n, k, splits, sms});
                        EXPECT_EQ(c.block_n, n);
                        EXPECT_GE(c.num_stages, 2);
                        EXPECT_LE(c.num_stages, kHcMaxStages);
                        EXPECT_EQ(c.smem_bytes, hc_prenorm_smem_bytes(static_cast<int>(n), c.num_stages, c.cluster));
                        EXPECT_LE(c.smem_bytes, 232448);
                        EXPECT_EQ(c.num_m_blocks, (m + 63) / 64);
                        if (splits > 0) {
                            EXPECT_EQ(c.num_splits, splits);  // DeepGEMM's partition: the caller's count, kept
                            EXPECT_FALSE(c.reduce);
                        } else {
                            EXPECT_GE(c.num_splits, 1);
                            EXPECT_LE(c.num_splits, k / 64);  // no empty chunk in a summed split
                            EXPECT_EQ(c.reduce, c.num_splits > 1);
                            if (c.reduce) {
                                EXPECT_LE(c.grid(), sms);  // one wave: bounds the workspace
                                EXPECT_LE(c.workspace_floats(), sms * (64 * 32 + 64));
                                if (c.cluster > 1) {  // the m-block's splits are one cluster: no workspace
                                    EXPECT_EQ(c.cluster, c.num_splits);
                                    EXPECT_TRUE(c.cluster == 2 || c.cluster == 4 || c.cluster == 8 || c.cluster == 16);
                                    EXPECT_EQ(c.workspace_floats(), 0);
                                    EXPECT_EQ(c.num_counters(), 0);
                                } else {
                                    EXPECT_EQ(c.num_counters(), c.num_m_blocks);
                                }
                            } else {
                                EXPECT_EQ(c.cluster, 1);
                            }
                        }
                    }
}

TEST(HcPrenormPlan, DeepGemmShapesFillTheMachine) {
    // Large M: the m blocks alone fill the SMs (8192 rows: 128 CTAs), or two splits do (4096 rows: 64 x 2).
    for (std::int64_t k : {28672, 7680, 7168}) {
        SCOPED_TRACE(k);
        const HcPrenormConfig big = choose_hc_prenorm_config({8192, 24, k, 0, 132});
        EXPECT_EQ(big.num_splits, 1);
        EXPECT_FALSE(big.reduce);
        const HcPrenormConfig mid = choose_hc_prenorm_config({4096, 24, k, 0, 132});
        EXPECT_EQ(mid.num_splits, 2);
        EXPECT_TRUE(mid.reduce);
        EXPECT_EQ(mid.cluster, 2);  // pairs summed through DSMEM
        // Small M: K is spread over as many slices as DeepGEMM's 16 splits, one cluster per m-block (the final sum
        // through the workspace costs about 1 us per 8 slices on the H200, through DSMEM well under 1 us).
        for (std::int64_t m : {13, 137}) {
            const HcPrenormConfig small = choose_hc_prenorm_config({m, 24, k, 0, 132});
            EXPECT_TRUE(small.reduce) << small.describe();
            EXPECT_EQ(small.num_splits, 16) << small.describe();
            EXPECT_EQ(small.cluster, 16) << small.describe();
            EXPECT_LE(small.grid(), 132) << small.describe();
            // A device that keeps no cluster of 16 resident for every m-block: the planner is told 8 at most, and
            // then a long K is better served by more splits through the workspace.
            HcPrenormProblem narrow{m, 24, k, 0, 132};
            narrow.max_cluster = 8;
            const HcPrenormConfig c8 = choose_hc_prenorm_config(narrow);
            EXPECT_TRUE(c8.cluster <= 8) << c8.describe();
            EXPECT_GE(c8.num_splits, 8) << c8.describe();
        }
    }
    EXPECT_EQ(choose_hc_prenorm_config({13, 24, 64, 0, 132}).num_splits, 1);  // one k-block: nothing to split
}

TEST(HcPrenormPlan, SharedMemoryFormulaAndStages) {
    // barriers 1 KB + stages of a 64 x 64 BF16 A tile and an N x 64 FP32 B tile
    EXPECT_EQ(hc_prenorm_smem_bytes(24, 16), 1024 + 16 * (8192 + 6144));
    // + a cluster sum's receive buffer: per owned piece group a float4 per thread from each rank, then the ranks'
    // 64 row sums of squares (16 ranks, N = 24: one group each for ranks 0-2; 2 ranks: two groups for rank 0)
    EXPECT_EQ(hc_prenorm_smem_bytes(24, 13, 16), 1024 + 13 * (8192 + 6144) + 16 * 2048 + 16 * 256);
    EXPECT_EQ(hc_prenorm_smem_bytes(24, 15, 2), 1024 + 15 * (8192 + 6144) + 9216);
    EXPECT_EQ(hc_prenorm_smem_bytes(8, 4, 4), 1024 + 4 * (8192 + 2048) + 9216);
    EXPECT_EQ(choose_hc_prenorm_config({8192, 24, 7168, 0, 132}).num_stages, 16);
    EXPECT_EQ(choose_hc_prenorm_config({4096, 24, 7168, 0, 132}).num_stages, 15);  // cluster of 2
    EXPECT_EQ(choose_hc_prenorm_config({4096, 32, 7168, 0, 132}).num_stages, 13);
    const HcPrenormConfig small = choose_hc_prenorm_config({13, 24, 7168, 0, 132});
    EXPECT_EQ(small.cluster, 16);
    EXPECT_EQ(small.num_stages, 13);
    HcPrenormProblem tight{4096, 32, 7168, 0, 132, 40000};
    EXPECT_EQ(choose_hc_prenorm_config(tight).num_stages, 2);
    EXPECT_EQ(choose_hc_prenorm_config(tight).cluster, 1);  // no room for a receive buffer next to two stages
    tight.max_smem_bytes = 30000;
    EXPECT_THROW(choose_hc_prenorm_config(tight), InvalidArgument);
    EXPECT_EQ(hc_prenorm_reduce_unroll(24), 8);
    EXPECT_EQ(hc_prenorm_reduce_unroll(8), 24);
}

TEST(HcPrenormPlan, RefusesIllegalProblems) {
    for (HcPrenormProblem p : std::vector<HcPrenormProblem>{{0, 24, 64}, {1, 20, 64}, {1, 40, 64}, {1, 24, 96},
                                                            {1, 24, 0}, {1, 24, 64, -1}})
        EXPECT_THROW(choose_hc_prenorm_config(p), InvalidArgument) << p.m << " " << p.n << " " << p.k;
}

namespace {

// Host memory behind CPU TensorRefs: the op must refuse before any device work.
struct Host {
    std::vector<float> a, b, d, s;
};

template <class F>
std::string error_of(F&& call) {
    try {
        call();
    } catch (const TypeMismatch& e) {
        return std::string("TypeMismatch: ") + e.what();
    } catch (const InvalidArgument& e) {
        return std::string("InvalidArgument: ") + e.what();
    }
    return "no error";
}

}  // namespace

TEST(HcPrenormOp, ValidationNamesArgumentExpectationAndValue) {
    Host h{std::vector<float>(64 * 128), std::vector<float>(24 * 128), std::vector<float>(16 * 64 * 24),
           std::vector<float>(16 * 64)};
    const Device cpu{};
    const TensorRef a = make_tensor_ref(h.a.data(), DType::kBFloat16, {64, 128}, cpu);
    const TensorRef b = make_tensor_ref(h.b.data(), DType::kFloat32, {24, 128}, cpu);
    const TensorRef d = make_tensor_ref(h.d.data(), DType::kFloat32, {64, 24}, cpu);
    const TensorRef s = make_tensor_ref(h.s.data(), DType::kFloat32, {64}, cpu);
    const TensorRef d3 = make_tensor_ref(h.d.data(), DType::kFloat32, {16, 64, 24}, cpu);
    const TensorRef s2 = make_tensor_ref(h.s.data(), DType::kFloat32, {16, 64}, cpu);
    const auto run = [&](const TensorRef& ra, const TensorRef& rb, const TensorRef& rd, const TensorRef& rs,
                         int splits) { return error_of([&] { tf32_hc_prenorm_gemm(ra, rb, rd, rs, splits, nullptr); }); };
    const auto contains = [](const std::string& text, const std::string& what) {
        return text.find(what) != std::string::npos;
    };
    // All checks pass up to the device: host memory is refused, naming a.
    EXPECT_PRED2(contains, run(a, b, d, s, 0), "InvalidArgument: tf32_hc_prenorm_gemm: argument 'a': expected a CUDA tensor");
    EXPECT_PRED2(contains, run(a, b, d3, s2, 16), "argument 'a': expected a CUDA tensor");
    // dtypes
    TensorRef wrong = a;
    wrong.dtype = DType::kFloat32;
    EXPECT_PRED2(contains, run(wrong, b, d, s, 0), "TypeMismatch: tf32_hc_prenorm_gemm: argument 'a': expected dtype bfloat16, got float32");
    wrong = b;
    wrong.dtype = DType::kBFloat16;
    EXPECT_PRED2(contains, run(a, wrong, d, s, 0), "argument 'b': expected dtype float32, got bfloat16");
    // shapes and split counts
    EXPECT_PRED2(contains, run(a, b, d3, s2, 0), "argument 'd': expected 2 dimensions");
    EXPECT_PRED2(contains, run(a, b, d, s, 16), "argument 'd': expected 3 dimensions");
    EXPECT_PRED2(contains, run(a, b, d3, s2, 8), "argument 'd': expected shape [8, 64, 24], got [16, 64, 24]");
    EXPECT_PRED2(contains, run(a, b, d, s, -2), "argument 'num_splits': expected 0 (None) or >= 1, got -2");
    const TensorRef b_short = make_tensor_ref(h.b.data(), DType::kFloat32, {24, 64}, cpu);
    EXPECT_PRED2(contains, run(a, b_short, d, s, 0), "argument 'b': expected [N, K] with K = 128 (from a), got shape [24, 64]");
    const TensorRef s_short = make_tensor_ref(h.s.data(), DType::kFloat32, {63}, cpu);
    EXPECT_PRED2(contains, run(a, b, d, s_short, 0), "argument 'sqr_sum': expected shape [64], got [63]");
    // SM90 limits on N and K
    const TensorRef b20 = make_tensor_ref(h.b.data(), DType::kFloat32, {20, 128}, cpu);
    const TensorRef d20 = make_tensor_ref(h.d.data(), DType::kFloat32, {64, 20}, cpu);
    EXPECT_PRED2(contains, run(a, b20, d20, s, 0), "argument 'b': expected N <= 32 and a multiple of 8 (SM90), got N = 20");
    const TensorRef a96 = make_tensor_ref(h.a.data(), DType::kBFloat16, {64, 96}, cpu);
    const TensorRef b96 = make_tensor_ref(h.b.data(), DType::kFloat32, {24, 96}, cpu);
    EXPECT_PRED2(contains, run(a96, b96, d, s, 0), "argument 'a': expected K a multiple of 64 (SM90), got K = 96");
    // layouts: MN-major a, non-contiguous sqr_sum, column-major d
    const TensorRef a_t = make_tensor_ref(h.a.data(), DType::kBFloat16, {64, 128}, cpu, {1, 64});
    EXPECT_PRED2(contains, run(a_t, b, d, s, 0), "argument 'a': expected K-major (stride(-1) == 1)");
    const TensorRef s_strided = make_tensor_ref(h.s.data(), DType::kFloat32, {64}, cpu, {2});
    EXPECT_PRED2(contains, run(a, b, d, s_strided, 0), "argument 'sqr_sum': expected a contiguous tensor");
    const TensorRef d_t = make_tensor_ref(h.d.data(), DType::kFloat32, {64, 24}, cpu, {1, 64});
    EXPECT_PRED2(contains, run(a, b, d_t, s, 0), "argument 'd': expected row-major");
    // M == 0 returns before any device is needed
    const TensorRef a0 = make_tensor_ref(h.a.data(), DType::kBFloat16, {0, 128}, cpu);
    const TensorRef d0 = make_tensor_ref(h.d.data(), DType::kFloat32, {0, 24}, cpu);
    const TensorRef s0 = make_tensor_ref(h.s.data(), DType::kFloat32, {0}, cpu);
    EXPECT_EQ(run(a0, b, d0, s0, 0), "no error");
}
