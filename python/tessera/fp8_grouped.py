"""Grouped FP8 GEMMs (DeepGEMM's m_grouped_fp8_gemm_{nt,nn}_contiguous, m_grouped_fp8_gemm_nt_masked,
k_grouped_fp8_gemm_{nt,tn}_contiguous and the fp8_fp4_* names), SM90.

M-grouped (MoE forward), recipe (1, 128, 128) only: D (BF16) = A·B[g]ᵀ, A scaled per (row, 128 K), B per 128x128
block of each expert. The contiguous layout maps rows to experts through per-row ids (-1 = padding, whose D rows
are written as zeros) or, with use_psum_layout, through cumulative group ends. The masked layout computes the first
masked_m[g] rows of each group (read on the device, so CUDA graphs can change it) and leaves the rest of D unwritten.
K-grouped (MoE weight gradient), recipe (1, 1, 128) only: D[g] (FP32) = C[g] + A_g·B_gᵀ, with A_g [M, k_g] and
B_g [N, k_g] stored back to back.

The checks here name the argument and the expectation before anything touches CUDA; the C++ side re-validates
everything (device, strides, alignment) and returns a status when a scale tensor must first be brought into the
kernel's layout.
"""
import operator

import torch

from . import _C
from ._C import InvalidArgument, TypeMismatch
from ._args import pair as _pair
from .layout import (get_mk_alignment_for_contiguous_layout, get_mn_major_tma_aligned_tensor,
                     transform_sf_into_required_layout)

__all__ = [
    "m_grouped_fp8_gemm_nt_contiguous", "m_grouped_fp8_gemm_nn_contiguous", "m_grouped_fp8_gemm_nt_masked",
    "k_grouped_fp8_gemm_nt_contiguous", "k_grouped_fp8_gemm_tn_contiguous",
    "m_grouped_fp8_fp4_gemm_nt_contiguous", "m_grouped_fp8_fp4_gemm_nn_contiguous",
    "m_grouped_fp8_fp4_gemm_nt_masked", "fp8_m_grouped_gemm_nt_masked",
]

_E4M3 = torch.float8_e4m3fn
_MAX_TRIES = 3  # at most one SFA and one SFB transformation, then the launch


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _tensor(op, name, t, dtype, ndim=None):
    """t must be a torch tensor of `dtype` with `ndim` dimensions (None: any)."""
    if not isinstance(t, torch.Tensor):
        raise TypeMismatch(f"{op}: argument '{name}': expected a torch.Tensor, got {type(t).__name__}")
    if t.dtype != dtype:
        if dtype == _E4M3 and (t.dtype == torch.int8 or "float4" in str(t.dtype)):
            raise NotImplementedError(f"{op}: argument '{name}': FP4 operands ({_dtype_name(t.dtype)}) are "
                                      f"SM100-only; SM90 takes float8_e4m3fn")
        if dtype == torch.float32 and t.dtype == torch.int32:
            raise NotImplementedError(f"{op}: argument '{name}': packed UE8M0 (int32) scale factors are SM100-only; "
                                      f"SM90 takes FP32 scale factors")
        raise TypeMismatch(f"{op}: argument '{name}': expected dtype {_dtype_name(dtype)}, got {_dtype_name(t.dtype)}")
    if ndim is not None and t.dim() != ndim:
        raise InvalidArgument(f"{op}: argument '{name}': expected {ndim} dimensions, got shape {tuple(t.shape)}")
    return t


def _expect_shape(op, name, t, expected, what=""):
    if tuple(t.shape) != tuple(expected):
        raise InvalidArgument(f"{op}: argument '{name}': expected shape {tuple(expected)}{what}, got {tuple(t.shape)}")


def _int_layout(op, name, t, numel, what):
    _tensor(op, name, t, torch.int32)
    if t.dim() != 1 or t.numel() != numel:
        raise InvalidArgument(f"{op}: argument '{name}': expected a 1-D int32 tensor of {numel} elements ({what}), "
                         f"got shape {tuple(t.shape)}")
    if not t.is_contiguous():
        raise InvalidArgument(f"{op}: argument '{name}': expected a contiguous tensor, got strides {t.stride()}")


