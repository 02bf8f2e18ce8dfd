"""BF16 GEMMs (DeepGEMM's bf16_gemm_{nt,nn,tn,tt}) on SM90: D = C + A·Bᵀ with FP32 accumulation.

A [M, K] and B [N, K] are BF16, each K-major or MN-major: the kernel reads either layout through its TMA maps, so
the nn / tn / tt variants pass transposed views, never copies. d is BF16 or FP32; c, when given, has d's shape and
dtype and is added (c may be d itself).
"""
import torch

from . import _C
from ._args import check_tensor as _check, gemm_nt as _gemm
from ._C import InvalidArgument

def _bf16_gemm(op, a, b, d, c):
    _gemm(op, a, b, d, c, _C.bf16_gemm_nt)


def _bf16_gemm_nt_py(a, b, d, c=None, compiled_dims="nk"):
    """a [M, K], b [N, K]. The general path: tessera.bf16_gemm_nt is _C.bf16_gemm_nt_entry, which launches the common
    cached call itself and hands every other case (a separate c, K = 0, empty outputs, errors) to this function."""
    _bf16_gemm("bf16_gemm_nt", a, b, d, c)


bf16_gemm_nt = _C.bf16_gemm_nt_entry


def bf16_gemm_nn(a, b, d, c=None, compiled_dims="nk"):
    """a [M, K], b given as [K, N]."""
    _check("bf16_gemm_nn", "b", b, (torch.bfloat16,))
    _bf16_gemm("bf16_gemm_nn", a, b.T, d, c)


def bf16_gemm_tn(a, b, d, c=None, compiled_dims="mn"):
    """a given as [K, M], b as [K, N]."""
    _check("bf16_gemm_tn", "a", a, (torch.bfloat16,))
    _check("bf16_gemm_tn", "b", b, (torch.bfloat16,))
    _bf16_gemm("bf16_gemm_tn", a.T, b.T, d, c)


def bf16_gemm_tt(a, b, d, c=None, compiled_dims="mn"):
    """a given as [K, M], b as [N, K]."""
    _check("bf16_gemm_tt", "a", a, (torch.bfloat16,))
    _bf16_gemm("bf16_gemm_tt", a.T, b, d, c)


def m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, compiled_dims="nk", use_psum_layout=False,
                                       ensure_zero_padding=True, expected_m_for_psum_layout=None):
    """a [M, K], b [G, N, K] (K- or MN-major), d [M, N] BF16; grouped_layout int32: the group of each row (-1:
    padding, written as zeros), or with use_psum_layout each group's end row. (ensure_zero_padding: padding rows are
    always zeros here.)"""
    op = "m_grouped_bf16_gemm_nt_contiguous"
    _check(op, "a", a, (torch.bfloat16,))
    _check(op, "b", b, (torch.bfloat16,), ndim=3)
    _check(op, "d", d, (torch.bfloat16,))
    if expected_m_for_psum_layout is not None and not use_psum_layout:
        raise InvalidArgument(f"{op}: argument 'expected_m_for_psum_layout': only with use_psum_layout=True, got "
                              f"{expected_m_for_psum_layout}")
    _C.m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, bool(use_psum_layout),
                                         int(expected_m_for_psum_layout or 0))


def m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout, compiled_dims="nk", use_psum_layout=False,
                                       ensure_zero_padding=True, expected_m_for_psum_layout=None):
    """b given as [G, K, N]."""
    _check("m_grouped_bf16_gemm_nn_contiguous", "b", b, (torch.bfloat16,), ndim=3)
    m_grouped_bf16_gemm_nt_contiguous(a, b.mT, d, grouped_layout, compiled_dims, use_psum_layout,
                                       ensure_zero_padding, expected_m_for_psum_layout)


def m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m, compiled_dims="nk"):
    """a [G, M_max, K], b [G, N, K], d [G, M_max, N] BF16; rows from masked_m[g] on are not written."""
    op = "m_grouped_bf16_gemm_nt_masked"
    _check(op, "a", a, (torch.bfloat16,), ndim=3)
    _check(op, "b", b, (torch.bfloat16,), ndim=3)
    _check(op, "d", d, (torch.bfloat16,), ndim=3)
    _C.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, int(expected_m))


def k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c=None, compiled_dims="mn",
                                       use_psum_layout=False):
    """D[g] = C[g] + A_gᵀ @ B_g (FP32, or BF16) with a [sum K, M], b [sum K, N] row-major BF16 and group g the rows
    [k_0 + ... + k_{g-1}, + k_g) of both; ks_cpu lists each k_g (multiples of 128), grouped_layout holds them on the
    device. c is required (it may be d itself); an empty group leaves C."""
    op = "k_grouped_bf16_gemm_tn_contiguous"
    _check(op, "a", a, (torch.bfloat16,))
    _check(op, "b", b, (torch.bfloat16,))
    _check(op, "d", d, (torch.float32, torch.bfloat16), ndim=3)
    if use_psum_layout:
        raise InvalidArgument(f"{op}: argument 'use_psum_layout': the psum layout is SM100-only; SM90 takes ks_cpu")
    if not isinstance(ks_cpu, (list, tuple)) or not ks_cpu:
        raise InvalidArgument(f"{op}: argument 'ks_cpu': expected a non-empty list of ints, got {ks_cpu!r}")
    if c is None:
        raise InvalidArgument(f"{op}: argument 'c': expected a tensor (D = C + A·B accumulates; it may be d itself), "
                              f"got None")
    _check(op, "c", c, (d.dtype,), ndim=3)
    if tuple(c.shape) != tuple(d.shape):
        raise InvalidArgument(f"{op}: argument 'c': expected shape {tuple(d.shape)} (that of d), got {tuple(c.shape)}")
    _C.k_grouped_bf16_gemm_tn_contiguous(a, b, d, c, [int(k) for k in ks_cpu], grouped_layout)
