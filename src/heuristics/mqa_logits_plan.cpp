#include "heuristics/mqa_logits_plan.hpp"

#include <algorithm>

#include "tessera/error.hpp"

namespace tessera::heuristics {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t align_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

}  // namespace

bool mqa_logits_query_pieces(int head_dim) { return head_dim <= 64; }

int mqa_logits_piece_rows(int num_heads, bool query_pieces) { return query_pieces ? 4 * (128 / num_heads) : 0; }

int mqa_logits_smem_bytes(int num_heads, int head_dim, bool query_pieces, int num_stages) {
    const std::int64_t group_bytes =
        align_up((128 + mqa_logits_piece_rows(num_heads, query_pieces)) * head_dim, 1024);
    const std::int64_t q_bytes = 2 * group_bytes, kv_bytes = kMqaBlockKv * head_dim, weight_bytes = 256 * 4;
    const std::int64_t bytes = 2 * q_bytes + num_stages * (kv_bytes + kMqaBlockKv * 4) + 2 * weight_bytes + 2 * 128 +
                               2 * 4 * 8 + 2 * 4 * 8 * 36 + 8 * (6 + 2 * num_stages);
    return static_cast<int>(align_up(bytes, 1024));
}

MqaLogitsConfig choose_mqa_logits_config(const MqaLogitsProblem& p) {
    TESSERA_CHECK(p.num_heads == 32 || p.num_heads == 64,
                  "mqa_logits plan: expected 32 or 64 heads, got ", p.num_heads);
    TESSERA_CHECK(p.head_dim == 32 || p.head_dim == 64 || p.head_dim == 128,
                  "mqa_logits plan: expected a head dim of 32, 64 or 128, got ", p.head_dim);
    TESSERA_CHECK(p.seq_len > 0 && p.seq_len_kv > 0 && p.num_sms > 0,
                  "mqa_logits plan: expected positive sizes, got S = ", p.seq_len, ", S_kv = ", p.seq_len_kv, ", ",
                  p.num_sms, " SMs");
    MqaLogitsConfig c;
    c.num_heads = p.num_heads;
    c.head_dim = p.head_dim;
    c.bf16_logits = p.bf16_logits;
    c.block_q = 256 / p.num_heads;
    c.query_pieces = mqa_logits_query_pieces(p.head_dim);

    // As many KV stages as fit, up to the cap; D = 128 fits 9.
    int stages = kMqaMaxStages;
    while (stages > 2 && mqa_logits_smem_bytes(p.num_heads, p.head_dim, c.query_pieces, stages) > p.max_smem_bytes) --stages;
    TESSERA_CHECK(mqa_logits_smem_bytes(p.num_heads, p.head_dim, c.query_pieces, stages) <= p.max_smem_bytes, "mqa_logits plan: ",
                  mqa_logits_smem_bytes(p.num_heads, p.head_dim, c.query_pieces, stages), " bytes of shared memory needed, the device allows ",
                  p.max_smem_bytes);
    c.num_stages = stages;
    c.smem_bytes = mqa_logits_smem_bytes(p.num_heads, p.head_dim, c.query_pieces, stages);

    // Query blocks are the units; with fewer blocks than SMs, each block's KV rows are cut into splits (at least 8
    // tiles each) so that about two units per SM keep them busy.
    c.num_q_blocks = ceil_div(p.seq_len, c.block_q);
    const std::int64_t kv_tiles = ceil_div(p.seq_len_kv, kMqaBlockKv);
    std::int64_t splits = 1;
    if (c.num_q_blocks < p.num_sms)
        splits = std::clamp<std::int64_t>(ceil_div(2 * p.num_sms, c.num_q_blocks), 1,
                                          std::max<std::int64_t>(1, kv_tiles / 8));
    c.split_len = align_up(ceil_div(p.seq_len_kv, splits), kMqaBlockKv);
    c.num_kv_splits = static_cast<int>(ceil_div(p.seq_len_kv, c.split_len));
    c.num_units = c.num_q_blocks * c.num_kv_splits;
    c.grid = static_cast<int>(std::min<std::int64_t>(p.num_sms, c.num_units));
    return c;
}

int clean_logits_rows_per_block(std::int64_t rows, int num_sms) {
    const std::int64_t blocks = std::max<std::int64_t>(1, 8LL * num_sms);
    return static_cast<int>(std::clamp<std::int64_t>(ceil_div(rows, blocks), 1, 64));
}

std::string MqaLogitsConfig::describe() const {
    return detail::str_cat("mqa_logits H=", num_heads, " D=", head_dim, bf16_logits ? " BF16" : " FP32",
                           " logits", query_pieces ? " (query pieces)" : "", ": ", block_q, " queries x ",
                           kMqaBlockKv, " KV rows per tile, ", num_stages,
                           " stages, ", num_q_blocks, " query blocks x ", num_kv_splits, " KV splits of ", split_len,
                           " rows, ", grid, " CTAs, ", smem_bytes, " B smem");
}

}  // namespace tessera::heuristics
