// Pure heuristics of the SM90 MQA logits kernel (kernels/tessera/sm90/mqa_logits.cuh): ring depth, KV splits and
// grid for a problem. No CUDA, no state: (problem, device facts) -> config, so CPU tests check the choices.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::heuristics {

struct MqaLogitsProblem {
    std::int64_t seq_len = 0;     // S: queries
    std::int64_t seq_len_kv = 0;  // S_kv: KV rows
    int num_heads = 32;           // 32 or 64
    int head_dim = 128;           // 32, 64 or 128
    bool bf16_logits = false;     // else FP32
    int num_sms = 132;
    int max_smem_bytes = 232448;  // the device's opt-in limit per block
};

struct MqaLogitsConfig {
    int num_heads = 32, head_dim = 128;
    bool bf16_logits = false;
    int block_q = 8;               // queries per unit: 256 / num_heads
    int num_stages = 4;            // KV ring depth (tiles of kMqaBlockKv rows)
    bool query_pieces = false;     // the head sum's linear half on the tensor cores (mqa_logits_query_pieces)
    std::int64_t num_q_blocks = 0;
    int num_kv_splits = 1;         // units per query block
    std::int64_t split_len = 0;    // KV rows per split, a multiple of kMqaBlockKv
    std::int64_t num_units = 0;    // num_q_blocks * num_kv_splits
    int grid = 1;                  // persistent CTAs
    int smem_bytes = 0;
    int num_threads() const { return 640; }  // four math warpgroups and the producer's
    std::string describe() const;
};

constexpr int kMqaBlockKv = 128;      // KV rows per tile
constexpr int kMqaMaxStages = 12;     // enough tiles in flight to cover an L2/HBM round trip at D = 32
constexpr int kMqaCleanThreads = 256;

// Whether the kernel computes the linear half of the head reduction on the tensor cores, from four FP8 pieces of each
// query's weighted sum (kernels/tessera/sm90/mqa_query_pieces.cuh): at head dims 32 and 64, where the reduction's
// FFMAs bound a tile; at 128 the tensor cores do already.
bool mqa_logits_query_pieces(int head_dim);

// B rows of a q-group's query pieces after its 128 (query, head) rows: 4 per query of the group (128 / num_heads).
int mqa_logits_piece_rows(int num_heads, bool query_pieces);

// Dynamic shared memory of the kernel (it static_asserts the same formula): two Q stages (two q-groups of 128 head
// rows and the piece rows of head_dim bytes, each padded to 1 KB; 256 FP32 weights, 128 bytes of unit metadata, 8
// piece scales, 8 rows of 36 lane-ordered weights), num_stages KV stages (128 rows + 128 FP32 scales), the barriers;
// rounded up to 1 KB.
int mqa_logits_smem_bytes(int num_heads, int head_dim, bool query_pieces, int num_stages);

// Throws InvalidArgument for heads / head dims the kernel does not have.
MqaLogitsConfig choose_mqa_logits_config(const MqaLogitsProblem& p);

// The clean kernel's rows per block for `rows` rows: one wave of 8 blocks per SM, at most 64 rows a block.
int clean_logits_rows_per_block(std::int64_t rows, int num_sms);

}  // namespace tessera::heuristics
