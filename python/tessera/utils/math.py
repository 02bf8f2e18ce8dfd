"""Quantisation helpers (pure PyTorch), DeepGEMM-compatible semantics.

Every scale factor (SF) is a dequantisation multiplier: real value ~= quantised value * sf,
for every element of the SF's block. FP8 is e4m3 (max finite 448); FP4 is E2M1 (max 6).
Nothing here touches CUDA at import time; all ops run on the input's device.
"""
import torch

__all__ = [
    'ceil_div', 'align', 'ceil_to_ue8m0', 'pack_ue8m0_to_int', 'unpack_ue8m0_from_int',
    'per_token_cast_to_fp8', 'per_channel_cast_to_fp8', 'per_block_cast_to_fp8',
    'per_custom_dims_cast_to_fp8', 'per_token_cast_to_fp4', 'transpose_packed_fp4',
    'cast_back_from_fp4',
]

_FP8_MAX = 448.0
_FP4_MAX = 6.0
# Smallest amax used to derive an SF, so all-zero blocks get a finite, non-zero scale.
_AMAX_FLOOR = 1e-4
# E2M1 magnitudes indexed by the 3-bit code; bit 3 of a nibble is the sign.
_FP4_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def ceil_div(x: int, y: int) -> int:
    return (x + y - 1) // y


def align(x: int, y: int) -> int:
    return ceil_div(x, y) * y


def ceil_to_ue8m0(x: torch.Tensor) -> torch.Tensor:
    """Round |x| up to a power of two, as FP32 with biased exponent clamped to [1, 254]."""
    bits = x.abs().float().view(torch.int32)
    exp = (bits >> 23) & 0xFF
    # A non-zero mantissa means |x| is above 2^(exp-127): bump to the next power.
    exp = exp + ((bits & 0x7FFFFF) != 0).to(torch.int32)
    return (exp.clamp(1, 254) << 23).view(torch.float32)


def pack_ue8m0_to_int(x: torch.Tensor) -> torch.Tensor:
    """FP32 powers of two [..., 4n] -> int32 [..., n]; byte i (little-endian) of int j = exponent of 4j+i."""
    assert x.dtype == torch.float32, f'expected float32, got {x.dtype}'
    assert x.dim() >= 1 and x.size(-1) % 4 == 0, f'last dim must be a multiple of 4, got {tuple(x.shape)}'
    bits = x.view(torch.int32)
    # Sign and mantissa must both be zero: only the exponent byte survives packing.
    assert bool(((bits & 0x807FFFFF) == 0).all()), 'values must be non-negative exact powers of two'
    exps = (bits >> 23).to(torch.uint8).contiguous()
    # Reinterpreting 4 consecutive bytes as one int32 is the little-endian packing itself.
    return exps.view(torch.int32)


def unpack_ue8m0_from_int(packed_sf: torch.Tensor) -> torch.Tensor:
    """Inverse of pack_ue8m0_to_int: int32 [..., n] -> FP32 [..., 4n] (byte << 23)."""
    assert packed_sf.dtype == torch.int32, f'expected int32, got {packed_sf.dtype}'
    exps = packed_sf.contiguous().view(torch.uint8).to(torch.int32)
    return (exps << 23).view(torch.float32)


def _sf_from_amax(amax: torch.Tensor, max_value: float, use_ue8m0: bool) -> torch.Tensor:
    sf = amax.float().clamp(min=_AMAX_FLOOR) / max_value
    return ceil_to_ue8m0(sf) if use_ue8m0 else sf


def _pad_dim(x: torch.Tensor, dim: int, multiple: int, value: float = 0.0) -> torch.Tensor:
    """Pad `dim` up to a multiple with `value` (the default zeros never raise an amax)."""
    pad = align(x.size(dim), multiple) - x.size(dim)
    if pad == 0:
        return x
    shape = list(x.shape)
    shape[dim] = pad
    return torch.cat([x, x.new_full(shape, value)], dim=dim)


