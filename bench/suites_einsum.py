"""The einsum and HyperConnection suites (DeepGEMM's §1.6 group): shapes of tests/test_einsum.py and
tests/test_hyperconnection.py, tessera's and DeepGEMM's einsum, fp8_einsum and tf32_hc_prenorm_gemm on the same
tensors.

* einsum: 'bmk,bnk->mn' with S in {129, 4096, 8192} x (M, N, K) in {(128, 384, 128), (256, 256, 256), (384, 128, 384)},
  FP32 D accumulating (c = d) or BF16 D; 'bhr,hdr->bhd' and 'bhd,hdr->bhr' with (H, R, D) in {(128, 512, 128),
  (8, 4096, 1024)} x B in {4, 32, 128, 4096, 8192}, B operand sliced [:, :, :r] out of an r + 128 row pitch.
  Baseline: torch.einsum on the same BF16 tensors.
* fp8-einsum: 'bhr,hdr->bhd' with (H, R, D) = (8, 4096, 1024), the same B list; x cast per token (1x128) and y per
  128x128 block per head, FP32 scale factors rounded to powers of two (use_ue8m0=True, as DeepGEMM's test casts them).
  Baseline: torch.einsum of the BF16 tensors the FP8 ones were cast from.
* hc-prenorm: tf32_hc_prenorm_gemm with M in {13, 137, 4096, 8192} x (N, K) in {(24, 28672), (24, 7680), (24, 7168)}
  x num_splits in {None, 16}. Baseline hbm_copy moves the row's bytes as a device copy: the kernel reads A and little
  else, so its goal is >= 80 % of copy bandwidth at M >= 4096, i.e. ours/hbm_copy <= 1.25 (column copy_bw).
"""
from rows import Row, Suite, ceil_div
import suites_bf16 as shared
from suites_bf16 import hbm_copy, paired_calls, randn

try:
    import torch
except ImportError:
    torch = None

BMK_S = (129, 4096, 8192)
BMK_MNK = [(128, 384, 128), (256, 256, 256), (384, 128, 384)]
HEAD_HRD = [(128, 512, 128), (8, 4096, 1024)]
HEAD_B = (4, 32, 128, 4096, 8192)
FP8_HRD = [(8, 4096, 1024)]
HC_M = (13, 137, 4096, 8192)
HC_NK = [(24, 28672), (24, 7680), (24, 7168)]
HC_SPLITS = (None, 16)


def bmk_cases(quick):
    """(S, M, N, K, out 'fp32' | 'bf16')."""
    return [(s, m, n, k, out) for s in (BMK_S[1:2] if quick else BMK_S) for m, n, k in BMK_MNK[:2 if quick else 3]
            for out in ("fp32", "bf16")]


def head_cases(quick):
    """(expression, H, R, D, B)."""
    batches = HEAD_B[::2] if quick else HEAD_B
    return [(expr, h, r, d, b) for expr in ("bhr,hdr->bhd", "bhd,hdr->bhr") for h, r, d in HEAD_HRD for b in batches]


def fp8_cases(quick):
    """(H, R, D, B)."""
    return [(h, r, d, b) for h, r, d in FP8_HRD for b in (HEAD_B[::2] if quick else HEAD_B)]


def hc_cases(quick):
    """(M, N, K, num_splits)."""
    return [(m, n, k, s) for m in (HC_M[1::2] if quick else HC_M) for n, k in (HC_NK[:1] if quick else HC_NK)
            for s in HC_SPLITS]


