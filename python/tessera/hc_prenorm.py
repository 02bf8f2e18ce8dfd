"""The TF32 HyperConnection pre-norm GEMM (DeepGEMM's tf32_hc_prenorm_gemm) on SM90.

d = a @ b.T on TF32 tensor cores and sqr_sum = (a.float() ** 2).sum(-1), with a [M, K] BF16 and b [N, K] FP32
(K-major). num_splits=None writes d [M, N] and sqr_sum [M] (the kernel may split K over CTAs itself and sums the
partials in a fixed order); num_splits=s writes the partial sums of s K chunks to d [s, M, N] and sqr_sum [s, M]. The
C++ op checks every tensor argument.
"""
import operator

from . import _C
from ._C import InvalidArgument, TypeMismatch

_OP = "tf32_hc_prenorm_gemm"


def _splits(num_splits):
    """DeepGEMM's Optional[int] as the C++ op's count: None -> 0, else an int >= 1."""
    if num_splits is None:
        return 0
    if isinstance(num_splits, bool):
        raise TypeMismatch(f"{_OP}: argument 'num_splits': expected None or an int, got bool")
    try:
        value = operator.index(num_splits)
    except TypeError:
        raise TypeMismatch(f"{_OP}: argument 'num_splits': expected None or an int, got "
                           f"{type(num_splits).__name__}") from None
    if value < 1:
        raise InvalidArgument(f"{_OP}: argument 'num_splits': expected None or an int >= 1, got {value}")
    return value


def tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits=None):
    """a [M, K] BF16, b [N, K] FP32, d [M, N] or [num_splits, M, N] FP32, sqr_sum [M] or [num_splits, M] FP32."""
    _C.tf32_hc_prenorm_gemm(a, b, d, sqr_sum, _splits(num_splits))
