"""DeepGEMM's legacy names on the GPU, routed to tessera's BF16 kernels: m-grouped contiguous (nt, nn, and the
a-fused row gather) and k-grouped TN with a- or b-fused row gathers, accumulating or not, against float64
references. Reached through tessera.legacy's private functions until the public names route there."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

from tessera import legacy  # noqa: E402
from tessera.testing import calc_diff  # noqa: E402


def m_grouped(rows, n, k):
    seg = [(r + 127) // 128 * 128 for r in rows]
    m = sum(seg)
    ids = torch.full((m,), -1, dtype=torch.int32)
    start = 0
    for g, (r, s) in enumerate(zip(rows, seg)):
        ids[start:start + r] = g
        start += s
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(len(rows), n, k, device="cuda", dtype=torch.bfloat16)
    ids = ids.cuda()
    ref = torch.zeros(m, n, device="cuda", dtype=torch.float64)
    for g in range(len(rows)):
        sel = ids == g
        ref[sel] = a[sel].double() @ b[g].double().T
    return a, b, ids, ref


@pytest.mark.parametrize("layout", ["nt", "nn"])
def test_m_grouped_contiguous_tl(layout):
    a, b, ids, ref = m_grouped([100, 256, 3], 512, 1024)
    d = torch.full(tuple(ref.shape), float("nan"), device="cuda", dtype=torch.bfloat16)
    if layout == "nt":
        legacy.m_grouped_bf16_gemm_nt_contiguous_tl(a, b, d, ids)
    else:
        legacy.m_grouped_bf16_gemm_nn_contiguous_tl(a, b.mT.contiguous(), d, ids)
    assert calc_diff(d, ref) < 1e-5


def test_a_fused_m_grouped_gathers_rows():
    a, b, ids, ref = m_grouped([64, 200], 256, 512)
    perm = torch.randperm(a.size(0), device="cuda").int()
    shuffled = torch.empty_like(a)
    shuffled[perm.long()] = a  # row perm[r] of `shuffled` holds row r of a
    d = torch.full(tuple(ref.shape), float("nan"), device="cuda", dtype=torch.bfloat16)
    legacy.a_fused_m_grouped_bf16_gemm_nt_contiguous_tl(shuffled, b, d, (ids, perm))
    assert calc_diff(d, ref) < 1e-5


@pytest.mark.parametrize("fused", ["a", "b"])
@pytest.mark.parametrize("acc", [True, False])
def test_k_grouped_tl(fused, acc):
    ks, m, n = [256, 0, 384, 128], 384, 640
    total = sum(ks)
    a = torch.randn(total, m, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(total, n, device="cuda", dtype=torch.bfloat16)
    perm = torch.randperm(total, device="cuda").int()
    fused_src = (a if fused == "a" else b)
    gathered = torch.empty_like(fused_src)
    gathered[perm.long()] = fused_src  # row k of the product reads gathered[perm[k]] == fused_src[k]
    starts = torch.tensor([sum(ks[:i]) for i in range(len(ks))], dtype=torch.int32, device="cuda")
    ends = starts + torch.tensor(ks, dtype=torch.int32, device="cuda")
    c = torch.randn(len(ks), m, n, device="cuda")
    ref = (c.double() if acc else torch.zeros_like(c, dtype=torch.float64)).clone()
    for g, k in enumerate(ks):
        s = sum(ks[:g])
        ref[g] += a[s:s + k].double().T @ b[s:s + k].double()
    d = c.clone()
    args = (gathered, b) if fused == "a" else (a, gathered)
    fn = legacy.a_fused_k_grouped_bf16_gemm_tn_contiguous_tl if fused == "a" else \
        legacy.b_fused_k_grouped_bf16_gemm_tn_contiguous_tl
    fn(*args, d, (perm, starts, ends), acc)
    assert calc_diff(d, ref) < 1e-5
