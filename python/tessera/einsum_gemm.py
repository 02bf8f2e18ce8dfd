"""DeepGEMM's einsum and fp8_einsum on SM90. BF16: 'bmk,bnk->mn', 'bhr,hdr->bhd' and 'bhd,hdr->bhr', through the BF16 GEMM kernel
(batched over heads, or summed over the batch), or for the last two through a strided-batched cuBLASLt call with
use_cublaslt=True.
"""
import torch

from . import _C
from ._C import InvalidArgument
from ._args import check_tensor as _check, pair
from .cublaslt import _cublaslt_bmm_nt
from .layout import get_mn_major_tma_aligned_tensor

_SUPPORTED = ("bmk,bnk->mn", "bhr,hdr->bhd", "bhd,hdr->bhr")


def _bmk_bnk_mn(a, b, d, c, use_cublaslt):
    """d [M, N] = (c) + sum_s a[s] @ b[s].T: FP32 d accumulates onto c (c = d in place, or copied), BF16 d takes the
    FP32 sum rounded (c must be None)."""
    op = "einsum"
    if use_cublaslt:
        raise InvalidArgument(f"{op}: argument 'use_cublaslt': 'bmk,bnk->mn' runs on tessera's kernel only, got True")
    _check(op, "a", a, (torch.bfloat16,), ndim=3)
    _check(op, "b", b, (torch.bfloat16,), ndim=3)
    _check(op, "d", d, (torch.bfloat16, torch.float32), ndim=2)
    if c is not None:
        _check(op, "c", c, (d.dtype,), ndim=2)
    workspace = None
    if d.dtype == torch.bfloat16 and c is None and a.is_cuda:
        workspace = torch.empty(tuple(d.shape), dtype=torch.float32, device=d.device)
    _C.bf16_bmk_bnk_mn(a, b, d, c, workspace)


def _per_head(expr, a, b, d, c, use_cublaslt):
    """Per head h: 'bhr,hdr->bhd' is d[:, h] = a[:, h] @ b[h].T; 'bhd,hdr->bhr' is d[:, h] = a[:, h] @ b[h]. Both
    run as one batched GEMM over permuted views (no copies): a [H, B, K], b [H, N, K] (K-major, or MN-major for
    'bhd'), d [H, B, N]."""
    op = "einsum"
    if c is not None:
        raise InvalidArgument(f"{op}: argument 'c': expected None for '{expr}' (no accumulation), got a tensor")
    for name, t in (("a", a), ("b", b), ("d", d)):
        _check(op, name, t, (torch.bfloat16,), ndim=3)
        if t.stride(2) != 1 and t.size(2) > 1:
            raise InvalidArgument(f"{op}: argument '{name}': expected stride(2) == 1, got strides {tuple(t.stride())}")
    bsz, h, x = a.shape  # x: r for 'bhr', d for 'bhd'
    if b.size(0) != h:
        raise InvalidArgument(f"{op}: argument 'b': expected {h} heads (from a) in dim 0, got shape {tuple(b.shape)}")
    if expr == "bhr,hdr->bhd":
        if b.size(2) != x:
            raise InvalidArgument(f"{op}: argument 'b': expected [H, D, {x}] (R from a), got shape {tuple(b.shape)}")
        out = (bsz, h, b.size(1))
        b3 = b                      # [H, D(N), R(K)]: K-major
    else:
        if b.size(1) != x:
            raise InvalidArgument(f"{op}: argument 'b': expected [H, {x}, R] (D from a), got shape {tuple(b.shape)}")
        out = (bsz, h, b.size(2))
        b3 = b.transpose(1, 2)      # [H, R(N), D(K)]: MN-major
    if tuple(d.shape) != out:
        raise InvalidArgument(f"{op}: argument 'd': expected shape {out}, got {tuple(d.shape)}")
    if d.numel() == 0:
        return
    if x == 0:
        d.zero_()
        return
    a3, d3 = a.permute(1, 0, 2), d.permute(1, 0, 2)
    if use_cublaslt:
        _cublaslt_bmm_nt(a3, b3, d3)
    else:
        _C.bf16_bmm_nt(a3, b3, d3)


