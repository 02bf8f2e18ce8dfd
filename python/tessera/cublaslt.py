"""GEMMs through NVIDIA's cuBLASLt (DeepGEMM's cublaslt_gemm_{nt,nn,tn,tt}): D = C + A·Bᵀ with FP32 compute, the
reference its tests time the library's kernels against. A and B are BF16 in any layout, or FP8 e4m3 K-major
(unscaled)."""
import torch

from . import _C
from ._args import check_tensor as _check, gemm_nt as _gemm

_IN = (torch.bfloat16, torch.float8_e4m3fn)


def _handle():
    """torch's cuBLAS handle of the current device under DG_USE_PYTORCH_CUBLASLT_HANDLE (cuBLASLt takes a cuBLAS
    handle as its own), else None: tessera's private one."""
    return torch.cuda.current_blas_handle() if _C.cublaslt_framework_handle() else None


def _lt(a, b, d, c):
    _C.cublaslt_gemm_nt(a, b, d, c, handle=_handle())


def _cublaslt_bmm_nt(a, b, d):
    """d[g] = a[g] @ b[g].T over 3-D a [G, M, K], b [G, N, K], d [G, M, N] (strided batches)."""
    _C.cublaslt_bmm_nt(a, b, d, handle=_handle())


def cublaslt_gemm_nt(a, b, d, c=None):
    """a [M, K], b [N, K]."""
    _gemm("cublaslt_gemm_nt", a, b, d, c, _lt, _IN)


def cublaslt_gemm_nn(a, b, d, c=None):
    """b given as [K, N]."""
    _check("cublaslt_gemm_nn", "b", b, _IN)
    _gemm("cublaslt_gemm_nn", a, b.T, d, c, _lt, _IN)


def cublaslt_gemm_tn(a, b, d, c=None):
    """a given as [K, M], b as [K, N]."""
    _check("cublaslt_gemm_tn", "a", a, _IN)
    _check("cublaslt_gemm_tn", "b", b, _IN)
    _gemm("cublaslt_gemm_tn", a.T, b.T, d, c, _lt, _IN)


def cublaslt_gemm_tt(a, b, d, c=None):
    """a given as [K, M], b as [N, K]."""
    _check("cublaslt_gemm_tt", "a", a, _IN)
    _gemm("cublaslt_gemm_tt", a.T, b, d, c, _lt, _IN)
