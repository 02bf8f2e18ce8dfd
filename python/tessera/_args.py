"""Argument checks shared by the op modules."""
import torch

from ._C import TypeMismatch


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