def _int_arg(op, name, value, minimum):
    """A Python int (or anything with __index__, not bool) >= minimum."""
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)
    except TypeError:
        raise InvalidArgument(f"{op}: argument '{name}': expected an int >= {minimum}, got {value!r}") from None
    if value < minimum:
        raise InvalidArgument(f"{op}: argument '{name}': expected an int >= {minimum}, got {value}")
    return value


def _cdiv(x, y):
    return -(-x // y)


def _check_1d2d_recipe(op, recipe, recipe_a, recipe_b):
    """The m-grouped kernels on SM90 are 1D2D only: recipe (1, 128, 128) or recipe_a=(1, 128), recipe_b=(128, 128)."""
    if recipe is not None:
        if recipe_a is not None or recipe_b is not None:
            raise InvalidArgument(f"{op}: pass either 'recipe' or both 'recipe_a' and 'recipe_b', not both")
        ok, given = tuple(recipe) == (1, 128, 128), f"recipe={tuple(recipe)}"
    elif recipe_a is not None or recipe_b is not None:
        if recipe_a is None or recipe_b is None:
            raise InvalidArgument(f"{op}: 'recipe_a' and 'recipe_b' must be given together")
        ok = (tuple(recipe_a), tuple(recipe_b)) == ((1, 128), (128, 128))
        given = f"recipe_a={tuple(recipe_a)}, recipe_b={tuple(recipe_b)}"
    else:
        return
    if not ok:
        raise NotImplementedError(f"{op}: argument 'recipe': unsupported {given}; the SM90 m-grouped FP8 GEMMs support "
                                  f"only recipe (1, 128, 128) (recipe_a=(1, 128), recipe_b=(128, 128)): A scaled per "
                                  f"(row, 128 K), B per 128x128 block, BF16 output")


def _launch(op, call, fix_sfa, fix_sfb, sfa, sfb):
    """Calls the kernel entry; status 1/2 = sfa/sfb must first be brought into the kernel's layout, then retry."""
    for _ in range(_MAX_TRIES):
        status = call(sfa, sfb)
        if status == 0:
            return
        if status == 1:
            sfa = fix_sfa(sfa)
        elif status == 2:
            sfb = fix_sfb(sfb)
        else:
            raise RuntimeError(f"{op}: unexpected status {status} from the kernel entry")
    raise RuntimeError(f"{op}: scale factors could not be brought into the kernel's layout")


# ----------------------------------------------------------------------------------------------------------------
# M-grouped, contiguous layout
# ----------------------------------------------------------------------------------------------------------------

def _m_grouped_contiguous(op, a, sfa, b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, use_psum_layout,
                          expected_m_for_psum_layout):
    _check_1d2d_recipe(op, recipe, recipe_a, recipe_b)
    use_psum_layout = bool(use_psum_layout)
    if expected_m_for_psum_layout is not None and not use_psum_layout:
        raise InvalidArgument(f"{op}: argument 'expected_m_for_psum_layout': only meaningful with use_psum_layout=True, "
                         f"got {expected_m_for_psum_layout!r} with use_psum_layout=False")
    expected_m = 0 if expected_m_for_psum_layout is None else \
        _int_arg(op, "expected_m_for_psum_layout", expected_m_for_psum_layout, 0)
    _tensor(op, "a", a, _E4M3, 2)
    _tensor(op, "b", b, _E4M3, 3)
    _tensor(op, "sfa", sfa, torch.float32)
    _tensor(op, "sfb", sfb, torch.float32)
    _tensor(op, "d", d, torch.bfloat16, 2)
    m, k = a.shape
    g, n, k_b = b.shape
    if k_b != k:
        raise InvalidArgument(f"{op}: argument 'b': expected [G, N, K] with K = {k} (from a), got shape {tuple(b.shape)}")
    if g <= 0 or n <= 0 or k <= 0:
        raise InvalidArgument(f"{op}: argument 'b': expected G, N and K > 0, got shape [G, N, K] = {list(b.shape)}")
    _expect_shape(op, "d", d, (m, n), " ([M, N])")
    _expect_shape(op, "sfa", sfa, (m, _cdiv(k, 128)), " ([M, ceil(K/128)])")
    _expect_shape(op, "sfb", sfb, (g, _cdiv(n, 128), _cdiv(k, 128)), " ([G, ceil(N/128), ceil(K/128)])")
    if use_psum_layout:
        _int_layout(op, "grouped_layout", grouped_layout, g, "cumulative end row of each group, use_psum_layout")
    else:
        _int_layout(op, "grouped_layout", grouped_layout, m, "expert id of each row of a, -1 for padding")
    if m == 0:
        return
    kernel = _C.m_grouped_fp8_gemm_nt_contiguous
    _launch(op, lambda sa, sb: kernel(a, sa, b, sb, d, grouped_layout, use_psum_layout, expected_m),
            lambda sa: transform_sf_into_required_layout(sa, m, k, (1, 128)), lambda sb: sb.contiguous(), sfa, sfb)


def m_grouped_fp8_gemm_nt_contiguous(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None,
                                     compiled_dims="nk", disable_ue8m0_cast=False, use_psum_layout=False,
                                     ensure_zero_padding=True, expected_m_for_psum_layout=None):
    """D[r] = A[r] @ B[g(r)]ᵀ with a = (A [M, K] e4m3, SFA [M, ceil(K/128)]), b = (B [G, N, K] e4m3,
    SFB [G, ceil(N/128), ceil(K/128)]), d [M, N] BF16, written in place.

    grouped_layout (int32): the expert of each row ([M], -1 = padding: that D row is written as zeros), or with
    use_psum_layout the cumulative end row of each group ([G]; group g starts at align(end[g-1], 128), rows in the
    gaps are not part of the result). compiled_dims, disable_ue8m0_cast and ensure_zero_padding are accepted and
    have no effect on SM90.
    """
    op = "m_grouped_fp8_gemm_nt_contiguous"
    (a, sfa), (b, sfb) = _pair(op, "a", a), _pair(op, "b", b)
    _m_grouped_contiguous(op, a, sfa, b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, use_psum_layout,
                          expected_m_for_psum_layout)


def m_grouped_fp8_gemm_nn_contiguous(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None,
                                     compiled_dims="nk", disable_ue8m0_cast=False, use_psum_layout=False,
                                     ensure_zero_padding=True):
    """b given as (B [G, K, N], SFB [G, ceil(K/128), ceil(N/128)]): transposed views (dims 1 and 2, no copy) go to
    the NT kernel, so B must be a transposed view of a K-major [G, N, K] buffer."""
    op = "m_grouped_fp8_gemm_nn_contiguous"
    (a, sfa), (b, sfb) = _pair(op, "a", a), _pair(op, "b", b)
    _tensor(op, "a", a, _E4M3, 2)
    _tensor(op, "b", b, _E4M3, 3)
    _tensor(op, "sfb", sfb, torch.float32, 3)
    k = a.shape[1]
    if b.shape[1] != k:
        raise InvalidArgument(f"{op}: argument 'b': expected [G, K, N] with K = {k} (from a), got shape {tuple(b.shape)}")
    g, _, n = b.shape
    _expect_shape(op, "sfb", sfb, (g, _cdiv(k, 128), _cdiv(n, 128)), " ([G, ceil(K/128), ceil(N/128)])")
    _m_grouped_contiguous(op, a, sfa, b.transpose(1, 2), sfb.transpose(1, 2), d, grouped_layout, recipe, recipe_a,
                          recipe_b, use_psum_layout, None)


# ----------------------------------------------------------------------------------------------------------------
# M-grouped, masked layout
# ----------------------------------------------------------------------------------------------------------------

def m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected_m, recipe=None, recipe_a=None, recipe_b=None,
                                 compiled_dims="nk", disable_ue8m0_cast=False):
    """For each group g: D[g, :masked_m[g]] = A[g, :masked_m[g]] @ B[g]ᵀ; rows from masked_m[g] on are not written.

    a = (A [G, M_max, K] e4m3, SFA [G, M_max, ceil(K/128)]), b = (B [G, N, K] e4m3, SFB [G, ceil(N/128),
    ceil(K/128)]), d [G, M_max, N] BF16. masked_m: int32 CUDA tensor [G] with 0 <= masked_m[g] <= M_max, read on
    the device (CUDA-graph friendly). expected_m: a positive int, the expected rows per group (a performance hint).
    """
    op = "m_grouped_fp8_gemm_nt_masked"
    (a, sfa), (b, sfb) = _pair(op, "a", a), _pair(op, "b", b)
    _check_1d2d_recipe(op, recipe, recipe_a, recipe_b)
    expected_m = _int_arg(op, "expected_m", expected_m, 1)
    _tensor(op, "a", a, _E4M3, 3)
    _tensor(op, "b", b, _E4M3, 3)
    _tensor(op, "sfa", sfa, torch.float32)
    _tensor(op, "sfb", sfb, torch.float32)
    _tensor(op, "d", d, torch.bfloat16, 3)
    g, m_max, k = a.shape
    n = b.shape[1]
    if b.shape[0] != g or b.shape[2] != k:
        raise InvalidArgument(f"{op}: argument 'b': expected [G, N, K] with G = {g}, K = {k} (from a), got shape "
                         f"{tuple(b.shape)}")
    if g <= 0 or m_max <= 0 or n <= 0 or k <= 0:
        raise InvalidArgument(f"{op}: arguments 'a', 'b': expected G, M_max, N and K > 0, got G = {g}, M_max = {m_max}, "
                         f"N = {n}, K = {k}")
    _expect_shape(op, "d", d, (g, m_max, n), " ([G, M_max, N])")
    _expect_shape(op, "sfa", sfa, (g, m_max, _cdiv(k, 128)), " ([G, M_max, ceil(K/128)])")
    _expect_shape(op, "sfb", sfb, (g, _cdiv(n, 128), _cdiv(k, 128)), " ([G, ceil(N/128), ceil(K/128)])")
    _int_layout(op, "masked_m", masked_m, g, "rows to compute in each group")
    kernel = getattr(_C, op)
    _launch(op, lambda sa, sb: kernel(a, sa, b, sb, d, masked_m, expected_m),
            lambda sa: transform_sf_into_required_layout(sa, m_max, k, (1, 128), num_groups=g),
            lambda sb: sb.contiguous(), sfa, sfb)


