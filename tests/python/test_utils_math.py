"""tessera.utils.math: exact properties and round trips of the quantisation helpers (CPU)."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch')

from tessera.utils import math as m  # noqa: E402

E4M3_MAX = 448.0


def _bits(x):
    return x.float().view(torch.int32)


def _is_pow2(x):
    # Positive, normal, zero mantissa.
    b = _bits(x)
    return bool(((b & 0x807FFFFF) == 0).all() and ((b >> 23) > 0).all())


def _expand(sf, gran, n, dim):
    return sf.repeat_interleave(gran, dim=dim).narrow(dim, 0, n)


def _check_fp8_error(x, x_fp8, sf_full):
    """Each element is within e4m3 rounding of x: half a ULP (2^-4 relative) plus the subnormal step."""
    deq = x_fp8.float() * sf_full
    err = (deq - x.float()).abs()
    bound = x.float().abs() * 2.0 ** -4 + sf_full * 2.0 ** -9
    assert bool((err <= bound).all()), f'max excess {(err - bound).max().item()}'


def test_ceil_div_align():
    assert [m.ceil_div(x, 128) for x in (0, 1, 127, 128, 129, 256)] == [0, 1, 1, 1, 2, 2]
    assert [m.align(x, 4) for x in (0, 1, 4, 5, 4097)] == [0, 4, 4, 8, 4100]


def test_ceil_to_ue8m0_known_values():
    x = torch.tensor([1.0, 1.5, 0.3, -3.0, 2.0 ** -10, 0.0, 2.0 ** -130, 3e38, float('inf')])
    want = torch.tensor([1.0, 2.0, 0.5, 4.0, 2.0 ** -10, 2.0 ** -126, 2.0 ** -126, 2.0 ** 127, 2.0 ** 127])
    got = m.ceil_to_ue8m0(x)
    assert got.dtype == torch.float32
    assert torch.equal(got, want)


def test_ceil_to_ue8m0_is_smallest_power_above():
    x = torch.rand(4096) * 1e3 + 1e-6
    y = m.ceil_to_ue8m0(x)
    assert _is_pow2(y)
    assert bool((y >= x).all()) and bool((y < 2 * x).all())


def test_pack_ue8m0_byte_order():
    x = torch.tensor([[1.0, 2.0, 4.0, 0.5, 1.0, 1.0, 1.0, 2.0]])
    packed = m.pack_ue8m0_to_int(x)
    assert packed.dtype == torch.int32 and packed.shape == (1, 2)
    first = 127 | 128 << 8 | 129 << 16 | 126 << 24
    second = (127 | 127 << 8 | 127 << 16 | 128 << 24) - (1 << 32)  # top byte >= 128: negative int32
    assert packed.tolist() == [[first, second]]


def test_pack_unpack_round_trip_bit_exact():
    gen = torch.Generator().manual_seed(0)
    exps = torch.randint(0, 255, (3, 5, 16), generator=gen, dtype=torch.int32)
    x = (exps << 23).view(torch.float32)
    packed = m.pack_ue8m0_to_int(x)
    assert packed.shape == (3, 5, 4)
    back = m.unpack_ue8m0_from_int(packed)
    assert back.dtype == torch.float32 and back.shape == x.shape
    assert torch.equal(back.view(torch.int32), x.view(torch.int32))
    # Packing a non-contiguous (transposed) input sees the logical values, not the storage order.
    xt = x.transpose(0, 1).contiguous().transpose(0, 1)
    assert torch.equal(m.pack_ue8m0_to_int(xt), packed)


@pytest.mark.parametrize('bad', [
    torch.tensor([1.0, 1.5, 2.0, 4.0]),     # 1.5 has a mantissa
    torch.tensor([1.0, -2.0, 2.0, 4.0]),    # negative
    torch.tensor([1.0, 2.0, 4.0]),          # not a multiple of 4
    torch.tensor([1.0, 2.0, 4.0, 8.0], dtype=torch.float64),
])
def test_pack_ue8m0_rejects(bad):
    with pytest.raises(AssertionError):
        m.pack_ue8m0_to_int(bad)


@pytest.mark.parametrize('shape,gran_k', [((5, 300), 128), ((64, 512), 128), ((7, 100), 32), ((1, 1), 128)])
@pytest.mark.parametrize('use_ue8m0', [False, True])
@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16])
def test_per_token_cast_to_fp8(shape, gran_k, use_ue8m0, dtype):
    M, N = shape
    x = (torch.randn(M, N) * torch.logspace(-3, 3, M).unsqueeze(1)).to(dtype)
    x_fp8, sf = m.per_token_cast_to_fp8(x, use_ue8m0=use_ue8m0, gran_k=gran_k)
    assert x_fp8.dtype == torch.float8_e4m3fn and x_fp8.shape == (M, N) and x_fp8.is_contiguous()
    assert sf.dtype == torch.float32 and sf.shape == (M, m.ceil_div(N, gran_k))

    amax = torch.nn.functional.pad(x.float().abs(), (0, m.align(N, gran_k) - N)).view(M, -1, gran_k).amax(2)
    if use_ue8m0:
        assert _is_pow2(sf)
        assert bool((sf >= amax / E4M3_MAX).all()) and bool((sf < 2 * amax.clamp(min=1e-4) / E4M3_MAX).all())
    else:
        assert torch.equal(sf, amax.clamp(min=1e-4) / E4M3_MAX)
        # Each block's largest element lands exactly on the e4m3 maximum.
        q_amax = torch.nn.functional.pad(x_fp8.float().abs(), (0, m.align(N, gran_k) - N)).view(M, -1, gran_k).amax(2)
        assert bool((q_amax[amax > 1e-4] == E4M3_MAX).all())
    _check_fp8_error(x, x_fp8, _expand(sf, gran_k, N, 1))


def test_per_token_cast_to_fp8_zero_rows_and_packed():
    x = torch.randn(4, 512)
    x[1] = 0
    x_fp8, sf = m.per_token_cast_to_fp8(x, use_ue8m0=True)
    assert torch.equal(x_fp8[1].float(), torch.zeros(512))
    assert torch.equal(sf[1], m.ceil_to_ue8m0(torch.full((4,), 1e-4 / E4M3_MAX)))
    x_fp8_p, sf_p = m.per_token_cast_to_fp8(x, use_ue8m0=True, use_packed_ue8m0=True)
    assert sf_p.dtype == torch.int32 and sf_p.shape == (4, 1)
    assert torch.equal(sf_p, m.pack_ue8m0_to_int(sf))
    assert torch.equal(x_fp8_p.view(torch.uint8), x_fp8.view(torch.uint8))
    with pytest.raises(AssertionError):
        m.per_token_cast_to_fp8(x, use_ue8m0=False, use_packed_ue8m0=True)


@pytest.mark.parametrize('use_ue8m0', [False, True])
def test_per_channel_cast_to_fp8(use_ue8m0):
    x = torch.randn(256, 100) * torch.logspace(-2, 2, 100)
    x_fp8, sf = m.per_channel_cast_to_fp8(x, use_ue8m0=use_ue8m0)
    assert x_fp8.shape == (256, 100) and sf.shape == (2, 100)
    amax = x.abs().view(2, 128, 100).amax(1)
    if use_ue8m0:
        assert _is_pow2(sf) and bool((sf >= amax / E4M3_MAX).all())
    else:
        assert torch.equal(sf, amax / E4M3_MAX)
    _check_fp8_error(x, x_fp8, _expand(sf, 128, 256, 0))
    with pytest.raises(AssertionError):
        m.per_channel_cast_to_fp8(torch.randn(100, 8), use_ue8m0=use_ue8m0)


@pytest.mark.parametrize('use_ue8m0', [False, True])
def test_per_block_cast_to_fp8(use_ue8m0):
    M, N = 200, 300
    x = torch.randn(M, N)
    x[:128, 128:256] *= 1000  # one loud block must not change its neighbours' scales
    x_fp8, sf = m.per_block_cast_to_fp8(x, use_ue8m0=use_ue8m0)
    assert x_fp8.shape == (M, N) and x_fp8.is_contiguous() and sf.shape == (2, 3)
    padded = torch.nn.functional.pad(x.abs(), (0, 384 - N, 0, 256 - M))
    amax = padded.view(2, 128, 3, 128).amax((1, 3))
    if use_ue8m0:
        assert _is_pow2(sf) and bool((sf >= amax / E4M3_MAX).all())
    else:
        assert torch.equal(sf, amax / E4M3_MAX)
    sf_full = _expand(_expand(sf, 128, M, 0), 128, N, 1)
    _check_fp8_error(x, x_fp8, sf_full)


def test_per_custom_dims_cast_to_fp8():
    kv = torch.randn(64, 128) * torch.logspace(-2, 2, 64).unsqueeze(1)
    kv_fp8, sf = m.per_custom_dims_cast_to_fp8(kv, (0, ), use_ue8m0=False)
    assert kv_fp8.shape == (64, 128) and sf.shape == (64, )
    assert torch.equal(sf, kv.abs().amax(1) / E4M3_MAX)
    _check_fp8_error(kv, kv_fp8, sf.unsqueeze(1))

    x = torch.randn(3, 5, 7)
    x_fp8, sf = m.per_custom_dims_cast_to_fp8(x, (0, -1), use_ue8m0=True)
    assert sf.shape == (3, 7) and _is_pow2(sf)
    _check_fp8_error(x, x_fp8, sf.unsqueeze(1))


def test_fp4_exact_codes_and_nibble_order():
    grid = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
    x = torch.cat([grid, -grid]).repeat(1, 8)  # [1, 128], amax 6 -> sf exactly 1.0
    packed, sf = m.per_token_cast_to_fp4(x, use_ue8m0=True)
    assert packed.dtype == torch.int8 and packed.shape == (1, 64)
    assert torch.equal(sf, torch.ones(1, 1))
    codes = list(range(8)) + [0] + list(range(9, 16))  # -0.0 is encoded as +0 (x < 0 is false)
    expected = [codes[2 * i] | codes[2 * i + 1] << 4 for i in range(8)]
    assert packed.view(torch.uint8)[0, :8].tolist() == expected
    assert torch.equal(m.cast_back_from_fp4(packed, sf), x)


def test_fp4_rounds_to_nearest_even():
    # Midpoints between E2M1 neighbours go to the one with the even code.
    mids = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0])
    want = torch.tensor([0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 6.0])
    x = torch.cat([mids, -mids]).repeat(1, 8)
    packed, sf = m.per_token_cast_to_fp4(x, use_ue8m0=True)
    assert torch.equal(m.cast_back_from_fp4(packed, sf), torch.cat([want, -want]).repeat(1, 8))


@pytest.mark.parametrize('N,gran_k', [(258, 128), (512, 128), (96, 32)])
@pytest.mark.parametrize('use_ue8m0', [False, True])
def test_per_token_cast_to_fp4_round_trip(N, gran_k, use_ue8m0):
    M = 6
    x = torch.randn(M, N) * torch.logspace(-3, 3, M).unsqueeze(1)
    packed, sf = m.per_token_cast_to_fp4(x, use_ue8m0=use_ue8m0, gran_k=gran_k)
    assert packed.shape == (M, N // 2) and sf.shape == (M, m.ceil_div(N, gran_k))
    if use_ue8m0:
        assert _is_pow2(sf)
    sf_full = _expand(sf, gran_k, N, 1)
    back = m.cast_back_from_fp4(packed, sf, gran_k=gran_k)
    assert back.shape == (M, N) and back.dtype == torch.float32
    # E2M1 spacing is at most 1/4 of a value's magnitude above 1, and 0.5 below it.
    assert bool(((back - x).abs() <= 0.2 * x.abs() + 0.25 * sf_full + 1e-6 * sf_full).all())
    assert bool(((back / sf_full).abs() <= 6).all())


def test_per_token_cast_to_fp4_packed_sf():
    x = torch.randn(3, 256)
    packed, sf = m.per_token_cast_to_fp4(x, use_ue8m0=True)
    packed_p, sf_p = m.per_token_cast_to_fp4(x, use_ue8m0=True, use_packed_ue8m0=True)
    assert sf_p.dtype == torch.int32 and sf_p.shape == (3, 1)
    unpacked = m.unpack_ue8m0_from_int(sf_p)
    assert torch.equal(unpacked[:, :2], sf) and torch.equal(unpacked[:, 2:], torch.ones(3, 2))
    assert torch.equal(packed_p, packed)
    assert torch.equal(m.cast_back_from_fp4(packed_p, sf_p, use_packed_ue8m0=True),
                       m.cast_back_from_fp4(packed, sf))
    with pytest.raises(AssertionError):
        m.per_token_cast_to_fp4(x, use_ue8m0=False, use_packed_ue8m0=True)
    with pytest.raises(AssertionError):
        m.per_token_cast_to_fp4(torch.randn(3, 255), use_ue8m0=True)


def test_transpose_packed_fp4():
    gen = torch.Generator().manual_seed(1)
    a = torch.randint(-128, 128, (6, 5), generator=gen, dtype=torch.int8)  # [M=6, N=10]
    t = m.transpose_packed_fp4(a)
    assert t.dtype == torch.int8 and t.shape == (10, 3)
    ones_a, ones_t = torch.ones(6, 1), torch.ones(10, 1)
    assert torch.equal(m.cast_back_from_fp4(t, ones_t), m.cast_back_from_fp4(a, ones_a).t())
    assert torch.equal(m.transpose_packed_fp4(t), a)
    with pytest.raises(AssertionError):
        m.transpose_packed_fp4(torch.zeros(5, 4, dtype=torch.int8))


def test_import_does_not_initialise_cuda():
    code = ('import tessera.utils.math, tessera.utils.dist, tessera.testing, torch; '
            'assert not torch.cuda.is_initialized(), "CUDA initialised at import"')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
