"""Layout utilities on the GPU: values bit-exact and strides exact against a PyTorch reference (contract §1.8)."""
import itertools

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

import tessera  # noqa: E402
from tessera.utils import align, ceil_div  # noqa: E402


def random_sf(shape, powers_of_two, mn_major):
    """Fresh random scales (never zeros): any FP32, or exact powers of two; K-major or plain MN-major storage."""
    if powers_of_two:
        x = torch.exp2(torch.randint(-20, 20, shape, device="cuda").float())
    else:
        x = torch.randn(shape, device="cuda") * 3
    if mn_major:  # the same logical tensor stored with stride(-2) == 1, unaligned
        x = x.transpose(-1, -2).contiguous().transpose(-1, -2)
    return x


def reference_packed(sf):
    """int32 [..., MN, ceil(SFK/4)] with byte i of int j = exponent of sf[..., 4j+i] (zero bytes past SFK)."""
    mn, sfk = sf.shape[-2], sf.shape[-1]
    exps = (sf.contiguous().view(torch.int32) >> 23) & 0xFF
    pad = ceil_div(sfk, 4) * 4 - sfk
    exps = torch.nn.functional.pad(exps, (0, pad))
    exps = exps.reshape(*sf.shape[:-1], -1, 4)
    return exps[..., 0] | (exps[..., 1] << 8) | (exps[..., 2] << 16) | (exps[..., 3] << 24)


def expected_strides(shape, last):
    mn = shape[-2]
    aligned = align(mn, 4)
    return ((aligned * last, 1, aligned) if len(shape) == 3 else (1, aligned))


CASES = list(itertools.product([False, True], [False, True], [4096, 4097, 1, 130], [128, 7168, 7296, 32],
                               [0, 1, 2, 4]))


@pytest.mark.parametrize("ue8m0,mn_major,mn,k,groups", CASES)
def test_mn_major_tma_aligned(ue8m0, mn_major, mn, k, groups):
    shape = (groups, mn, ceil_div(k, 128)) if groups else (mn, ceil_div(k, 128))
    sf = random_sf(shape, ue8m0, mn_major)
    out = tessera.get_mn_major_tma_aligned_tensor(sf)
    assert out.shape == sf.shape and out.dtype == torch.float32
    assert out.stride() == expected_strides(shape, shape[-1]) or (shape[-1] == 1 and out.stride()[-2] == 1)
    assert torch.equal(out, sf)
    # Already aligned: the very same object comes back, no copy.
    assert tessera.get_mn_major_tma_aligned_tensor(out) is out


@pytest.mark.parametrize("mn_major,mn,k,groups", list(itertools.product([False, True], [4096, 4097, 5],
                                                                        [128, 7168, 7296, 640], [0, 1, 2])))
def test_packed_ue8m0(mn_major, mn, k, groups):
    shape = (groups, mn, ceil_div(k, 128)) if groups else (mn, ceil_div(k, 128))
    sf = random_sf(shape, True, mn_major)
    out = tessera.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf)
    ref = reference_packed(sf)
    assert out.dtype == torch.int32 and out.shape == ref.shape
    assert out.stride() == expected_strides(shape, ref.shape[-1]) or ref.shape[-1] == 1
    assert torch.equal(out, ref)


def test_packed_ue8m0_refuses_non_powers_of_two():
    sf = torch.exp2(torch.randint(-5, 5, (256, 8), device="cuda").float())
    sf[17, 3] = 1.5
    with pytest.raises(ValueError, match="powers of two"):
        tessera.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf)


def test_packed_ue8m0_psum_gaps_are_zero():
    alignment = tessera.get_mk_alignment_for_contiguous_layout()
    ends = torch.tensor([100, 300, 300, 520], dtype=torch.int32, device="cuda")  # group 2 empty
    sf = torch.exp2(torch.randint(-5, 5, (1024, 56), device="cuda").float())
    out = tessera.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout=ends)
    ref = reference_packed(sf)
    live = torch.zeros(1024, dtype=torch.bool, device="cuda")
    start = 0
    for end in ends.tolist():
        live[start:end] = True
        start = align(end, alignment)
    ref[~live] = 0
    assert torch.equal(out, ref)