# ----------------------------------------------------------------------------------------------------------------
# K-grouped (weight gradients)
# ----------------------------------------------------------------------------------------------------------------

def _check_ks(op, ks_cpu, num_groups, alignment):
    """ks_cpu: a non-empty list of per-group K, each >= 0 and a multiple of `alignment`, one per group."""
    if not isinstance(ks_cpu, (list, tuple)) or len(ks_cpu) == 0:
        raise InvalidArgument(f"{op}: argument 'ks_cpu': expected a non-empty list of per-group K (ints), got "
                         f"{ks_cpu!r}")
    ks = []
    for i, k in enumerate(ks_cpu):
        try:
            if isinstance(k, bool):
                raise TypeError
            k = operator.index(k)
        except TypeError:
            raise InvalidArgument(f"{op}: argument 'ks_cpu': expected ints, got {k!r} at index {i}") from None
        if k < 0 or k % alignment:
            raise InvalidArgument(f"{op}: argument 'ks_cpu': expected every K >= 0 and a multiple of {alignment}, got "
                             f"{k} at index {i}")
        ks.append(k)
    if len(ks) != num_groups:
        raise InvalidArgument(f"{op}: argument 'ks_cpu': expected one K per group ({num_groups} groups, d.shape[0]), got "
                         f"{len(ks)}")
    return ks


