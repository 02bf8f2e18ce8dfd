"""FP8 GEMMs with fine-grained scaling (DeepGEMM's fp8_gemm_{nt,nn,tn,tt} and the fp8_fp4_* names), SM90.

1D2D, recipe (1, 128, 128), the default: D (BF16) = A·Bᵀ, A scaled per (row, 128 K), B per 128x128 block.
1D1D, recipe (1, 1, 128): D (FP32) = C + A·Bᵀ, both scaled per (row, 128 K); C is required (it may be D itself).
A and B must be K-major after the variant's transposes (SM90 FP8 tensor cores read K-major operands).
"""
import torch

from . import _C
from ._C import InvalidArgument
from ._args import pair
from .layout import transform_sf_into_required_layout

__all__ = ["fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt",
           "fp8_fp4_gemm_nt", "fp8_fp4_gemm_nn", "fp8_fp4_gemm_tn", "fp8_fp4_gemm_tt"]

_RECIPES = {(1, 128, 128): 0, (1, 1, 128): 1}
_SPLIT_RECIPES = {((1, 128), (128, 128)): 0, ((1, 128), (1, 128)): 1}


def _recipe_kind(recipe, recipe_a, recipe_b, sfa, sfb):
    if recipe is not None:
        if recipe_a is not None or recipe_b is not None:
            raise InvalidArgument("fp8_gemm_nt: pass either 'recipe' or both 'recipe_a' and 'recipe_b', not both")
        kind = _RECIPES.get(tuple(recipe))
    elif recipe_a is not None or recipe_b is not None:
        if recipe_a is None or recipe_b is None:
            raise InvalidArgument("fp8_gemm_nt: 'recipe_a' and 'recipe_b' must be given together")
        kind = _SPLIT_RECIPES.get((tuple(recipe_a), tuple(recipe_b)))
    else:
        for name, sf in (("sfa", sfa), ("sfb", sfb)):
            if sf.dtype != torch.float32:
                raise NotImplementedError(f"fp8_gemm_nt: argument '{name}': SM90 takes FP32 scale factors, got {sf.dtype}")
        kind = 0
    if kind is None:
        raise NotImplementedError(f"fp8_gemm_nt: unknown recipe {recipe or (recipe_a, recipe_b)}; SM90 supports "
                                  f"(1, 128, 128) (BF16 out) and (1, 1, 128) (FP32 out with C)")
    return kind


def _fix_layout(status, a, sfa, b, sfb, kind):
    m, k = a.shape
    n = b.shape[0]
    if status == 1:
        sfa = transform_sf_into_required_layout(sfa, m, k, (1, 128))
    elif status == 2:
        sfb = transform_sf_into_required_layout(sfb, n, k, (1, 128)) if kind else sfb.contiguous()
    return sfa, sfb