def per_token_cast_to_fp8(x: torch.Tensor, use_ue8m0: bool, gran_k: int = 128,
                          use_packed_ue8m0: bool = False):
    """[M, N] -> (e4m3 [M, N], sf FP32 [M, ceil(N/gran_k)] or packed int32 [M, ceil(N/gran_k)/4])."""
    assert x.dim() == 2, f'expected a 2-D tensor, got {x.dim()}-D'
    assert not use_packed_ue8m0 or use_ue8m0, 'use_packed_ue8m0 requires use_ue8m0'
    m, n = x.shape
    x_view = _pad_dim(x, 1, gran_k).reshape(m, ceil_div(n, gran_k), gran_k).float()
    sf = _sf_from_amax(x_view.abs().amax(dim=2), _FP8_MAX, use_ue8m0)
    x_fp8 = (x_view / sf.unsqueeze(2)).to(torch.float8_e4m3fn).view(m, align(n, gran_k))[:, :n].contiguous()
    return x_fp8, (pack_ue8m0_to_int(sf) if use_packed_ue8m0 else sf)


def per_channel_cast_to_fp8(x: torch.Tensor, use_ue8m0: bool, gran_k: int = 128):
    """[M, N] with M % gran_k == 0 -> (e4m3 [M, N], sf FP32 [M/gran_k, N]): per gran_k rows per column."""
    assert x.dim() == 2, f'expected a 2-D tensor, got {x.dim()}-D'
    m, n = x.shape
    assert m % gran_k == 0, f'M={m} must be a multiple of gran_k={gran_k}'
    x_view = x.reshape(m // gran_k, gran_k, n).float()
    sf = _sf_from_amax(x_view.abs().amax(dim=1), _FP8_MAX, use_ue8m0)
    x_fp8 = (x_view / sf.unsqueeze(1)).to(torch.float8_e4m3fn).view(m, n)
    return x_fp8, sf


def per_block_cast_to_fp8(x: torch.Tensor, use_ue8m0: bool, gran_k: int = 128):
    """[M, N] -> (e4m3 [M, N], sf FP32 [ceil(M/gran_k), ceil(N/gran_k)]) for gran_k x gran_k blocks."""
    assert x.dim() == 2, f'expected a 2-D tensor, got {x.dim()}-D'
    m, n = x.shape
    x_pad = _pad_dim(_pad_dim(x, 0, gran_k), 1, gran_k)
    bm, bn = x_pad.size(0) // gran_k, x_pad.size(1) // gran_k
    x_view = x_pad.reshape(bm, gran_k, bn, gran_k).float()
    sf = _sf_from_amax(x_view.abs().amax(dim=(1, 3)), _FP8_MAX, use_ue8m0)
    x_fp8 = (x_view / sf.view(bm, 1, bn, 1)).to(torch.float8_e4m3fn)
    return x_fp8.view(x_pad.shape)[:m, :n].contiguous(), sf


def per_custom_dims_cast_to_fp8(x: torch.Tensor, dims, use_ue8m0: bool):
    """One SF per index of `dims`: amax over every other dim. Returns (e4m3, sf.squeeze())."""
    kept = {d % x.dim() for d in dims}
    reduced = [d for d in range(x.dim()) if d not in kept]
    # amax(dim=[]) would reduce everything, so "nothing to reduce" is handled explicitly.
    amax = x.abs().amax(dim=reduced, keepdim=True) if reduced else x.abs()
    sf = _sf_from_amax(amax, _FP8_MAX, use_ue8m0)
    x_fp8 = (x.float() / sf).to(torch.float8_e4m3fn)
    return x_fp8, sf.squeeze()


def _fp4_encode(v: torch.Tensor) -> torch.Tensor:
    """FP32 (already scaled to [-6, 6]) -> E2M1 nibble codes (uint8), round to nearest, ties to even."""
    a = v.abs()
    # Thresholds are the midpoints between neighbouring magnitudes. '>=' sends a tie up
    # (the upper code is even), '>' keeps it down (the lower code is even).
    code = ((a > 0.25).to(torch.uint8) + (a >= 0.75) + (a > 1.25) + (a >= 1.75)
            + (a > 2.5) + (a >= 3.5) + (a > 5.0))
    return code | ((v < 0).to(torch.uint8) << 3)


def _fp4_pack(codes: torch.Tensor) -> torch.Tensor:
    """uint8 codes [..., 2n] -> int8 [..., n]: even element in the low nibble, odd in the high."""
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).view(torch.int8)


