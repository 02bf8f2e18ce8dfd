// The lightning indexer's non-paged MQA logits on SM90 (DeepGEMM's fp8_fp4_mqa_logits with FP8 inputs):
//     logits[i, j] = sum_h weights[i, h] * ReLU(kv_sf[j] * sum_d q[i, h, d] * kv[j, d])   for j in [ks[i], ke[i]),
// FP8 products accumulated in FP32, FP32 or BF16 logits.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/runtime.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// The logits buffer DeepGEMM returns a view of: rows align(seq_len, 128 / num_heads), row stride (elements)
// align(seq_len_kv + 256, 1024 / elem) in the normal layout (max_seqlen_k == 0), or
// align(align(max_seqlen_k, 256), 1024 / elem) in the compressed one. Rows are 1024-byte aligned.
std::int64_t mqa_logits_buffer_rows(std::int64_t seq_len, int num_heads);
std::int64_t mqa_logits_row_stride(std::int64_t seq_len_kv, std::int64_t max_seqlen_k, DType logits_dtype);

// int32 elements of device scratch fp8_mqa_logits needs (its work counter, zeroed on the stream before each launch).
inline constexpr int kMqaLogitsWorkspaceInts = 1;

// Writes the logits of every query i in [0, S) and KV row j in [ks[i], ke[i]) ∩ [0, S_kv) into `logits`:
//   q        [S, H, D] float8_e4m3, H in {32, 64}, D in {32, 64, 128}, head dim contiguous, heads packed
//            (stride(1) == D), 16-byte row stride and base. Packed FP4 and H in {8, 16} are SM100 features:
//            Unsupported.
//   kv       [S_kv, D] float8_e4m3, row-major with a 16-byte row stride; kv_sf [S_kv] float32 contiguous (per-row
//            dequantisation scales, any sign).
//   weights  [S, H] float32 with stride(1) == 1 and a 16-byte row stride (BF16 weights are SM100-only: Unsupported).
//   cu_seq_len_k_start / _end  int32 [S] contiguous (ks, ke): clamped to [0, S_kv] on the device; ke <= ks is empty.
//   logits   float32 or bfloat16, row-major (stride(1) == 1): [S, S_kv] with column j = KV row j (max_seqlen_k == 0),
//            or [S, max_seqlen_k] with column t = KV row ks[i] + t (max_seqlen_k > 0, KV rows past
//            ks[i] + max_seqlen_k are dropped). Only in-range entries are written; with clean_logits (normal layout
//            only) every other column of [0, S_kv) becomes -inf, by a second kernel on the same stream.
//   workspace int32 with at least kMqaLogitsWorkspaceInts elements on the same device; overwritten.
// Results are bitwise identical from call to call. Throws InvalidArgument / TypeMismatch / Unsupported before
// anything is launched.
void fp8_mqa_logits(const TensorRef& q, const TensorRef& kv, const TensorRef& kv_sf, const TensorRef& weights,
                    const TensorRef& cu_seq_len_k_start, const TensorRef& cu_seq_len_k_end, const TensorRef& logits,
                    const TensorRef& workspace, bool clean_logits, std::int64_t max_seqlen_k, Stream stream);

// The clean kernel alone: every column of logits [rows, cols] (float32 or bfloat16, stride(1) == 1) outside
// [ks[i], ke[i]) becomes -inf; cu_seq_len_k_start may be null (ranges start at 0).
void clean_logits(const TensorRef& logits, const TensorRef* cu_seq_len_k_start, const TensorRef& cu_seq_len_k_end,
                  Stream stream);

// The plan fp8_mqa_logits makes for a problem on `device` ("mqa_logits H=64 D=128 ..."); compiles its kernel.
std::string mqa_logits_config(std::int64_t seq_len, std::int64_t seq_len_kv, int num_heads, int head_dim,
                              bool bf16_logits, int device);

}  // namespace tessera