@pytest.mark.parametrize("mn,groups,avg_k", [(4096, 16, 2048), (7168, 8, 4096), (4096, 72, 384), (7168, 128, 256)])
@pytest.mark.parametrize("empty_group", [False, True])
def test_k_grouped_packed_ue8m0(mn, groups, avg_k, empty_group):
    ks = [align(int(avg_k * (0.7 + 0.6 * torch.rand(1).item())), 128) for _ in range(groups)]
    if empty_group:
        ks[groups // 2] = 0
    sf_rows = sum(ceil_div(k, 128) for k in ks)
    sf = torch.exp2(torch.randint(-10, 10, (sf_rows, mn), device="cuda").float())
    layout = torch.tensor(ks, dtype=torch.int32, device="cuda")
    out = tessera.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, layout, ks, 128, 128)
    pieces, row = [], 0
    for k in ks:
        n = ceil_div(k, 128)
        if n:
            pieces.append(reference_packed(sf[row:row + n].T.contiguous()).T)
        row += n
    ref = torch.cat(pieces) if pieces else torch.empty((0, mn), dtype=torch.int32, device="cuda")
    assert out.shape == ref.shape and out.is_contiguous()
    assert torch.equal(out, ref)


def test_transform_sf_into_required_layout_paths():
    m, n, k = 4097, 2112, 7296
    sfa = torch.randn(m, ceil_div(k, 128), device="cuda")
    out = tessera.transform_sf_into_required_layout(sfa, m, k, (1, 128, 128), is_sfa=True)
    assert out.stride() == (1, align(m, 4)) and torch.equal(out, sfa)
    sfb = torch.randn(ceil_div(n, 128), ceil_div(k, 128), device="cuda")
    assert tessera.transform_sf_into_required_layout(sfb, n, k, (1, 128, 128), is_sfa=False) is sfb
    assert tessera.transform_sf_into_required_layout(sfb.T.contiguous().T, n, k, (128, 128)) is not None
    with pytest.raises(ValueError, match="is_sfa"):
        tessera.transform_sf_into_required_layout(sfa, m, k, (1, 128, 128))
    with pytest.raises(ValueError, match="expected shape"):
        tessera.transform_sf_into_required_layout(sfa, m + 8, k, (1, 128), None)
    with pytest.raises(NotImplementedError, match="SF transformation"):
        tessera.transform_sf_into_required_layout(torch.randn(m, ceil_div(k, 32), device="cuda"), m, k, (1, 32))
    with pytest.raises(ValueError, match="row-major or column-major"):
        tessera.transform_sf_into_required_layout(sfb.as_strided(sfb.shape, (1, 1)), n, k, (128, 128))


def test_layout_errors_are_clear():
    with pytest.raises(TypeError, match="float32"):
        tessera.get_mn_major_tma_aligned_tensor(torch.zeros(8, 4, dtype=torch.int32, device="cuda"))
    with pytest.raises(ValueError, match="dimensions"):
        tessera.get_mn_major_tma_aligned_tensor(torch.zeros(8, device="cuda"))
    with pytest.raises(ValueError, match="CUDA tensor"):
        tessera.get_mn_major_tma_aligned_tensor(torch.randn(8, 4))


def test_runs_on_the_current_stream():
    sf = torch.randn(4096, 56, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # keep the side stream busy: a launch there must queue behind the sleep
        out = tessera.get_mn_major_tma_aligned_tensor(sf)
        ev = torch.cuda.Event()
        ev.record()
    assert not ev.query(), "the kernel should be queued on the current (side) stream"
    side.synchronize()
    assert torch.equal(out, sf)