def _fp4_unpack(packed: torch.Tensor) -> torch.Tensor:
    """int8 [..., n] -> uint8 codes [..., 2n] (inverse of _fp4_pack)."""
    b = packed.view(torch.uint8)
    return torch.stack([b & 0xF, b >> 4], dim=-1).flatten(-2)


def per_token_cast_to_fp4(x: torch.Tensor, use_ue8m0: bool, gran_k: int = 128,
                          use_packed_ue8m0: bool = False):
    """[M, N] (N even) -> (packed E2M1 int8 [M, N/2], sf FP32 [M, ceil(N/gran_k)] or packed int32)."""
    assert x.dim() == 2, f'expected a 2-D tensor, got {x.dim()}-D'
    m, n = x.shape
    assert n % 2 == 0, f'N={n} must be even to pack two FP4 values per byte'
    assert not use_packed_ue8m0 or use_ue8m0, 'use_packed_ue8m0 requires use_ue8m0'
    x_view = _pad_dim(x, 1, gran_k).reshape(m, ceil_div(n, gran_k), gran_k).float()
    sf = _sf_from_amax(x_view.abs().amax(dim=2), _FP4_MAX, use_ue8m0)
    # Rounding of amax / sf can land a hair above 6; clamp so it encodes as 6, not beyond.
    scaled = (x_view / sf.unsqueeze(2)).clamp(-_FP4_MAX, _FP4_MAX).view(m, align(n, gran_k))[:, :n]
    packed = _fp4_pack(_fp4_encode(scaled))
    if use_packed_ue8m0:
        # Pad the SF count to a multiple of 4 with 1.0 (a neutral, packable power of two).
        sf = pack_ue8m0_to_int(_pad_dim(sf, 1, 4, value=1.0))
    return packed, sf


def transpose_packed_fp4(a: torch.Tensor) -> torch.Tensor:
    """Packed E2M1 int8 [M, N/2] (M even) -> int8 [N, M/2] holding the transpose."""
    assert a.dtype == torch.int8 and a.dim() == 2, f'expected 2-D int8, got {a.dim()}-D {a.dtype}'
    assert a.size(0) % 2 == 0, f'M={a.size(0)} must be even'
    return _fp4_pack(_fp4_unpack(a).t().contiguous())


def cast_back_from_fp4(packed: torch.Tensor, sf: torch.Tensor, gran_k: int = 128,
                       use_packed_ue8m0: bool = False) -> torch.Tensor:
    """Dequantise packed E2M1 int8 [M, N/2] with per-row, per-gran_k SFs -> FP32 [M, N]."""
    assert packed.dtype == torch.int8 and packed.dim() == 2, 'expected 2-D int8 packed FP4'
    m, n = packed.size(0), packed.size(1) * 2
    if use_packed_ue8m0:
        sf = unpack_ue8m0_from_int(sf)
    sf = sf.float()[:, :ceil_div(n, gran_k)]
    magnitudes = torch.tensor(_FP4_VALUES, dtype=torch.float32, device=packed.device)
    table = torch.cat([magnitudes, -magnitudes])
    values = table[_fp4_unpack(packed).long()]
    return values * sf.repeat_interleave(gran_k, dim=1)[:, :n]
