// The paged MQA logits family without a GPU:
//  - its kernels (the catalog's: DeepGEMM's test configurations, with and without clean_logits, and the schedule
//    kernel) compile for sm_90a through NVRTC and NVCC with no spills, no stack frame and no serialized wgmma;
//  - the plan's shared memory fits and keeps the most page stages;
//  - the work split, run on the host with the kernels' own functions (sm90/paged_mqa_schedule.cuh): the schedule
//    rows the metadata kernel writes, and each SM's walk of its range into tasks as the producer does it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <vector>

#include "catalog/family_specs.hpp"
#include "jit/jit.hpp"
#include "ops/paged_mqa_logits_specs.hpp"
#include "test_helpers.hpp"

#include "host_device_macros.hpp"
#include <tessera/sm90/paged_mqa_schedule.cuh>  // host-usable device header

using namespace tessera;
namespace pm = tessera::sm90::paged_mqa;

// The catalog's kernels (both next_n, both head counts, both dtypes, clean on and off, and the schedule kernel) are
// compiled by test_compile_kernels.cpp.
TEST(PagedMqaLogitsCatalog, CoversEveryVariantAndTheScheduleKernel) {
    EXPECT_EQ(catalog::paged_mqa_logits_specs(132).size(), 17u);
}

TEST(PagedMqaLogitsPlan, StagesFillTheSharedMemory) {
    constexpr int kMax = 232448;
    for (int next_n : {1, 2})
        for (int heads : {32, 64}) {
            const jit::KernelSpec spec = ops::paged_mqa_logits_spec(next_n, heads, false, false, kMax);
            const int stages = static_cast<int>(spec.get("kNumStages")), q = static_cast<int>(spec.get("kNumQStages"));
            const int wgs = static_cast<int>(spec.get("kNumMathWarpgroups"));
            SCOPED_TRACE(spec.describe());
            EXPECT_EQ(stages % wgs, 0);
            EXPECT_GE(stages, 20);  // >= 165 KB of pages in flight per SM
            EXPECT_LE(ops::paged_mqa_logits_smem_bytes(next_n, heads, stages, q), kMax);
            EXPECT_TRUE(stages == 24 || ops::paged_mqa_logits_smem_bytes(next_n, heads, stages + wgs, q) > kMax);
            EXPECT_EQ(ops::paged_mqa_logits_threads(spec), 128 * (wgs + 1));
        }
    // A smaller shared memory gets fewer stages, never an overflow.
    const jit::KernelSpec small = ops::paged_mqa_logits_spec(2, 64, true, true, 101376);
    EXPECT_LE(ops::paged_mqa_logits_smem_bytes(2, 64, static_cast<int>(small.get("kNumStages")), 3), 101376);
}

