"""Argument checks shared by the op modules."""
import torch

from ._C import InvalidArgument, TypeMismatch


def pair(op, name, x):
    """(tensor, scale factors) from a 2-sequence. A bare tensor is refused even when its first dimension is 2, which
    unpacking alone would silently split into two rows."""
    if isinstance(x, torch.Tensor):
        raise TypeMismatch(f"{op}: argument '{name}': expected a pair (tensor, scale factors), got a single tensor of "
                           f"shape {tuple(x.shape)}")
    try:
        tensor, sf = x
    except (TypeError, ValueError):
        raise TypeMismatch(f"{op}: argument '{name}': expected a pair (tensor, scale factors), got "
                           f"{type(x).__name__}") from None
    return tensor, sf


_OUT_DTYPES = (torch.bfloat16, torch.float32)


def check_tensor(op, name, t, dtypes, ndim=2):
    if not isinstance(t, torch.Tensor):
        raise TypeMismatch(f"{op}: argument '{name}': expected a torch.Tensor, got {type(t).__name__}")
    if t.dtype not in dtypes:
        names = " or ".join(str(x).replace("torch.", "") for x in dtypes)
        raise TypeMismatch(f"{op}: argument '{name}': expected dtype {names}, got {str(t.dtype).replace('torch.', '')}")
    if t.dim() != ndim:
        raise InvalidArgument(f"{op}: argument '{name}': expected {ndim} dimensions, got shape {tuple(t.shape)}")


def gemm_nt(op, a, b, d, c, launch, in_dtypes=(torch.bfloat16,)):
    """a [M, K], b [N, K] (any majors), d [M, N]: d = c + a @ b.T through launch(a, b, d, c). The C++ op copies c into
    d only once every argument has passed, so a rejected call leaves d untouched."""
    check_tensor(op, "a", a, in_dtypes)
    check_tensor(op, "b", b, (a.dtype,))
    check_tensor(op, "d", d, _OUT_DTYPES)
    m, k = a.shape
    if b.shape[1] != k:
        raise InvalidArgument(f"{op}: argument 'b': expected K = {k} (from a), got shape {tuple(b.shape)}")
    if tuple(d.shape) != (m, b.shape[0]):
        raise InvalidArgument(f"{op}: argument 'd': expected shape {(m, b.shape[0])}, got {tuple(d.shape)}")
    if c is not None:
        check_tensor(op, "c", c, (d.dtype,))
        if tuple(c.shape) != tuple(d.shape):
            raise InvalidArgument(f"{op}: argument 'c': expected shape {tuple(d.shape)} (that of d), got "
                                  f"{tuple(c.shape)}")
    if d.numel() == 0:
        return
    if k == 0:  # an empty product: D = C, or zeros
        if c is None:
            d.zero_()
        elif c.data_ptr() != d.data_ptr():
            d.copy_(c)
        return
    launch(a, b, d, c)