def _check_c(op, c, d, required):
    """Validates c against d (nothing is written). Returns True when c must be copied into d first."""
    if c is None:
        if required:
            raise InvalidArgument(f"{op}: argument 'c': expected a tensor (D = C + A·Bᵀ in FP32 accumulates onto C; "
                                  f"it may be d itself), got None")
        return False
    if not isinstance(c, torch.Tensor):
        raise TypeMismatch(f"{op}: argument 'c': expected a torch.Tensor or None, got {type(c).__name__}")
    if c.data_ptr() == d.data_ptr() and c.numel():
        if c.stride() != d.stride() or c.shape != d.shape:
            raise InvalidArgument(f"{op}: argument 'c': shares storage with d but differs in shape or strides")
        return False
    if c.shape != d.shape or c.dtype != d.dtype:
        raise InvalidArgument(f"{op}: argument 'c': expected shape {tuple(d.shape)} and dtype {_dtype_name(d.dtype)} "
                         f"(those of d), got {tuple(c.shape)} {_dtype_name(c.dtype)}")
    if not c.is_contiguous():
        raise InvalidArgument(f"{op}: argument 'c': expected a contiguous tensor, got strides {c.stride()}")
    return True


def _k_grouped_recipe(op, recipe, use_psum_layout):
    if recipe is None or tuple(recipe) != (1, 1, 128):
        raise NotImplementedError(f"{op}: argument 'recipe': SM90 supports only (1, 1, 128) (A and B scaled per "
                                  f"(row, 128 K), FP32 output), got {recipe!r}")
    if use_psum_layout:
        raise NotImplementedError(f"{op}: argument 'use_psum_layout': the psum K-grouped layout is not supported on "
                                  f"SM90 (SM100-only in DeepGEMM); pass ks_cpu with per-group K")