def einsum(expr, a, b, d, c=None, use_cublaslt=False):
    """DeepGEMM's einsum(expr, a, b, d, c=None, use_cublaslt=False): writes d in place."""
    if not isinstance(expr, str):
        raise InvalidArgument(f"einsum: argument 'expr': expected a string, got {type(expr).__name__}")
    e = expr.replace(" ", "")
    if e == "bmk,bnk->mn":
        _bmk_bnk_mn(a, b, d, c, use_cublaslt)
    elif e in _SUPPORTED:
        _per_head(e, a, b, d, c, use_cublaslt)
    else:
        raise InvalidArgument(f"einsum: argument 'expr': unsupported einsum expression {expr!r} (expected one of "
                              f"{', '.join(repr(x) for x in _SUPPORTED)})")


def fp8_einsum(expr, a, b, d, c=None, recipe=(1, 128, 128)):
    """DeepGEMM's fp8_einsum on SM90: 'bhr,hdr->bhd' with a = (x [B, H, R] e4m3, sfx [B, H, ceil(R/128)] FP32), b =
    (y [H, D, R] e4m3, sfy [H, ceil(D/128), ceil(R/128)] FP32), d [B, H, D] BF16: one FP8 GEMM batched over the
    heads (1D2D), reading x and d through permuted views. The other expressions are SM100-only in DeepGEMM."""
    op = "fp8_einsum"
    if not isinstance(expr, str):
        raise InvalidArgument(f"{op}: argument 'expr': expected a string, got {type(expr).__name__}")
    e = expr.replace(" ", "")
    if e in ("bhd,hdr->bhr", "bhd,bhr->hdr"):
        raise NotImplementedError(f"{op}: {expr!r} is SM100-only (DeepGEMM); SM90 supports 'bhr,hdr->bhd'")
    if e != "bhr,hdr->bhd":
        raise InvalidArgument(f"{op}: argument 'expr': unsupported einsum expression {expr!r} (SM90: 'bhr,hdr->bhd')")
    if recipe is not None and tuple(recipe) != (1, 128, 128):
        raise NotImplementedError(f"{op}: argument 'recipe': SM90 supports (1, 128, 128), got {recipe!r}")
    if c is not None:
        raise InvalidArgument(f"{op}: argument 'c': expected None for 'bhr,hdr->bhd' (no accumulation), got a tensor")
    (x, sfx), (y, sfy) = pair(op, "a", a), pair(op, "b", b)
    _check(op, "a", x, (torch.float8_e4m3fn,), ndim=3)
    _check(op, "b", y, (torch.float8_e4m3fn,), ndim=3)
    _check(op, "d", d, (torch.bfloat16,), ndim=3)
    _check(op, "sfa", sfx, (torch.float32,), ndim=3)
    _check(op, "sfb", sfy, (torch.float32,), ndim=3)
    for name, t in (("a", x), ("b", y), ("d", d)):
        if t.stride(-1) != 1 and t.size(-1) > 1:
            raise InvalidArgument(f"{op}: argument '{name}': expected stride(-1) == 1, got strides {tuple(t.stride())}")
    bsz, h, r = x.shape
    if y.size(0) != h or y.size(2) != r:
        raise InvalidArgument(f"{op}: argument 'b': expected [{h}, D, {r}] (H and R from a), got {tuple(y.shape)}")
    out = (bsz, h, y.size(1))
    if tuple(d.shape) != out:
        raise InvalidArgument(f"{op}: argument 'd': expected shape {out}, got {tuple(d.shape)}")
    if tuple(sfx.shape) != (bsz, h, (r + 127) // 128):
        raise InvalidArgument(f"{op}: argument 'sfa': expected shape {(bsz, h, (r + 127) // 128)}, got "
                              f"{tuple(sfx.shape)}")
    if d.numel() == 0:
        return
    if r == 0:
        d.zero_()
        return
    a3, sfa3, d3 = x.permute(1, 0, 2), sfx.permute(1, 0, 2), d.permute(1, 0, 2)
    for _ in range(3):
        status = _C.fp8_bmm_nt(a3, sfa3, y, sfy, d3)
        if status == 0:
            return
        if status == 1:
            sfa3 = get_mn_major_tma_aligned_tensor(sfa3)
        else:
            sfy = sfy.contiguous()
    raise RuntimeError(f"{op}: scale factors could not be brought into the kernel's layout")
