// Paged MQA logits on SM90 (DeepGEMM's get_paged_mqa_logits_metadata and fp8_paged_mqa_logits): the weighted-ReLU
// scores of each decode query token against its sequence's FP8 KV cache pages.
//
//   logits[b*next_n + t, j] = sum_h weights[b*next_n + t, h] * ReLU(sf[j] * sum_d q[b, t, h, d] * kv[j, d])
//
// for j < context_lens[b, t], token j of sequence b being slot j % 64 of cache block block_table[b, j / 64]. With
// clean_logits every other column below max_context_len is exactly -inf; without it, those are not written.
// Both functions only enqueue work on `stream` (no host synchronization, no allocation): CUDA-graph safe.
#pragma once

#include <cstdint>

#include "tessera/layout.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// schedule (int32 [num_sms + 1, 2], contiguous, on context_lens' device) := the split of the work over num_sms SMs
// for these context lengths (int32 [B, next_n], contiguous). The content is private to fp8_paged_mqa_logits, which
// must run on num_sms SMs (get_num_sms()); one schedule serves every call with the same context lengths (all layers
// of a step). block_kv must be 64 (32 is SM100-only: Unsupported).
void get_paged_mqa_logits_metadata(const TensorRef& context_lens, int block_kv, int num_sms, const TensorRef& schedule,
                                   Stream stream);

// The row stride (elements) of the buffer whose first max_context_len columns are the logits, as DeepGEMM allocates
// it: align(align(max_context_len, 256), 1024 / element size).
std::int64_t paged_mqa_logits_row_stride(std::int64_t max_context_len, DType logits_dtype);

// logits (FP32 or BF16 [B*next_n, max_context_len], unit column stride, rows 16-byte aligned; the Python API passes
// a view of a [B*next_n, paged_mqa_logits_row_stride(...)] buffer) := the scores above. Arguments:
//   q            E4M3 [B, next_n, H, D] contiguous; next_n in {1, 2}, H in {32, 64}, D = 128 (else Unsupported)
//   kv_cache     uint8 [num_blocks, 64, 1, D + 4]: block i starts i * stride(0) bytes in (a multiple of 16, for TMA)
//                and holds 64 x D E4M3 values token-major, then 64 FP32 scales (non-negative, as amax / 448 is)
//   weights      FP32 [B*next_n, H] contiguous
//   context_lens int32 [B, next_n] contiguous (the lengths the schedule was made for)
//   block_table  int32 [B, max_blocks], unit column stride; entries of pages past a context are not read
//   schedule     int32 [get_num_sms() + 1, 2] from get_paged_mqa_logits_metadata
// Throws InvalidArgument / TypeMismatch / Unsupported before anything is launched.
void fp8_paged_mqa_logits(const TensorRef& q, const TensorRef& kv_cache, const TensorRef& weights,
                          const TensorRef& context_lens, const TensorRef& block_table, const TensorRef& schedule,
                          std::int64_t max_context_len, bool clean_logits, const TensorRef& logits, Stream stream);

}  // namespace tessera