def _contiguous(op, name, t):
    if not t.is_contiguous():
        raise InvalidArgument(f"{op}: argument '{name}': expected a contiguous tensor, got shape {tuple(t.shape)} with "
                         f"strides {t.stride()}")


def k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks_cpu, grouped_layout, c=None, recipe=(1, 1, 128),
                                     compiled_dims="mn", use_psum_layout=False):
    """D[g] = C[g] + A_g @ B_gᵀ (FP32) for the K-grouped weight gradient.

    a = (A, SFA): A holds the groups' [M, k_g] row-major e4m3 blocks back to back (any contiguous tensor with
    sum(k)·M elements, usually 1-D); SFA FP32 [M, sum(k_g/128)], group g's columns after those of the groups
    before it. b likewise with N. d FP32 [G, M, N] contiguous. ks_cpu: list of per-group K (multiples of 128, zeros
    allowed: D[g] = C[g]); grouped_layout: the same numbers as an int32 tensor [G]. c is required and may be d.
    """
    op = "k_grouped_fp8_gemm_nt_contiguous"
    _k_grouped_recipe(op, recipe, use_psum_layout)
    (a, sfa), (b, sfb) = _pair(op, "a", a), _pair(op, "b", b)
    _tensor(op, "d", d, torch.float32, 3)
    g, m, n = d.shape
    ks = _check_ks(op, ks_cpu, g, 128)
    copy_c = _check_c(op, c, d, required=True)
    _contiguous(op, "d", d)
    _tensor(op, "a", a, _E4M3)
    _tensor(op, "b", b, _E4M3)
    _tensor(op, "sfa", sfa, torch.float32)
    _tensor(op, "sfb", sfb, torch.float32)
    sum_k = sum(ks)
    sf_k = sum_k // 128
    for name, t, mn in (("a", a, m), ("b", b, n)):
        if t.numel() != sum_k * mn:
            raise InvalidArgument(f"{op}: argument '{name}': expected sum(ks_cpu) * {'M' if name == 'a' else 'N'} = "
                             f"{sum_k} * {mn} = {sum_k * mn} elements, got {t.numel()} (shape {tuple(t.shape)})")
        _contiguous(op, name, t)
    _expect_shape(op, "sfa", sfa, (m, sf_k), " ([M, sum(k_g / 128)])")
    _expect_shape(op, "sfb", sfb, (n, sf_k), " ([N, sum(k_g / 128)])")
    _int_layout(op, "grouped_layout", grouped_layout, g, "the K of each group, as ks_cpu")
    if sum_k == 0 or d.numel() == 0:  # no product: D = C, with every argument checked
        if copy_c:
            d.copy_(c)
        return
    separate_c = c if copy_c else None  # the C++ op copies it into d after its own checks
    kernel = getattr(_C, op)
    _launch(op, lambda sa, sb: kernel(a, sa, b, sb, d, ks, grouped_layout, separate_c),
            get_mn_major_tma_aligned_tensor, get_mn_major_tma_aligned_tensor, sfa, sfb)


