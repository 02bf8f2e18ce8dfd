"""Non-paged MQA logits (DeepGEMM's fp8_fp4_mqa_logits and fp8_mqa_logits) on SM90: the DeepSeek V3.2 lightning
indexer's scores of each query token against a range of FP8 KV rows,

    logits[i, j] = sum_h weights[i, h] * ReLU(kv_sf[j] * q[i, h, :] . kv[j, :])    for ks[i] <= j < ke[i],

with FP32 accumulation. As DeepGEMM returns them, the logits are a view of a buffer with 1024-byte aligned rows:
[S, S_kv] (column j = KV row j) when max_seqlen_k == 0, where clean_logits=True makes every other column exactly
-inf; or [S, max_seqlen_k] (column t = KV row ks[i] + t, clean_logits must be False) when max_seqlen_k > 0. Columns
outside a row's range are not written otherwise. Repeated calls give bitwise identical logits.

Nothing here synchronizes with the device, so a call can be captured in a CUDA graph.
"""
import torch

from . import _C
from ._args import pair as _pair
from ._C import InvalidArgument, TypeMismatch

_LOGITS_DTYPES = (torch.float32, torch.bfloat16)


def fp8_fp4_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0,
                        logits_dtype=torch.float32):
    """q = (Q E4M3 [S, H, D], None) with H in {32, 64}, D in {32, 64, 128}; kv = (KV E4M3 [S_kv, D], kv_sf FP32
    [S_kv]); weights FP32 [S, H]; cu_seq_len_k_start / _end int32 [S]. FP4 inputs (q with scale factors), 8 or 16
    heads and BF16 weights are SM100-only and raise NotImplementedError (a RuntimeError, as DeepGEMM raises)."""
    op = "fp8_fp4_mqa_logits"
    q, q_sf = _pair(op, "q", q)
    if q_sf is not None:
        raise NotImplementedError(f"{op}: argument 'q': FP4 queries and KV (with scale factors) are SM100-only; SM90 "
                                  f"takes (float8_e4m3fn tensor, None)")
    kv, kv_sf = _pair(op, "kv", kv)
    if logits_dtype not in _LOGITS_DTYPES:
        raise TypeMismatch(f"{op}: argument 'logits_dtype': expected torch.float32 or torch.bfloat16, got "
                           f"{logits_dtype}")
    for name, t in (("q", q), ("kv", kv)):
        if not isinstance(t, torch.Tensor):
            raise TypeMismatch(f"{op}: argument '{name}': expected a torch.Tensor, got {type(t).__name__}")
    if q.dim() != 3:
        raise InvalidArgument(f"{op}: argument 'q': expected 3 dimensions [seq_len, heads, head_dim], got shape "
                              f"{tuple(q.shape)}")
    if kv.dim() != 2:
        raise InvalidArgument(f"{op}: argument 'kv': expected 2 dimensions [seq_len_kv, head_dim], got shape "
                              f"{tuple(kv.shape)}")
    max_seqlen_k = int(max_seqlen_k)
    if max_seqlen_k < 0:
        raise InvalidArgument(f"{op}: argument 'max_seqlen_k': expected 0 (normal layout) or > 0 (compressed), got "
                              f"{max_seqlen_k}")
    if clean_logits and max_seqlen_k > 0:
        raise InvalidArgument(f"{op}: argument 'clean_logits': expected False with the compressed layout "
                              f"(max_seqlen_k = {max_seqlen_k}), got True")
    seq_len, num_heads = q.shape[0], q.shape[1]
    seq_len_kv = kv.shape[0]
    cols = max_seqlen_k if max_seqlen_k > 0 else seq_len_kv
    # DeepGEMM's buffer: rows aligned to its query block (128 / heads), 1024-byte aligned row stride.
    rows = _C.mqa_logits_buffer_rows(seq_len, num_heads) if num_heads > 0 and 128 % num_heads == 0 else seq_len
    stride = _C.mqa_logits_row_stride(seq_len_kv, max_seqlen_k, logits_dtype == torch.bfloat16)
    logits = torch.empty((rows, stride), dtype=logits_dtype, device=q.device)[:seq_len, :cols]
    # The kernel's work counter, zeroed on the stream by the op.
    workspace = torch.empty((1,), dtype=torch.int32, device=q.device)
    _C.mqa_logits(q, kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, logits, workspace,
                  bool(clean_logits), max_seqlen_k)
    return logits


def fp8_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0):
    """DeepGEMM's legacy form: q a plain E4M3 tensor [S, H, D], FP32 logits."""
    if not isinstance(q, torch.Tensor):
        raise TypeMismatch(f"fp8_mqa_logits: argument 'q': expected a torch.Tensor, got {type(q).__name__}")
    return fp8_fp4_mqa_logits((q, None), kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits,
                               max_seqlen_k, torch.float32)