namespace {

// The metadata kernel's rows for these longest context lengths: each sequence's rows from its prefix position.
std::vector<std::int32_t> schedule_rows(const std::vector<std::int32_t>& longest, std::uint32_t num_sms) {
    std::vector<std::int32_t> out(2 * (num_sms + 1), -7);
    std::uint64_t total = 0;
    for (std::int32_t c : longest) total += pm::units_of(c);
    std::uint64_t pos = 0;
    for (std::uint32_t b = 0; b < longest.size(); ++b) {
        const std::uint32_t count = pm::units_of(longest[b]);
        if (total > 0) pm::write_rows_of_sequence(out.data(), b, pos, count, total, num_sms);
        pos += count;
    }
    for (std::uint32_t s = total > 0 ? num_sms : 0u; s <= num_sms; ++s) {
        out[2 * s] = static_cast<std::int32_t>(longest.size());
        out[2 * s + 1] = 0;
    }
    return out;
}

struct Walked {
    std::uint32_t sm, wg, flags, fill_from;
};

// Every SM's tasks as its producer issues them (for the kernel's lengths `longest`, which may differ from those the
// schedule was made for), keyed by (sequence, unit); padding tasks under unit ~0u.
std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Walked>> walk(const std::vector<std::int32_t>& schedule,
                                                                   const std::vector<std::int32_t>& longest,
                                                                   std::uint32_t num_sms, std::uint32_t max_blocks,
                                                                   std::uint32_t max_context_len, std::uint32_t wgs,
                                                                   bool check_q_turns = true) {
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Walked>> tasks;
    const std::uint32_t batch = static_cast<std::uint32_t>(longest.size());
    for (std::uint32_t sm = 0; sm < num_sms; ++sm) {
        const std::uint32_t b0 = schedule[2 * sm], u0 = schedule[2 * sm + 1];
        const std::uint32_t b1 = schedule[2 * sm + 2], u1 = schedule[2 * sm + 3];
        std::uint32_t issued = 0;
        for (std::uint32_t b = b0; b < batch && b <= b1; ++b) {
            const pm::SequenceTasks s =
                pm::sequence_tasks(b, longest[b], b0, u0, b1, u1, max_blocks, max_context_len, wgs);
            std::vector<int> firsts(wgs, 0), lasts(wgs, 0);
            for (std::uint32_t j = 0; j < s.num_tasks; ++j, ++issued) {
                const std::uint32_t flags = pm::task_flags(s, j, wgs), wg = issued % wgs, unit = s.unit_begin + j;
                const bool real = unit < s.unit_end;
                tasks[{b, real ? unit : ~0u}].push_back({sm, wg, flags, s.fill_from});
                if (flags & pm::kFirstOfWg) {
                    EXPECT_EQ(lasts[wg], 0) << "a warpgroup's first task after its last, b " << b;
                    ++firsts[wg];
                }
                if (flags & pm::kLastOfWg) ++lasts[wg];
                if (flags & pm::kHasData) EXPECT_TRUE(flags & pm::kUsesQ);
            }
            if (check_q_turns && s.uses_q)
                for (std::uint32_t g = 0; g < wgs; ++g) {
                    EXPECT_EQ(firsts[g], 1) << "sm " << sm << " b " << b << " wg " << g;
                    EXPECT_EQ(lasts[g], 1) << "sm " << sm << " b " << b << " wg " << g;
                }
        }
    }
    return tasks;
}

// Each unit of each sequence is one real task; pages the cache covers load; one task fills each sequence's tail.
void expect_exact_cover(const std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Walked>>& tasks,
                        const std::vector<std::int32_t>& longest, std::uint32_t max_blocks,
                        std::uint32_t max_context_len) {
    for (std::uint32_t b = 0; b < longest.size(); ++b) {
        const std::uint32_t units = pm::units_of(longest[b]);
        std::uint32_t pages = longest[b] > 0 ? (static_cast<std::uint32_t>(longest[b]) + 63) / 64 : 0;
        pages = std::min({pages, max_blocks, (max_context_len + 63) / 64});
        int fills = 0;
        for (std::uint32_t u = 0; u < units; ++u) {
            const auto it = tasks.find({b, u});
            ASSERT_NE(it, tasks.end()) << "b " << b << " unit " << u << " missing";
            ASSERT_EQ(it->second.size(), 1u) << "b " << b << " unit " << u << " issued twice";
            const Walked& t = it->second[0];
            EXPECT_EQ((t.flags & pm::kHasData) != 0, u < pages) << "b " << b << " unit " << u;
            if (t.flags & pm::kFillTail) {
                ++fills;
                EXPECT_EQ(u, units - 1);
                EXPECT_EQ(t.fill_from, pages * 64);
            }
        }
        EXPECT_EQ(fills, 1) << "b " << b;
    }
    for (const auto& [key, list] : tasks) EXPECT_LT(key.first, longest.size());
}

}  // namespace

TEST(PagedMqaSchedule, RangesAreBalancedToOneUnit) {
    std::mt19937 rng(7);
    for (std::uint32_t batch : {1u, 3u, 256u, 4096u})
        for (std::uint32_t num_sms : {1u, 7u, 132u}) {
            std::vector<std::int32_t> longest(batch);
            for (auto& c : longest) c = static_cast<std::int32_t>(rng() % 20000);
            const std::vector<std::int32_t> rows = schedule_rows(longest, num_sms);
            std::uint64_t total = 0;
            std::vector<std::uint64_t> prefix{0};
            for (std::int32_t c : longest) prefix.push_back(total += pm::units_of(c));
            for (std::uint32_t s = 0; s <= num_sms; ++s) {
                const std::uint64_t start = prefix[rows[2 * s]] + rows[2 * s + 1];
                EXPECT_EQ(start, s == num_sms ? total : total * s / num_sms) << "batch " << batch << " sm " << s;
                if (s < num_sms)
                    EXPECT_LT(static_cast<std::uint32_t>(rows[2 * s + 1]), pm::units_of(longest[rows[2 * s]]));
            }
            EXPECT_EQ(rows[2 * num_sms], static_cast<std::int32_t>(batch));
            EXPECT_EQ(rows[2 * num_sms + 1], 0);
        }
}

