// The work split of the paged MQA logits kernel (sm90/paged_mqa_logits.cuh), in plain C++ that the host tests run
// as is (tests/cpu/test_paged_mqa_logits_compile.cpp, through host_device_macros.hpp).
//
// Work is counted in units: one unit per 64-token KV page of a sequence, at least one per sequence (an empty context
// still owns the -inf fill of its rows when clean_logits is on). A sequence's unit count comes from the longest of
// its next_n context lengths. All sequences' units, one after another, are cut into num_sms contiguous ranges that
// differ by at most one unit; the schedule (metadata) tensor holds each range's start as (sequence, unit), row s for
// SM s, and row num_sms = (batch, 0).
//
// Every SM walks its range and turns it into tasks, one per unit, each consumed by one math warpgroup in turn
// (task i of the SM goes to warpgroup i % W). A sequence whose pages this SM loads also has its queries and weights
// loaded once into a Q slot; every warpgroup then gets at least one task of it (the task list is padded with empty
// tasks to W), so that each warpgroup waits for the slot on its first task and releases it on its last.
//
// Ranges tile the unit sequence exactly whatever the context lengths are when the kernel runs: SM s covers units
// [u_s, units(b_s)) of b_s, every unit of the sequences in between, and [0, min(u_{s+1}, units(b_{s+1}))) of
// b_{s+1}, and SM s+1 starts where it stops. Schedules computed for other lengths are therefore still exact (only
// their balance suffers).
#pragma once

#include <tessera/common.cuh>

namespace tessera::sm90::paged_mqa {

constexpr uint32_t kPageTokens = 64;  // tokens per KV cache block (SM90 supports block_kv = 64 only)

// Units of a sequence whose longest context is `max_context` tokens.
__host__ __device__ inline uint32_t units_of(int32_t max_context) {
    const uint32_t pages = max_context > 0 ? ceil_div(static_cast<uint32_t>(max_context), kPageTokens) : 0u;
    return pages > 0 ? pages : 1u;
}

// The balanced start of range s: floor(total * s / num_sms) units (64-bit: total * s may pass 2^32).
__host__ __device__ inline uint64_t range_start(uint64_t total, uint32_t s, uint32_t num_sms) {
    return total * s / num_sms;
}

// The first range whose start is at or after unit `pos` (total > 0): ceil(pos * num_sms / total).
__host__ __device__ inline uint32_t first_range_at(uint64_t pos, uint64_t total, uint32_t num_sms) {
    return static_cast<uint32_t>((pos * num_sms + total - 1) / total);
}

// The schedule rows that fall in sequence b, whose units are [pos, pos + count) of the whole: out[s] = (b, unit) for
// each range s starting there. One writer per row, since the starts are distinct units.
__host__ __device__ inline void write_rows_of_sequence(int32_t* out, uint32_t b, uint64_t pos, uint32_t count,
                                                       uint64_t total, uint32_t num_sms) {
    for (uint32_t s = first_range_at(pos, total, num_sms); s < num_sms; ++s) {
        const uint64_t start = range_start(total, s, num_sms);
        if (start >= pos + count) break;
        out[2 * s] = static_cast<int32_t>(b);
        out[2 * s + 1] = static_cast<int32_t>(start - pos);
    }
}

// Task flags (the consumers' instructions, written next to each stage).
enum TaskFlags : uint32_t {
    kHasData = 1u,     // a page (and its scales) was loaded into the stage
    kUsesQ = 2u,       // the sequence's queries and weights are in a Q slot
    kFirstOfWg = 4u,   // this warpgroup's first task of the sequence: wait for the Q slot, read the weights
    kLastOfWg = 8u,    // this warpgroup's last task of the sequence: release the Q slot after the MMA
    kFillTail = 16u,   // clean_logits: fill the sequence's rows with -inf from fill_from to max_context_len
    kDone = 32u,       // no more tasks for this warpgroup
};

// One sequence's tasks on one SM.
struct SequenceTasks {
    uint32_t unit_begin = 0;  // units [unit_begin, unit_end) of the sequence are this SM's
    uint32_t unit_end = 0;
    uint32_t data_end = 0;    // units below it load a page (pages the block table and the logits width cover)
    uint32_t num_tasks = 0;   // unit_end - unit_begin, padded to the warpgroup count when the sequence uses Q
    uint32_t fill_from = 0;   // first column no page of the sequence writes
    bool uses_q = false;
    bool owns_fill = false;   // the sequence's last unit is here
};

// The tasks of sequence b (longest context max_context) on the SM whose range is [(b0, u0), (b1, u1)).
__host__ __device__ inline SequenceTasks sequence_tasks(uint32_t b, int32_t max_context, uint32_t b0, uint32_t u0,
                                                        uint32_t b1, uint32_t u1, uint32_t max_blocks,
                                                        uint32_t max_context_len, uint32_t num_math_wgs) {
    SequenceTasks t;
    const uint32_t units = units_of(max_context);
    t.unit_begin = b == b0 ? u0 : 0u;
    t.unit_end = b == b1 ? (u1 < units ? u1 : units) : units;
    if (b < b0 || b > b1 || t.unit_begin >= t.unit_end) {
        t.unit_begin = t.unit_end = 0;
        return t;
    }
    // Pages past the block table's width or past the logits' width are never loaded (nothing valid lives there).
    uint32_t pages = max_context > 0 ? ceil_div(static_cast<uint32_t>(max_context), kPageTokens) : 0u;
    if (pages > max_blocks) pages = max_blocks;
    const uint32_t width_pages = ceil_div(max_context_len, kPageTokens);
    if (pages > width_pages) pages = width_pages;
    t.data_end = pages;
    t.fill_from = pages * kPageTokens;
    t.uses_q = t.unit_begin < pages;
    t.owns_fill = t.unit_end == units;
    t.num_tasks = t.unit_end - t.unit_begin;
    if (t.uses_q && t.num_tasks < num_math_wgs) t.num_tasks = num_math_wgs;
    return t;
}

// The flags of task j (0-based) of a sequence's tasks on this SM; warpgroups take the tasks in turn.
__host__ __device__ inline uint32_t task_flags(const SequenceTasks& t, uint32_t j, uint32_t num_math_wgs) {
    const uint32_t unit = t.unit_begin + j;
    const bool real = unit < t.unit_end;  // past it: an empty task that only passes the Q slot along
    uint32_t flags = 0;
    if (real && unit < t.data_end) flags |= kHasData;
    if (t.uses_q) {
        flags |= kUsesQ;
        if (j < num_math_wgs) flags |= kFirstOfWg;
        if (j + num_math_wgs >= t.num_tasks) flags |= kLastOfWg;
    }
    if (t.owns_fill && unit + 1 == t.unit_end) flags |= kFillTail;
    return flags;
}

}  // namespace tessera::sm90::paged_mqa
