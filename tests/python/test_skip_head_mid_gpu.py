"""fp8_gemm_nt_skip_head_mid on the GPU: DeepGEMM's shapes (M in {128, 4096}, (N, K) in {(32768, 512), (8192, 512)},
heads (128, 64, 128)) and odd ones (decode rows that take the split-K plan, heads of other widths); the product's
columns land head by head, every mid column keeps its poison bit for bit, and the result matches fp8_gemm_nt's
exactly (same plan family, same accumulation). Reached through tessera.fp8_gemm.fp8_gemm_nt_skip_head_mid until
the public name routes there."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

import tessera  # noqa: E402
from tessera.fp8_gemm import fp8_gemm_nt_skip_head_mid  # noqa: E402
from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402


def spread(x, left, mid, right, fill):
    """x [M, N] placed head by head into [M, N / (l + r) * (l + m + r)] with `fill` in the mid columns."""
    m, n = x.shape
    heads = n // (left + right)
    out = torch.full((m, heads, left + mid + right), fill, dtype=x.dtype, device=x.device)
    xh = x.view(m, heads, left + right)
    out[:, :, :left] = xh[:, :, :left]
    out[:, :, left + mid:] = xh[:, :, left:]
    return out.view(m, -1)


@pytest.mark.parametrize("m", [128, 4096, 1, 7])
@pytest.mark.parametrize("n,k", [(32768, 512), (8192, 512), (2048, 7168)])
@pytest.mark.parametrize("heads", [(128, 64, 128), (64, 96, 192)])
def test_mid_columns_untouched_and_product_exact(m, n, k, heads):
    left, mid, right = heads
    if n % (left + right):
        pytest.skip("N is not a whole number of heads")
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a8, sfa = per_token_cast_to_fp8(a, use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(b, use_ue8m0=False)
    plain = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), plain)
    poison = float("nan")
    d = torch.full((m, n // (left + right) * (left + mid + right)), poison, device="cuda", dtype=torch.bfloat16)
    fp8_gemm_nt_skip_head_mid((a8, sfa), (b8, sfb), d, heads)
    expected = spread(plain, left, mid, right, poison)
    # NaN == NaN is False: compare the bit patterns, so untouched mid columns must still hold the poison exactly.
    assert torch.equal(d.view(torch.int16), expected.view(torch.int16))


def test_bad_head_splits_raise_and_write_nothing():
    a8 = torch.randn(128, 512, device="cuda").to(torch.float8_e4m3fn)
    b8 = torch.randn(1024, 512, device="cuda").to(torch.float8_e4m3fn)
    sfa = torch.ones(128, 4, device="cuda")
    sfb = torch.ones(8, 4, device="cuda")
    d = torch.full((128, 1536), 5.0, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(tessera.InvalidArgument, match="argument 'd': expected 1280 columns"):
        fp8_gemm_nt_skip_head_mid((a8, sfa), (b8, sfb), d, (100, 64, 156))
    with pytest.raises(tessera.InvalidArgument, match="argument 'd': expected"):
        fp8_gemm_nt_skip_head_mid((a8, sfa), (b8, sfb), d, (128, 32, 128))
    with pytest.raises(tessera.InvalidArgument, match="head_splits"):  # an odd mid would misalign the stores
        fp8_gemm_nt_skip_head_mid((a8, sfa), (b8, sfb), torch.empty(128, 1028, device="cuda",
                                                                      dtype=torch.bfloat16), (64, 1, 64))
    with pytest.raises(tessera.InvalidArgument, match="head_splits"):  # mid = 0 still checks the splits
        fp8_gemm_nt_skip_head_mid((a8, sfa), (b8, sfb), torch.empty(128, 1024, device="cuda",
                                                                      dtype=torch.bfloat16), (0, 0, 0))
    with pytest.raises(NotImplementedError, match="recipe"):
        fp8_gemm_nt_skip_head_mid((a8, sfa), (b8, sfb), d, (128, 64, 128), recipe=(1, 1, 128))
    torch.cuda.synchronize()
    assert (d == 5.0).all()


def test_1d1d_rejected_call_leaves_d_alone():
    # A separate c is copied into d only by the C++ op, after its checks: a call refused there writes nothing.
    a8 = torch.randn(64, 256, device="cuda").to(torch.float8_e4m3fn)
    b8 = torch.randn(128, 256, device="cuda").to(torch.float8_e4m3fn)
    sfa = torch.ones(64, 2, device="cuda")
    sfb = torch.ones(128, 2, device="cuda")
    d = torch.full((64, 128), 3.0, device="cuda")
    c = torch.zeros(64, 128, device="cuda")
    with pytest.raises(tessera.InvalidArgument):
        tessera.fp8_gemm_nt((a8, sfa), (b8[:, :200], sfb), d, c=c, recipe=(1, 1, 128))
    torch.cuda.synchronize()
    assert (d == 3.0).all()