def einsum_rows(ctx):
    for s, m, n, k, out in bmk_cases(ctx.quick):
        a, b = randn(s, m, k), randn(s, n, k)
        d = torch.randn(m, n, device=shared.DEVICE, dtype=torch.float32 if out == "fp32" else torch.bfloat16)
        c = d if out == "fp32" else None
        d_passes = 2 if c is not None else 1  # FP32 D is read (as C) and written
        yield Row(f"bmk,bnk->mn {out} s{s} {m}x{n}x{k}", dict(expr="bmk,bnk->mn", out=out, s=s, m=m, n=n, k=k),
                  flops=2 * s * m * n * k, nbytes=2 * s * (m + n) * k + d.element_size() * m * n * d_passes,
                  calls=paired_calls(ctx, "einsum", lambda fn: fn("bmk,bnk->mn", a, b, d, c=c)),
                  baselines={"torch": lambda: torch.einsum("bmk,bnk->mn", a, b)}, bucket=f"bmk {out}")
    for expr, h, r, dim, bsz in head_cases(ctx.quick):
        per_head = (r, dim) if expr.startswith("bhr") else (dim, r)  # x's last dim, z's last dim
        x = randn(bsz, h, per_head[0])
        y = randn(h, dim, r + 128)[:, :, :r]  # a padded row pitch, as DeepGEMM's test slices it
        z = torch.empty(bsz, h, per_head[1], device=shared.DEVICE, dtype=torch.bfloat16)
        yield Row(f"{expr} b{bsz} h{h} r{r} d{dim}", dict(expr=expr, b=bsz, h=h, r=r, d=dim),
                  flops=2 * bsz * h * r * dim, nbytes=2 * (bsz * h * r + h * dim * r + bsz * h * dim),
                  calls=paired_calls(ctx, "einsum", lambda fn: fn(expr, x, y, z)),
                  baselines={"torch": lambda: torch.einsum(expr, x, y)}, bucket=expr)


def fp8_einsum_rows(ctx):
    utils = ctx.tessera.utils
    for h, r, dim, bsz in fp8_cases(ctx.quick):
        x, y = randn(bsz, h, r), randn(h, dim, r)
        x8, sfx = utils.per_token_cast_to_fp8(x.view(-1, r), use_ue8m0=True)
        x_fp8 = x8.view(bsz, h, r), sfx.view(bsz, h, ceil_div(r, 128))
        heads = [utils.per_block_cast_to_fp8(y[i], use_ue8m0=True) for i in range(h)]  # [D, R] 128x128 blocks
        y_fp8 = (torch.stack([v.view(torch.uint8) for v, _ in heads]).view(torch.float8_e4m3fn),
                 torch.stack([sf for _, sf in heads]))  # [H, D, R] E4M3, [H, D/128, R/128] FP32
        z = torch.empty(bsz, h, dim, device=shared.DEVICE, dtype=torch.bfloat16)
        yield Row(f"fp8 bhr,hdr->bhd b{bsz} h{h} r{r} d{dim}", dict(expr="bhr,hdr->bhd", b=bsz, h=h, r=r, d=dim),
                  flops=2 * bsz * h * r * dim,
                  nbytes=bsz * h * r + h * dim * r + 4 * (x_fp8[1].numel() + y_fp8[1].numel()) + 2 * bsz * h * dim,
                  calls=paired_calls(ctx, "fp8_einsum", lambda fn: fn("bhr,hdr->bhd", x_fp8, y_fp8, z)),
                  baselines={"torch_bf16": lambda: torch.einsum("bhr,hdr->bhd", x, y)}, bucket="fp8 bhr,hdr->bhd")


def hc_prenorm_rows(ctx):
    for m, n, k, splits in hc_cases(ctx.quick):
        a = randn(m, k)
        b = torch.randn(n, k, device=shared.DEVICE, dtype=torch.float32)
        lead = () if splits is None else (splits,)
        d = torch.empty(*lead, m, n, device=shared.DEVICE, dtype=torch.float32)
        s = torch.empty(*lead, m, device=shared.DEVICE, dtype=torch.float32)
        nbytes = 2 * m * k + 4 * (n * k + d.numel() + s.numel())
        yield Row(f"hc m{m} n{n} k{k} splits={splits or 'auto'}", dict(m=m, n=n, k=k, num_splits=splits),
                  flops=2 * m * n * k, nbytes=nbytes,
                  calls=paired_calls(ctx, "tf32_hc_prenorm_gemm",
                                      lambda fn: fn(a, b, d, s, num_splits=splits)),
                  baselines={"hbm_copy": hbm_copy(nbytes)},
                  bucket=f"{'M>=4096' if m >= 4096 else 'M<4096'} splits={splits or 'auto'}")


SUITES = [Suite("einsum", einsum_rows), Suite("fp8-einsum", fp8_einsum_rows), Suite("hc-prenorm", hc_prenorm_rows)]
