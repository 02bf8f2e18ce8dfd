"""Accuracy metrics used by every test: calc_diff, count_bytes, assert_bitwise_equal."""
import torch

__all__ = ['calc_diff', 'count_bytes', 'assert_bitwise_equal']


def calc_diff(x: torch.Tensor, y: torch.Tensor):
    """1 - cosine-like similarity, in float64: 1 - 2*sum(x*y) / sum(x^2 + y^2).

    0 means identical, 1 uncorrelated, 2 opposite. Returns Python 0.0 when both inputs are all
    zero (the ratio is undefined there), otherwise a 0-d float64 tensor; NaN inputs give NaN.
    """
    x, y = x.double(), y.double()
    denominator = (x * x + y * y).sum()
    if denominator == 0:
        return 0.0
    return 1 - 2 * (x * y).sum() / denominator


def count_bytes(*tensors) -> int:
    """Total numel * element_size, recursing into tuples/lists and skipping None."""
    total = 0
    for t in tensors:
        if t is None:
            continue
        if isinstance(t, (tuple, list)):
            total += count_bytes(*t)
        else:
            total += t.numel() * t.element_size()
    return total


def assert_bitwise_equal(x: torch.Tensor, y: torch.Tensor, label: str = ''):
    """Same shape, same dtype, identical bytes (so NaN == NaN, but -0.0 != 0.0)."""
    prefix = f'{label}: ' if label else ''
    assert x.shape == y.shape, f'{prefix}shape mismatch: {tuple(x.shape)} vs {tuple(y.shape)}'
    assert x.dtype == y.dtype, f'{prefix}dtype mismatch: {x.dtype} vs {y.dtype}'
    if x.numel() == 0:
        return
    # Compare element-wise on the raw bytes: one row of element_size bytes per element.
    xb = x.detach().reshape(-1).contiguous().view(torch.uint8).view(x.numel(), -1)
    yb = y.detach().to(x.device).reshape(-1).contiguous().view(torch.uint8).view(x.numel(), -1)
    mismatch = (xb != yb).any(dim=1)
    if bool(mismatch.any()):
        flat = int(mismatch.nonzero()[0, 0])
        index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), x.shape))
        raise AssertionError(
            f'{prefix}{int(mismatch.sum())} of {x.numel()} elements differ; first at {index}: '
            f'{x.reshape(-1)[flat].item()!r} (bytes {xb[flat].tolist()}) vs '
            f'{y.reshape(-1)[flat].item()!r} (bytes {yb[flat].tolist()})')
