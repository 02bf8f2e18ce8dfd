"""einsum on the GPU ('bmk,bnk->mn' summed over the batch, 'bhr,hdr->bhd' and 'bhd,hdr->bhr' batched over heads, the
last two also through cuBLASLt): DeepGEMM's test shapes and tolerances against float64 (the sum) and torch.einsum
(cuBLAS, the heads: DeepGEMM asks calc_diff < 1e-10 there), outputs poisoned first, bad inputs raising with nothing
written. Reached through tessera.einsum_gemm.einsum until the public name routes there."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

import tessera  # noqa: E402
from tessera.einsum_gemm import einsum  # noqa: E402
from tessera.testing import calc_diff  # noqa: E402

BMK = [(128, 384, 128), (256, 256, 256), (384, 128, 384)]
HEADS = [(128, 512, 128), (8, 4096, 1024)]


@pytest.mark.parametrize("s", [1, 129, 4096])
@pytest.mark.parametrize("m,n,k", BMK)
@pytest.mark.parametrize("out", [torch.float32, torch.bfloat16])
def test_bmk_bnk_mn(s, m, n, k, out):
    a = torch.randn(s, m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(s, n, k, device="cuda", dtype=torch.bfloat16)
    ref = torch.einsum("bmk,bnk->mn", a.double(), b.double())
    if out == torch.float32:
        d = torch.randn(m, n, device="cuda")  # accumulated onto, in place (c is d)
        ref = ref + d.double()
        einsum("bmk,bnk->mn", a, b, d, c=d)
    else:
        d = torch.full((m, n), float("nan"), device="cuda", dtype=out)
        einsum("bmk,bnk->mn", a, b, d)
    assert not torch.isnan(d).any()
    assert calc_diff(d, ref) < 1e-5


def test_bmk_bnk_mn_fp32_without_c_overwrites_and_separate_c_is_added():
    a = torch.randn(33, 128, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(33, 192, 64, device="cuda", dtype=torch.bfloat16)
    ref = torch.einsum("bmk,bnk->mn", a.double(), b.double())
    d = torch.full((128, 192), float("nan"), device="cuda")
    einsum("bmk,bnk->mn", a, b, d)
    assert calc_diff(d, ref) < 1e-5
    c = torch.randn(128, 192, device="cuda")
    c_before = c.clone()
    einsum("bmk,bnk->mn", a, b, d, c=c)
    assert calc_diff(d, ref + c.double()) < 1e-5
    assert torch.equal(c, c_before)


@pytest.mark.parametrize("h,r,dim", HEADS)
@pytest.mark.parametrize("bsz", [4, 32, 128, 4096])
@pytest.mark.parametrize("expr", ["bhr,hdr->bhd", "bhd,hdr->bhr"])
@pytest.mark.parametrize("use_cublaslt", [False, True])
def test_per_head_matches_cublas(h, r, dim, bsz, expr, use_cublaslt):
    # DeepGEMM's operands: a contiguous, b a [:, :, :r] slice of a wider buffer (padded rows).
    x = torch.randn(bsz, h, r if expr.startswith("bhr") else dim, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(h, dim, r + 128, device="cuda", dtype=torch.bfloat16)[:, :, :r]
    ref = torch.einsum(expr, x, y)
    z = torch.full(tuple(ref.shape), float("nan"), device="cuda", dtype=torch.bfloat16)
    einsum(expr, x, y, z, use_cublaslt=use_cublaslt)
    assert not torch.isnan(z).any()
    assert calc_diff(z, ref) < 1e-10


@pytest.mark.parametrize("expr", ["bhr,hdr->bhd", "bhd,hdr->bhr"])
def test_per_head_strided_views_and_odd_sizes(expr):
    # Non-contiguous a and d (batch-major with gaps), sizes that are not tile multiples: each head's edges clip on
    # their own, no head reads or writes another's.
    bsz, h, r, dim = 37, 6, 200, 72
    xa = torch.randn(bsz, h + 2, (r if expr.startswith("bhr") else dim) + 8, device="cuda", dtype=torch.bfloat16)
    x = xa[:, 1:h + 1, : (r if expr.startswith("bhr") else dim)]
    y = torch.randn(h, dim, r, device="cuda", dtype=torch.bfloat16)
    ref = torch.einsum(expr, x.double(), y.double())
    out_last = dim if expr.endswith("bhd") else r
    zb = torch.full((bsz, h + 1, out_last + 8), float("nan"), device="cuda", dtype=torch.bfloat16)
    z = zb[:, :h, :out_last]
    einsum(expr, x, y, z)
    assert calc_diff(z, ref) < 1e-5
    assert torch.isnan(zb[:, h:, :]).all() and torch.isnan(zb[:, :, out_last:]).all(), "wrote outside d's view"


def test_bad_inputs_raise_and_write_nothing():
    a = torch.randn(4, 128, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4, 128, 64, device="cuda", dtype=torch.bfloat16)
    d = torch.full((128, 128), 3.0, device="cuda")
    with pytest.raises(tessera.InvalidArgument, match="multiple of 64"):
        einsum("bmk,bnk->mn", a[:, :, :48].contiguous(), b[:, :, :48].contiguous(), d, c=d)
    with pytest.raises(tessera.InvalidArgument, match="contiguous"):
        einsum("bmk,bnk->mn", a.transpose(1, 2).contiguous().transpose(1, 2), b, d, c=d)
    with pytest.raises(tessera.InvalidArgument, match="argument 'c': expected None with a BF16 d"):
        einsum("bmk,bnk->mn", a, b, d.bfloat16(), c=d.bfloat16())
    with pytest.raises(tessera.InvalidArgument, match="use_cublaslt"):
        einsum("bmk,bnk->mn", a, b, d, c=d, use_cublaslt=True)
    torch.cuda.synchronize()
    assert (d == 3.0).all()


def test_empty_and_zero_batch():
    a = torch.empty(0, 128, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.empty(0, 64, 64, device="cuda", dtype=torch.bfloat16)
    d = torch.full((128, 64), 5.0, device="cuda")
    einsum("bmk,bnk->mn", a, b, d, c=d)
    assert (d == 5.0).all()
    einsum("bmk,bnk->mn", a, b, d)
    assert (d == 0).all()
    x = torch.randn(3, 2, 0, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(2, 8, 0, device="cuda", dtype=torch.bfloat16)
    z = torch.full((3, 2, 8), 1.0, device="cuda", dtype=torch.bfloat16)
    einsum("bhr,hdr->bhd", x, y, z)
    assert (z == 0).all()


@pytest.mark.parametrize("bsz", [4, 32, 128, 4096, 37])
def test_fp8_bhr_hdr_bhd(bsz):
    # DeepGEMM's shape (H, R, D) = (8, 4096, 1024) with per-token x scales and per-block y scales, against the
    # dequantized product (DeepGEMM asks calc_diff < 1e-3 against the BF16 inputs' product).
    from tessera.einsum_gemm import fp8_einsum
    from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
    h, r, dim = 8, 4096, 1024
    x = torch.randn(bsz, h, r, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(h, dim, r, device="cuda", dtype=torch.bfloat16)
    x8, sfx = per_token_cast_to_fp8(x.view(-1, r), use_ue8m0=True)
    x8, sfx = x8.view(bsz, h, r), sfx.view(bsz, h, r // 128)
    y8 = torch.empty_like(y, dtype=torch.float8_e4m3fn)
    sfy = torch.empty(h, dim // 128, r // 128, device="cuda")
    for i in range(h):
        y8[i], sfy[i] = per_block_cast_to_fp8(y[i], use_ue8m0=True)
    z = torch.full((bsz, h, dim), float("nan"), device="cuda", dtype=torch.bfloat16)
    fp8_einsum("bhr,hdr->bhd", (x8, sfx), (y8, sfy), z)
    assert not torch.isnan(z).any()
    assert calc_diff(z, torch.einsum("bhr,hdr->bhd", x.double(), y.double())) < 1e-3
