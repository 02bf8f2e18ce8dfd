"""DeepGEMM's `legacy` names (Triton BF16 grouped GEMMs there), routed to tessera's BF16 kernels: no Triton needed.

The a-fused / b-fused variants read one operand's rows through an index list; SM90 TMA has no row gather, so those
rows are gathered into a temporary first (one extra read and write of that operand). The k-grouped variants read the
groups' ranges from the device (k_start, k_end): one host synchronization per call, as ks_cpu is what the kernel
plans with.
"""
import torch

from . import _C
from ._C import InvalidArgument
from ._args import check_tensor as _check

__all__ = [
    "m_grouped_bf16_gemm_nt_contiguous_tl", "m_grouped_bf16_gemm_nn_contiguous_tl",
    "a_fused_m_grouped_bf16_gemm_nt_contiguous_tl", "a_fused_m_grouped_bf16_gemm_nn_contiguous_tl",
    "a_fused_k_grouped_bf16_gemm_tn_contiguous_tl", "b_fused_k_grouped_bf16_gemm_tn_contiguous_tl",
]


def _m_grouped_tl(a, b, d, m_indices, op="m_grouped_bf16_gemm_nt_contiguous_tl"):
    _check(op, "a", a, (torch.bfloat16,))
    _check(op, "b", b, (torch.bfloat16,), ndim=3)
    _check(op, "d", d, (torch.bfloat16,))
    _C.m_grouped_bf16_gemm_contiguous_tl(a, b, d, m_indices)


def _a_fused_m_grouped_tl(a, b, d, mappings):
    """Row r of the product uses a[m_row_indices[r]] and expert m_indices[r] (-1: a padding row, written as 0)."""
    op = "a_fused_m_grouped_bf16_gemm_nt_contiguous_tl"
    m_indices, m_row_indices = _pair(op, "mappings", mappings)
    if m_indices.numel() != m_row_indices.numel():
        raise InvalidArgument(f"{op}: argument 'mappings': expected m_indices and m_row_indices of one length, got "
                              f"{m_indices.numel()} and {m_row_indices.numel()}")
    if d.size(0) == 0:
        return
    # A negative row index reads a zero row (the product row is 0 even where m_indices names an expert), not a[0].
    _m_grouped_tl(_gather_rows(a, m_row_indices.long()), b, d, m_indices, op)


def _gather_rows(x, idx):
    """x's rows idx[i], a zero row where idx[i] < 0."""
    out = x.index_select(0, idx.clamp(min=0))
    return torch.where((idx >= 0).unsqueeze(1), out, torch.zeros_like(out))


def _k_grouped_tl(op, a, b, d, handle, acc, fused):
    """d[g] (+)= a_gᵀ @ b_g over rows k in [k_start[g], k_end[g]); the fused operand's row k is its row
    k_indices[k] (negative: a zero row)."""
    k_indices, k_start, k_end = _triple(op, "handle", handle)
    starts, ends = k_start.tolist(), k_end.tolist()
    if len(starts) != d.size(0) or len(ends) != len(starts):
        raise InvalidArgument(f"{op}: argument 'handle': expected k_start and k_end of {d.size(0)} groups (d's), got "
                              f"{len(starts)} and {len(ends)}")
    ks = [max(e - s, 0) for s, e in zip(starts, ends)]
    index = torch.cat([torch.arange(s, s + k, device=a.device) for s, k in zip(starts, ks)] or
                      [torch.zeros(0, dtype=torch.long, device=a.device)])
    gathered = k_indices.index_select(0, index).long()
    a_g = _gather_rows(a, gathered) if fused == "a" else a.index_select(0, index)
    b_g = _gather_rows(b, gathered) if fused == "b" else b.index_select(0, index)
    _check(op, "d", d, (torch.float32, torch.bfloat16), ndim=3)
    out = d if d.dtype == torch.float32 else d.float()
    if not acc:
        out.zero_()
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device=a.device)
    _C.k_grouped_bf16_gemm_tn_contiguous_tl(a_g, b_g, out, ks, ks_tensor)
    if out is not d:
        d.copy_(out)


def _pair(op, name, x):
    try:
        first, second = x
    except (TypeError, ValueError):
        raise InvalidArgument(f"{op}: argument '{name}': expected a pair of int32 tensors, got {type(x).__name__}") \
            from None
    return first, second


def _triple(op, name, x):
    try:
        first, second, third = x
    except (TypeError, ValueError):
        raise InvalidArgument(f"{op}: argument '{name}': expected (k_indices, k_start, k_end), got "
                              f"{type(x).__name__}") from None
    return first, second, third


def m_grouped_bf16_gemm_nt_contiguous_tl(a, b, d, m_indices):
    _m_grouped_tl(a, b, d, m_indices)


def m_grouped_bf16_gemm_nn_contiguous_tl(a, b, d, m_indices):
    _m_grouped_tl(a, b.mT, d, m_indices)


def a_fused_m_grouped_bf16_gemm_nt_contiguous_tl(a, b, d, mappings):
    _a_fused_m_grouped_tl(a, b, d, mappings)


def a_fused_m_grouped_bf16_gemm_nn_contiguous_tl(a, b, d, mappings):
    _a_fused_m_grouped_tl(a, b.mT, d, mappings)


def a_fused_k_grouped_bf16_gemm_tn_contiguous_tl(a, b, d, handle, acc):
    _k_grouped_tl("a_fused_k_grouped_bf16_gemm_tn_contiguous_tl", a, b, d, handle, acc, "a")


def b_fused_k_grouped_bf16_gemm_tn_contiguous_tl(a, b, d, handle, acc):
    _k_grouped_tl("b_fused_k_grouped_bf16_gemm_tn_contiguous_tl", a, b, d, handle, acc, "b")