def _fp8_gemm_nt_py(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="nk",
                    disable_ue8m0_cast=False):
    """D = C + A @ Bᵀ with a = (A [M, K] e4m3, SFA), b = (B [N, K] e4m3, SFB). Writes d in place.

    The general path; tessera.fp8_gemm_nt is _C.fp8_gemm_nt_entry, which launches the common cached call itself and
    hands everything else to this function."""
    (a, sfa), (b, sfb) = pair("fp8_gemm_nt", "a", a), pair("fp8_gemm_nt", "b", b)
    kind = _recipe_kind(recipe, recipe_a, recipe_b, sfa, sfb)
    separate_c = None  # 1D1D's C when it is not d itself: the C++ op copies it into d after every check
    if kind == 1:
        if c is None:
            raise NotImplementedError("fp8_gemm_nt: FP32 output (recipe (1, 1, 128)) computes D = C + A·Bᵀ and needs "
                                      "'c' (it may be d itself); BF16 output uses recipe (1, 128, 128)")
        if c.data_ptr() != d.data_ptr():
            if c.shape != d.shape or c.dtype != d.dtype:
                raise InvalidArgument(f"fp8_gemm_nt: argument 'c': expected shape {tuple(d.shape)} and dtype {d.dtype} "
                                 f"(those of d), got {tuple(c.shape)} {c.dtype}")
            separate_c = c
        elif c.stride() != d.stride() or c.shape != d.shape:
            raise InvalidArgument("fp8_gemm_nt: argument 'c': shares storage with d but differs in shape or strides")
    elif c is not None:
        raise NotImplementedError("fp8_gemm_nt: accumulating into a BF16 output (c with recipe (1, 128, 128)) is not "
                                  "supported on SM90; use FP32 output with recipe (1, 1, 128)")
    if a.dim() == 2 and a.shape[1] == 0 and d.numel():  # K = 0: the product is empty (D = C, or zeros)
        if kind == 0:
            d.zero_()
        elif separate_c is not None:
            d.copy_(separate_c)
        return
    for _ in range(3):
        status = _C.fp8_gemm_nt(a, sfa, b, sfb, d, kind, separate_c)
        if status == 0:
            return
        sfa, sfb = _fix_layout(status, a, sfa, b, sfb, kind)
    raise RuntimeError("fp8_gemm_nt: scale factors could not be brought into the kernel's layout")


fp8_gemm_nt = _C.fp8_gemm_nt_entry


def fp8_gemm_nt_skip_head_mid(a, b, d, head_splits, recipe=None, compiled_dims="nk", disable_ue8m0_cast=False):
    """fp8_gemm_nt (1D2D) whose product [M, N] lands in d [M, N / (l + r) * (l + m + r)] head by head, with
    head_splits = (l, m, r): each head's l columns, then m columns of d left untouched, then its r columns."""
    op = "fp8_gemm_nt_skip_head_mid"
    (a, sfa), (b, sfb) = pair(op, "a", a), pair(op, "b", b)
    if recipe is not None and tuple(recipe) != (1, 128, 128):
        raise NotImplementedError(f"{op}: argument 'recipe': SM90 supports (1, 128, 128) (BF16 out), got {recipe!r}")
    try:
        left, mid, right = (int(x) for x in head_splits)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{op}: argument 'head_splits': expected (left, mid, right), got {head_splits!r}") \
            from None
    for _ in range(3):
        status = _C.fp8_gemm_nt_skip_head_mid(a, sfa, b, sfb, d, left, mid, right)
        if status == 0:
            return
        sfa, sfb = _fix_layout(status, a, sfa, b, sfb, 0)
    raise RuntimeError(f"{op}: scale factors could not be brought into the kernel's layout")


def _t(op, name, operand):
    x, sf = pair(op, name, operand)
    return x.transpose(0, 1), sf.transpose(0, 1)


def fp8_gemm_nn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="nk",
                disable_ue8m0_cast=False):
    """b given as [K, N]: a transposed view is passed to the NT kernel (must then be K-major)."""
    fp8_gemm_nt(a, _t("fp8_gemm_nn", "b", b), d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)


def fp8_gemm_tn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="mn",
                disable_ue8m0_cast=False):
    """a given as [K, M] and b as [K, N]."""
    fp8_gemm_nt(_t("fp8_gemm_tn", "a", a), _t("fp8_gemm_tn", "b", b), d, c, recipe, recipe_a, recipe_b, compiled_dims,
                disable_ue8m0_cast)


def fp8_gemm_tt(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="mn",
                disable_ue8m0_cast=False):
    """a given as [K, M], b as [N, K]."""
    fp8_gemm_nt(_t("fp8_gemm_tt", "a", a), b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)


fp8_fp4_gemm_nt, fp8_fp4_gemm_nn, fp8_fp4_gemm_tn, fp8_fp4_gemm_tt = fp8_gemm_nt, fp8_gemm_nn, fp8_gemm_tn, fp8_gemm_tt
