"""The cuBLASLt wrappers on the GPU: BF16 in all four layouts (BF16 and FP32 D, with and without C) and unscaled FP8
K-major, against a float64 reference; outputs poisoned first; FP8 in another layout refused with nothing written."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

from tessera import cublaslt as lt  # noqa: E402
from tessera.testing import calc_diff  # noqa: E402

LAYOUTS = {"nt": lt.cublaslt_gemm_nt, "nn": lt.cublaslt_gemm_nn, "tn": lt.cublaslt_gemm_tn,
           "tt": lt.cublaslt_gemm_tt}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("m,n,k", [(1, 2112, 7168), (128, 576, 7168), (4096, 4096, 2048), (65, 136, 1000)])
@pytest.mark.parametrize("out,with_c", [(torch.bfloat16, False), (torch.float32, True), (torch.bfloat16, True)])
def test_bf16_layouts(layout, m, n, k, out, with_c):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a_arg = a.T.contiguous() if layout[0] == "t" else a
    b_arg = b.T.contiguous() if layout[1] == "n" else b
    ref = a.double() @ b.double().T
    d = torch.full((m, n), float("nan"), device="cuda", dtype=out)
    c = None
    if with_c:
        c = torch.randn(m, n, device="cuda", dtype=out)
        ref = ref + c.double()
        d.copy_(c)
        c = d
    LAYOUTS[layout](a_arg, b_arg, d, c=c)
    assert not torch.isnan(d).any()
    assert calc_diff(d, ref) < 1e-5


@pytest.mark.parametrize("offset", [1, 3, 8])
def test_views_at_any_element_offset(offset):
    # Operands and output start `offset` BF16 elements into their storage (2- to 16-byte aligned pointers, odd leading
    # dimensions): cuBLASLt must be told the alignment or it may pick a kernel that assumes 256 bytes.
    m, n, k = 200, 136, 1000
    a = torch.randn(m * (k + 3) + offset, device="cuda", dtype=torch.bfloat16)[offset:].view(m, k + 3)[:, :k]
    b = torch.randn(n * (k + 5) + offset, device="cuda", dtype=torch.bfloat16)[offset:].view(n, k + 5)[:, :k]
    dbuf = torch.full((m * (n + 1) + offset,), float("nan"), device="cuda", dtype=torch.bfloat16)
    d = dbuf[offset:].view(m, n + 1)[:, :n]
    lt.cublaslt_gemm_nt(a, b, d)
    assert calc_diff(d, a.double() @ b.double().T) < 1e-5
    assert torch.isnan(dbuf[:offset]).all() and torch.isnan(dbuf[offset:].view(m, n + 1)[:, n]).all()


@pytest.mark.parametrize("m,n,k", [(128, 2112, 7168), (4096, 576, 7168)])
@pytest.mark.parametrize("out", [torch.bfloat16, torch.float32])
def test_fp8_k_major_unscaled(m, n, k, out):
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=out)
    lt.cublaslt_gemm_nt(a, b, d)
    assert calc_diff(d, a.double() @ b.double().T) < 1e-5


def test_fp8_in_another_layout_is_refused():
    a = torch.randn(128, 256, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(256, 64, device="cuda").to(torch.float8_e4m3fn)
    d = torch.full((128, 64), 7.0, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="FP8 operands must be K-major"):
        lt.cublaslt_gemm_nn(a, b, d)
    assert bool((d == 7.0).all())


@pytest.mark.parametrize("mn_b", [False, True])
def test_strided_batch(mn_b):
    # d[g] = a[g] @ b[g].T over permuted (non-contiguous) views, the shape einsum's use_cublaslt path passes.
    a = torch.randn(40, 6, 256, device="cuda", dtype=torch.bfloat16).permute(1, 0, 2)  # [6, 40, 256]
    b = torch.randn(6, 96, 256, device="cuda", dtype=torch.bfloat16)
    if mn_b:
        b = b.mT.contiguous().mT
    d = torch.full((40, 6, 96), float("nan"), device="cuda", dtype=torch.bfloat16).permute(1, 0, 2)
    lt._cublaslt_bmm_nt(a, b, d)
    assert calc_diff(d, a.double() @ b.double().mT) < 1e-5


@pytest.mark.parametrize("variable", ["DG_USE_TEMP_CUBLASLT_WORKSPACE", "DG_USE_PYTORCH_CUBLASLT_HANDLE"])
def test_deepgemm_switches(variable):
    # Options are read once per process: the switch is tested in a child.
    import subprocess
    import sys
    import os
    code = ("import torch, tessera\nfrom tessera import cublaslt as lt\nfrom tessera.testing import calc_diff\n"
            "a = torch.randn(256, 512, device='cuda', dtype=torch.bfloat16)\n"
            "b = torch.randn(384, 512, device='cuda', dtype=torch.bfloat16)\n"
            "d = torch.empty(256, 384, device='cuda')\n"
            "for _ in range(3): lt.cublaslt_gemm_nt(a, b, d)\n"
            "assert calc_diff(d, a.double() @ b.double().T) < 1e-5\n"
            f"assert tessera._C.cublaslt_framework_handle() == {variable == 'DG_USE_PYTORCH_CUBLASLT_HANDLE'}\n")
    env = dict(os.environ, **{variable: "1"})
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