TEST(PagedMqaSchedule, EveryUnitIsOneTaskOfOneWarpgroup) {
    std::mt19937 rng(11);
    for (std::uint32_t wgs : {2u, 3u, 4u})  // 3: the kernel's math warpgroups at next_n * H = 128
        for (std::uint32_t num_sms : {1u, 5u, 132u, 300u}) {
            // Long and short contexts, zero-length ones, lengths not a multiple of 64.
            std::vector<std::int32_t> longest(97);
            for (auto& c : longest) c = rng() % 4 == 0 ? static_cast<std::int32_t>(rng() % 3) * 64 : rng() % 9000;
            longest[3] = 0;
            longest[4] = -5;  // treated as empty
            const std::vector<std::int32_t> rows = schedule_rows(longest, num_sms);
            expect_exact_cover(walk(rows, longest, num_sms, 1 << 20, 1 << 20, wgs), longest, 1 << 20, 1 << 20);
        }
}

TEST(PagedMqaSchedule, PagesPastTheTableOrTheLogitsWidthAreNotLoaded) {
    const std::vector<std::int32_t> longest = {1000, 64 * 40 + 1, 0, 200};
    const std::vector<std::int32_t> rows = schedule_rows(longest, 6);
    // 30 block-table columns, logits 1900 wide: at most 30 pages of the second sequence, 30 (1900/64) of the first.
    expect_exact_cover(walk(rows, longest, 6, 30, 1900, 2), longest, 30, 1900);
}

TEST(PagedMqaSchedule, AScheduleForOtherLengthsStillCoversEveryUnitOnce) {
    std::mt19937 rng(5);
    std::vector<std::int32_t> made_for(64), now(64);
    for (int i = 0; i < 64; ++i) {
        made_for[i] = static_cast<std::int32_t>(rng() % 6000);
        now[i] = static_cast<std::int32_t>(rng() % 6000);  // longer or shorter than the schedule assumed
    }
    const std::vector<std::int32_t> rows = schedule_rows(made_for, 132);
    expect_exact_cover(walk(rows, now, 132, 1 << 20, 1 << 20, 2), now, 1 << 20, 1 << 20);
}

TEST(PagedMqaSchedule, NoSequencesGiveEmptyRanges) {
    const std::vector<std::int32_t> rows = schedule_rows({}, 4);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(rows[2 * i], 0);
        EXPECT_EQ(rows[2 * i + 1], 0);
    }
    EXPECT_TRUE(walk(rows, {}, 4, 8, 512, 2).empty());
}

TEST(PagedMqaSchedule, UnitsAndTaskFlags) {
    EXPECT_EQ(pm::units_of(0), 1u);
    EXPECT_EQ(pm::units_of(-3), 1u);
    EXPECT_EQ(pm::units_of(1), 1u);
    EXPECT_EQ(pm::units_of(64), 1u);
    EXPECT_EQ(pm::units_of(65), 2u);
    // A one-page slice of a sequence on an SM with two warpgroups: the page, then an empty task for the other one.
    const pm::SequenceTasks s = pm::sequence_tasks(3, 130, 3, 2, 9, 0, 100, 4096, 2);
    EXPECT_EQ(s.unit_begin, 2u);
    EXPECT_EQ(s.unit_end, 3u);
    EXPECT_EQ(s.num_tasks, 2u);
    EXPECT_TRUE(s.uses_q && s.owns_fill);
    EXPECT_EQ(pm::task_flags(s, 0, 2), pm::kHasData | pm::kUsesQ | pm::kFirstOfWg | pm::kLastOfWg | pm::kFillTail);
    EXPECT_EQ(pm::task_flags(s, 1, 2), pm::kUsesQ | pm::kFirstOfWg | pm::kLastOfWg);
    // An empty context: one task that loads nothing, needs no queries and fills the rows.
    const pm::SequenceTasks e = pm::sequence_tasks(0, 0, 0, 0, 1, 0, 100, 4096, 2);
    EXPECT_EQ(e.num_tasks, 1u);
    EXPECT_FALSE(e.uses_q);
    EXPECT_EQ(pm::task_flags(e, 0, 2), pm::kFillTail);
    EXPECT_EQ(e.fill_from, 0u);
}
