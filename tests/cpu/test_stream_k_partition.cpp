// The stream-K split of a partial last wave (kernels/tessera/prims/stream_k.cuh), checked on the host over many
// shapes: every k-block of the last wave is computed exactly once, each unit has one owner whose piece comes last in
// its range, every other piece is its worker's only contribution, and the owner's contributor list names exactly the
// workers that contribute to its unit (the kernel's arrival count and workspace slots rest on these).
#include <gtest/gtest.h>

#include <vector>

#include "host_device_macros.hpp"
#include <tessera/prims/stream_k.cuh>  // host-usable device header (kernels/ is on this target's include path)

using tessera::prims::StreamKPartition;
using tessera::prims::StreamKPiece;

namespace {

void check_partition(unsigned units, unsigned workers, unsigned kb) {
    const StreamKPartition part(units, workers, kb);
    SCOPED_TRACE(testing::Message() << units << " units, " << workers << " workers, " << kb << " k-blocks");
    if (!part.active()) {
        EXPECT_TRUE(units % workers == 0 || (units % workers) * kb < workers);
        return;
    }
    const unsigned sk_units = units % workers;
    ASSERT_EQ(part.first_sk_unit, units - sk_units);
    std::vector<int> covered(sk_units * kb, 0);
    std::vector<int> owners(sk_units, 0);
    std::vector<std::vector<unsigned>> contributors(sk_units);
    std::vector<StreamKPiece> owner_piece(sk_units);
    for (unsigned w = 0; w < workers; ++w) {
        StreamKPiece pieces[3];
        unsigned n = 0;
        while (n < 3 && part.piece(w, n, pieces[n])) ++n;
        ASSERT_GE(n, 1u) << "worker " << w << " has no piece";
        ASSERT_LE(n, 2u) << "worker " << w;
        unsigned contributions = 0;
        for (unsigned i = 0; i < n; ++i) {
            const StreamKPiece& p = pieces[i];
            ASSERT_GE(p.unit, part.first_sk_unit);
            ASSERT_LT(p.unit, units);
            ASSERT_GT(p.num_k_blocks, 0u);
            ASSERT_LE(p.k_begin + p.num_k_blocks, kb);
            const unsigned local = p.unit - part.first_sk_unit;
            for (unsigned k = p.k_begin; k < p.k_begin + p.num_k_blocks; ++k) ++covered[local * kb + k];
            EXPECT_EQ(p.owner, p.k_begin == 0);
            if (p.owner) {
                EXPECT_EQ(i, n - 1) << "an owner's piece must come last in its range (worker " << w << ")";
                ++owners[local];
                owner_piece[local] = p;
                EXPECT_EQ(p.first_contributor, w + 1);
            } else {
                EXPECT_EQ(i, 0u) << "a contribution is its worker's first piece (worker " << w << ")";
                EXPECT_EQ(p.num_contributors, 0u);
                contributors[local].push_back(w);
                ++contributions;
            }
            if (i == 1) EXPECT_EQ(p.unit, pieces[0].unit + 1);
        }
        EXPECT_LE(contributions, 1u);
    }
    for (unsigned u = 0; u < sk_units * kb; ++u) ASSERT_EQ(covered[u], 1) << "stream-K k-block " << u;
    for (unsigned local = 0; local < sk_units; ++local) {
        ASSERT_EQ(owners[local], 1) << "unit " << local;
        const StreamKPiece& o = owner_piece[local];
        ASSERT_EQ(o.num_contributors, contributors[local].size()) << "unit " << local;
        for (unsigned i = 0; i < o.num_contributors; ++i) EXPECT_EQ(contributors[local][i], o.first_contributor + i);
    }
}

}  // namespace

TEST(StreamKPartition, EveryKBlockOnceOneOwnerPerUnitContributorsInOrder) {
    for (unsigned workers : {1u, 2u, 7u, 66u, 132u})
        for (unsigned units : {workers, workers + 1, 2 * workers + workers / 3, 3 * workers - 1, 5 * workers + 2})
            for (unsigned kb : {1u, 2u, 3u, 12u, 16u, 56u, 57u, 128u}) check_partition(units, workers, kb);
}

// The suite's case: 4096x2112x7168 on 128x192 tiles in multicast pairs: 176 units on 66 clusters, 56 k-blocks.
TEST(StreamKPartition, DeepGemmSuiteRow) {
    const StreamKPartition part(176, 66, 56);
    ASSERT_TRUE(part.active());
    EXPECT_EQ(part.first_sk_unit, 132u);
    EXPECT_EQ(part.sk_k_blocks, 44u * 56u);
    StreamKPiece p;
    ASSERT_TRUE(part.piece(0, 0, p));  // worker 0: the first 37 k-blocks of unit 132, which it owns
    EXPECT_EQ(p.unit, 132u);
    EXPECT_TRUE(p.owner);
    EXPECT_EQ(p.num_k_blocks, 37u);
    EXPECT_EQ(p.num_contributors, 1u);
    EXPECT_FALSE(part.piece(0, 1, p));
}
