"""tessera.hc_prenorm's argument checks, which run before any device work (CPU tensors suffice): dtypes, shapes and
split counts, the SM90 limits on N and K, layouts, M == 0, and the C++ op's refusal of host memory, with the
outputs left untouched."""
import pytest

torch = pytest.importorskip("torch")
import tessera  # noqa: E402
from tessera.hc_prenorm import tf32_hc_prenorm_gemm as hc  # noqa: E402


def args(m=64, n=24, k=128, num_splits=None):
    a = torch.zeros(m, k, dtype=torch.bfloat16)
    b = torch.zeros(n, k)
    lead = () if num_splits is None else (num_splits,)
    return a, b, torch.full(lead + (m, n), 7.0), torch.full(lead + (m,), 7.0)


def test_valid_arguments_reach_the_device_check():
    for num_splits in (None, 1, 16):
        a, b, d, s = args(num_splits=num_splits)
        with pytest.raises(tessera.InvalidArgument, match="tf32_hc_prenorm_gemm: argument 'a': expected a CUDA tensor"):
            hc(a, b, d, s, num_splits=num_splits)
        assert torch.equal(d, torch.full_like(d, 7.0)) and torch.equal(s, torch.full_like(s, 7.0))


def test_dtypes_are_named():
    a, b, d, s = args()
    with pytest.raises(tessera.TypeMismatch, match="argument 'a': expected dtype bfloat16, got float32"):
        hc(a.float(), b, d, s)
    with pytest.raises(tessera.TypeMismatch, match="argument 'b': expected dtype float32, got bfloat16"):
        hc(a, b.to(torch.bfloat16), d, s)
    with pytest.raises(tessera.TypeMismatch, match="argument 'd': expected dtype float32, got bfloat16"):
        hc(a, b, d.to(torch.bfloat16), s)
    with pytest.raises(tessera.TypeMismatch, match="argument 'sqr_sum': expected dtype float32, got float64"):
        hc(a, b, d, s.double())
    with pytest.raises(tessera.TypeMismatch, match="argument 'b': expected a tensor"):
        hc(a, (b,), d, s)


def test_shapes_and_split_counts_are_named():
    a, b, d, s = args()
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'b': expected \[N, K\] with K = 128 \(from a\), "
                                                      r"got shape \[24, 64\]"):
        hc(a, b[:, :64], d, s)
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'd': expected shape \[64, 24\], got \[64, 16\]"):
        hc(a, b, d[:, :16], s)
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'sqr_sum': expected shape \[64\], got \[32\]"):
        hc(a, b, d, s[:32])
    with pytest.raises(tessera.InvalidArgument, match="argument 'd': expected 3 dimensions"):
        hc(a, b, d, s, num_splits=4)
    a, b, d, s = args(num_splits=4)
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'd': expected shape \[8, 64, 24\], got \[4, 64, 24\]"):
        hc(a, b, d, torch.zeros(8, 64), num_splits=8)
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'sqr_sum': expected shape \[4, 64\], got \[4, 63\]"):
        hc(a, b, d, s[:, :63], num_splits=4)
    with pytest.raises(tessera.InvalidArgument, match="argument 'd': expected 2 dimensions"):
        hc(a, b, d, s)


@pytest.mark.parametrize("bad,error", [(0, tessera.InvalidArgument), (-3, tessera.InvalidArgument),
                                       (2.0, tessera.TypeMismatch), (True, tessera.TypeMismatch),
                                       ("4", tessera.TypeMismatch)])
def test_num_splits_must_be_none_or_positive_int(bad, error):
    a, b, d, s = args(num_splits=4)
    with pytest.raises(error, match="argument 'num_splits'"):
        hc(a, b, d, s, num_splits=bad)


@pytest.mark.parametrize("shape,match", [
    (dict(n=20), "expected N <= 32 and a multiple of 8 \\(SM90\\), got N = 20"), (dict(n=40), "got N = 40"),
    (dict(k=96), "expected K a multiple of 64 \\(SM90\\), got K = 96"), (dict(k=0), "argument 'a': expected K > 0"),
    (dict(n=0), "argument 'b': expected N > 0")])
def test_sm90_limits_on_n_and_k(shape, match):
    a, b, d, s = args(**shape)
    with pytest.raises(tessera.InvalidArgument, match=match):
        hc(a, b, d, s)


def test_layouts_are_checked():
    a, b, d, s = args()
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'a': expected K-major \(stride\(-1\) == 1\)"):
        hc(a.T.contiguous().T, b, d, s)
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'b': expected K-major"):
        hc(a, b.T.contiguous().T, d, s)
    with pytest.raises(tessera.InvalidArgument, match="argument 'd': expected row-major"):
        hc(a, b, d.T.contiguous().T, s)
    with pytest.raises(tessera.InvalidArgument, match="argument 'sqr_sum': expected a contiguous tensor"):
        hc(a, b, d, torch.zeros(64, 2)[:, 0])
    # Padded rows are fine for a, b and d: the op gets as far as the device check.
    a_pad, b_pad, d_pad = torch.zeros(64, 192, dtype=torch.bfloat16), torch.zeros(24, 160), torch.zeros(64, 32)
    with pytest.raises(tessera.InvalidArgument, match="expected a CUDA tensor"):
        hc(a_pad[:, :128], b_pad[:, :128], d_pad[:, :24], s)


def test_m_zero_needs_no_gpu():
    a, b, d, s = args(m=0)
    hc(a, b, d, s)
    a, b, d, s = args(m=0, num_splits=16)
    hc(a, b, d, s, num_splits=16)