def k_grouped_fp8_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c=None, recipe=(1, 1, 128),
                                     compiled_dims="mn", use_psum_layout=False):
    """SM100-only in DeepGEMM (MN-major A [sum K, M] and B [sum K, N]). On SM90 the shape checks and the trivial
    cases run (total K == 0: d = c, or zeros), then NotImplementedError: use k_grouped_fp8_gemm_nt_contiguous."""
    op = "k_grouped_fp8_gemm_tn_contiguous"
    if recipe is None or tuple(recipe)[:2] != (1, 1) or len(tuple(recipe)) != 3:
        raise NotImplementedError(f"{op}: argument 'recipe': expected (1, 1, gran_k), got {recipe!r}")
    (a, sfa), (b, sfb) = _pair(op, "a", a), _pair(op, "b", b)
    if not isinstance(d, torch.Tensor) or d.dim() != 3:
        raise InvalidArgument(f"{op}: argument 'd': expected a 3-D tensor [G, M, N], got "
                         f"{tuple(d.shape) if isinstance(d, torch.Tensor) else type(d).__name__}")
    _tensor(op, "a", a, _E4M3, 2)
    _tensor(op, "b", b, _E4M3, 2)
    g, m, n = d.shape
    if ks_cpu is not None and not (isinstance(ks_cpu, (list, tuple)) and len(ks_cpu) == 0):
        sum_k = sum(_check_ks(op, ks_cpu, g, get_mk_alignment_for_contiguous_layout()))
    elif use_psum_layout:
        sum_k = a.shape[0]
    else:
        raise InvalidArgument(f"{op}: argument 'ks_cpu': expected a non-empty list of per-group K without "
                         f"use_psum_layout, got {ks_cpu!r}")
    _int_layout(op, "grouped_layout", grouped_layout, g, "per-group K or cumulative K ends")
    _expect_shape(op, "a", a, (sum_k, m), " ([sum K, M])")
    _expect_shape(op, "b", b, (sum_k, n), " ([sum K, N])")
    for name, t in (("a", a), ("b", b), ("d", d)):
        _contiguous(op, name, t)
    copy_c = _check_c(op, c, d, required=False)
    if m == 0 or n == 0:
        return
    if sum_k == 0:
        if copy_c:
            d.copy_(c)
        elif c is None:
            d.zero_()
        return
    raise NotImplementedError(f"{op}: the TN (MN-major) K-grouped FP8 GEMM is SM100-only in DeepGEMM; on SM90 use "
                              f"k_grouped_fp8_gemm_nt_contiguous (K-major A_g [M, k_g] and B_g [N, k_g] back to back)")


m_grouped_fp8_fp4_gemm_nt_contiguous = m_grouped_fp8_gemm_nt_contiguous
m_grouped_fp8_fp4_gemm_nn_contiguous = m_grouped_fp8_gemm_nn_contiguous
m_grouped_fp8_fp4_gemm_nt_masked = m_grouped_fp8_gemm_nt_masked
fp8_m_grouped_gemm_nt_masked = m_grouped_fp8_gemm_nt_masked
