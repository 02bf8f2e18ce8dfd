"""Scale-factor layout utilities (DeepGEMM's names and semantics), over the C++ kernels in tessera._C.

Outputs are allocated here with torch and filled by the kernels on torch's current stream. Values and strides follow
the contract exactly: MN-major, TMA-aligned (row stride align(MN, 4)), batches packed.
"""
import torch

from . import _C
from ._C import InvalidArgument

__all__ = [
    "get_tma_aligned_size", "get_mn_major_tma_aligned_tensor", "get_mn_major_tma_aligned_packed_ue8m0_tensor",
    "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor", "transform_sf_into_required_layout",
    "set_mk_alignment_for_contiguous_layout", "get_mk_alignment_for_contiguous_layout",
    "get_theoretical_mk_alignment_for_contiguous_layout", "get_m_alignment_for_contiguous_layout",
    "get_k_alignment_for_contiguous_layout",
]

get_tma_aligned_size = _C.get_tma_aligned_size
set_mk_alignment_for_contiguous_layout = _C.set_mk_alignment_for_contiguous_layout
get_mk_alignment_for_contiguous_layout = _C.get_mk_alignment_for_contiguous_layout
get_m_alignment_for_contiguous_layout = _C.get_mk_alignment_for_contiguous_layout
get_k_alignment_for_contiguous_layout = _C.get_mk_alignment_for_contiguous_layout


def get_theoretical_mk_alignment_for_contiguous_layout(expected_m=None):
    """128 on SM90: the block-M of the m-grouped kernels (the dynamic choice exists only on SM100)."""
    return 128


def _new_from_plan(plan, dtype, device):
    _, shape, strides = plan
    return torch.empty_strided(shape, strides, dtype=dtype, device=device)


def _raise_if_not_powers_of_two(error_count, what):
    # The kernel counts scale values that are not non-negative powers of two. Reading the count synchronizes, so it
    # is skipped while a CUDA graph is being captured (documented: no check under capture).
    if torch.cuda.is_current_stream_capturing():
        return
    bad = int(error_count.item())
    if bad:
        raise InvalidArgument(f"{what}: argument 'sf': expected non-negative powers of two (UE8M0-representable), "
                         f"got {bad} value(s) with a sign or mantissa bit set")


def get_mn_major_tma_aligned_tensor(sf):
    """sf FP32 [MN, SFK] or [G, MN, SFK] -> the same values with strides (1, align(MN, 4)); sf itself if already."""
    plan = _C.plan_mn_major_tma_aligned(sf)
    if plan[0]:
        return sf
    out = _new_from_plan(plan, torch.float32, sf.device)
    _C.transpose_sf_to_mn_major(sf, out)
    return out


def get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout=None):
    """sf FP32 [..., MN, SFK] of powers of two -> int32 [..., MN, ceil(SFK/4)], MN-major TMA-aligned."""
    plan = _C.plan_mn_major_packed_ue8m0(sf)
    out = _new_from_plan(plan, torch.int32, sf.device)
    errors = torch.zeros(1, dtype=torch.int32, device=sf.device)
    _C.pack_sf_to_ue8m0(sf, out, psum_layout, get_mk_alignment_for_contiguous_layout(), errors)
    _raise_if_not_powers_of_two(errors, "get_mn_major_tma_aligned_packed_ue8m0_tensor")
    return out


def get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks_cpu, gran_k, k_alignment,
                                                           use_psum_layout=False):
    """Per-channel scales of all K-groups [sum ceil(k_g/gran_k), MN] -> int32 [rows, MN], packed within groups."""
    what = "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor"
    if not isinstance(sf, torch.Tensor) or sf.dim() != 2:
        raise InvalidArgument(f"{what}: argument 'sf': expected a 2-D tensor, got "
                         f"{tuple(sf.shape) if isinstance(sf, torch.Tensor) else type(sf).__name__}")
    ks = list(ks_cpu) if ks_cpu else []
    rows = _C.k_grouped_packed_rows(sf.shape[0], ks, grouped_layout.numel(), gran_k)
    out = torch.empty((rows, sf.shape[1]), dtype=torch.int32, device=sf.device)
    errors = torch.zeros(1, dtype=torch.int32, device=sf.device)
    _C.pack_sf_to_ue8m0_k_grouped(sf, out, grouped_layout, ks, gran_k, k_alignment, bool(use_psum_layout), errors)
    _raise_if_not_powers_of_two(errors, what)
    return out


def _is_packed_row_or_column_major(sf):
    """Each group row-major contiguous or column-major contiguous, groups packed (the 128x128 SFB contract)."""
    rows, cols = sf.shape[-2], sf.shape[-1]
    row_major = (rows <= 1 or sf.stride(-2) == cols) and (cols <= 1 or sf.stride(-1) == 1)
    col_major = (rows <= 1 or sf.stride(-2) == 1) and (cols <= 1 or sf.stride(-1) == rows)
    packed = sf.dim() == 2 or sf.shape[0] <= 1 or sf.stride(0) == rows * cols
    return (row_major or col_major) and packed


def transform_sf_into_required_layout(sf, mn, k, recipe, num_groups=None, is_sfa=None, disable_ue8m0_cast=False,
                                      psum_layout=None):
    """Converts a user scale tensor into the layout the SM90 GEMM kernels read (contract §1.8)."""
    what = "transform_sf_into_required_layout"
    recipe = tuple(recipe)
    if len(recipe) == 3:
        if is_sfa is None:
            raise InvalidArgument(f"{what}: argument 'is_sfa': expected True or False with a 3-element recipe, got None")
        gran_mn, gran_k = (recipe[0] if is_sfa else recipe[1]), recipe[2]
    elif len(recipe) == 2:
        if is_sfa is not None:
            raise InvalidArgument(f"{what}: argument 'is_sfa': expected None with a 2-element recipe, got {is_sfa}")
        gran_mn, gran_k = recipe
    else:
        raise InvalidArgument(f"{what}: argument 'recipe': expected 2 or 3 elements, got {recipe}")
    expected_dim = 2 + (num_groups is not None)
    if sf.dim() != expected_dim:
        raise InvalidArgument(f"{what}: argument 'sf': expected {expected_dim} dimensions, got shape {tuple(sf.shape)}")
    per_int = 1 if sf.dtype == torch.float32 else 4
    expected = ((num_groups,) if num_groups is not None else ()) + (-(-mn // gran_mn), -(-k // (gran_k * per_int)))
    if tuple(sf.shape) != expected:
        raise InvalidArgument(f"{what}: argument 'sf': expected shape {expected} for mn={mn}, k={k}, "
                         f"granularity ({gran_mn}, {gran_k}), got {tuple(sf.shape)}")
    if sf.dtype == torch.float32 and (gran_mn, gran_k) == (1, 128):
        return get_mn_major_tma_aligned_tensor(sf)
    if sf.dtype == torch.float32 and (gran_mn, gran_k) == (128, 128):
        if not _is_packed_row_or_column_major(sf):
            raise InvalidArgument(f"{what}: argument 'sf': 128x128 block scales must be row-major or column-major "
                             f"contiguous with packed groups, got strides {sf.stride()}")
        return sf
    raise NotImplementedError(f"{what}: unknown SF transformation on SM90 for dtype {sf.dtype} and granularity "
                              f"({gran_mn}, {gran_k}); SM90 supports FP32 scales with (1, 128) or (128, 128)")
