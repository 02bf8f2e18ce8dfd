"""Float64 dequantization of FP8 operands for the GPU tests' references (shared by the dense and grouped tests)."""


def dequant_rows(x, sf):
    """x e4m3 [R, K], sf [R, ceil(K/128)] (one scale per row and 128 K) -> float64 [R, K]."""
    k = x.shape[1]
    return x.double() * sf.double().repeat_interleave(128, dim=1)[:, :k]


def dequant_blocks(x, sf):
    """x e4m3 [R, K], sf [ceil(R/128), ceil(K/128)] (one scale per 128x128 block) -> float64 [R, K]."""
    r, k = x.shape
    return x.double() * sf.double().repeat_interleave(128, 0).repeat_interleave(128, 1)[:r, :k]
