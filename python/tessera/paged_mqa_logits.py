"""Paged MQA logits (DeepGEMM's get_paged_mqa_logits_metadata, fp8_fp4_paged_mqa_logits, fp8_paged_mqa_logits) on
SM90: the DeepSeek V3.2 lightning indexer's scores of each decode query token against its sequence's paged FP8 KV
cache,

    logits[b * next_n + t, j] = sum_h weights[b * next_n + t, h] * ReLU(sf[j] * q[b, t, h, :] . kv[j, :])

for j < context_lens[b, t]. The result is a [B * next_n, max_context_len] view of a buffer whose rows are
align(align(max_context_len, 256), 1024 / element size) long, as DeepGEMM returns it. With clean_logits=True (which
DeepGEMM refuses on SM90) every other column is exactly -inf; without it those columns are not written.

The schedule from get_paged_mqa_logits_metadata serves every call with the same context lengths (all layers of a
decode step). Nothing here synchronizes with the device or allocates a size read from it, so both calls can be
captured in a CUDA graph.
"""
import torch

from . import _C
from ._args import pair as _pair
from ._C import InvalidArgument, TypeMismatch

_LOGITS_DTYPES = (torch.float32, torch.bfloat16)


def _no_indices(op, indices):
    if indices is not None:
        raise NotImplementedError(f"{op}: argument 'indices': variable-length (indexed) queries are SM100-only; "
                                  f"SM90 takes None")


def get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms, indices=None):
    """context_lens int32 [B, next_n] (CUDA) -> int32 [num_sms + 1, 2] on its device: the split of the work over
    num_sms SMs (the logits call must run on that many: pass get_num_sms())."""
    op = "get_paged_mqa_logits_metadata"
    _no_indices(op, indices)
    if not isinstance(context_lens, torch.Tensor):
        raise TypeMismatch(f"{op}: argument 'context_lens': expected a torch.Tensor, got {type(context_lens).__name__}")
    num_sms = int(num_sms)
    if num_sms < 1:
        raise InvalidArgument(f"{op}: argument 'num_sms': expected >= 1, got {num_sms}")
    schedule = torch.empty((num_sms + 1, 2), dtype=torch.int32, device=context_lens.device)
    _C.paged_mqa_logits_metadata(context_lens, int(block_kv), num_sms, schedule)
    return schedule


def _paged_mqa_logits(op, q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                      clean_logits, logits_dtype):
    if logits_dtype not in _LOGITS_DTYPES:
        raise TypeMismatch(f"{op}: argument 'logits_dtype': expected torch.float32 or torch.bfloat16, got "
                           f"{logits_dtype}")
    if not isinstance(q, torch.Tensor):
        raise TypeMismatch(f"{op}: argument 'q': expected a torch.Tensor, got {type(q).__name__}")
    if q.dim() != 4:
        raise InvalidArgument(f"{op}: argument 'q': expected 4 dimensions [batch, next_n, heads, head_dim], got shape "
                              f"{tuple(q.shape)}")
    max_context_len = int(max_context_len)
    if max_context_len < 0:
        raise InvalidArgument(f"{op}: argument 'max_context_len': expected >= 0, got {max_context_len}")
    stride = _C.paged_mqa_logits_row_stride(max_context_len, logits_dtype == torch.bfloat16)
    rows = q.shape[0] * q.shape[1]
    logits = torch.empty((rows, stride), dtype=logits_dtype, device=q.device)[:, :max_context_len]
    _C.paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                        bool(clean_logits), logits)
    return logits


def fp8_fp4_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                              clean_logits=False, logits_dtype=torch.float32, indices=None):
    """q = (Q E4M3 [B, next_n, H, D], None); kv_cache uint8 [num_blocks, 64, 1, D + 4] (64 tokens of D E4M3 bytes,
    then their 64 FP32 scales, per block); weights FP32 [B * next_n, H]; context_lens int32 [B, next_n]; block_table
    int32 [B, max_blocks]; schedule_meta from get_paged_mqa_logits_metadata. SM90: next_n in {1, 2}, H in {32, 64},
    D = 128, FP8 only (an FP4 q, with scale factors, is SM100-only)."""
    op = "fp8_fp4_paged_mqa_logits"
    _no_indices(op, indices)
    q, q_sf = _pair(op, "q", q)
    if q_sf is not None:
        raise NotImplementedError(f"{op}: argument 'q': FP4 queries (with scale factors) are SM100-only; SM90 takes "
                                  f"(fp8 tensor, None)")
    return _paged_mqa_logits(op, q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                             clean_logits, logits_dtype)


def fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                          clean_logits=False, indices=None):
    """The legacy form: q is the E4M3 tensor itself, the logits are FP32."""
    op = "fp8_paged_mqa_logits"
    _no_indices(op, indices)
    return _paged_mqa_logits(op, q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                             clean_logits, torch.float32)
