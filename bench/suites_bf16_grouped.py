"""The grouped BF16 suite: DeepGEMM's grouped BF16 test shapes (tests/test_bf16.py), tessera's and DeepGEMM's
functions of the same name (m_grouped_bf16_gemm_*, k_grouped_bf16_gemm_tn_contiguous) on the same tensors.

* m-grouped contiguous: (groups, expected M) in {(4, 8192), (8, 4096)} x four (N, K), each group's M drawn as
  expected x U(0.7, 1.3) and padded to 128 rows (zero rows of A); per-row expert ids (-1 on padding rows) or psum
  (cumulative group ends); B K-major through the nt name, or given as [G, K, N] through the nn name.
* masked: (groups, expected M) in {(32, 192), (6, 1024), (32, 20), (6, 20)}, M_max = 4096, masked_m drawn as above;
  and the same groups handed over as a psum layout with expected_m_for_psum_layout, as DeepGEMM's test does.
* k-grouped TN: (groups, M, N, expected K) of DeepGEMM's six configurations, each K drawn as above and aligned to
  128; A [sum K, M], B [sum K, N], FP32 D = C + A_gᵀ·B_g with c = d.

Group sizes come from a generator seeded by the case, so a row holds the same sizes in every run, quick or full.
Baselines (cuBLAS through torch, same FLOPs or fewer): one dense GEMM over all rows of A with the first expert's
weights (contiguous); a batched GEMM over the largest masked count (masked); one GEMM over the summed K (k-grouped).
"""
import random

from rows import Row, Suite, align
import suites_bf16 as shared
from suites_bf16 import paired_calls, randn

try:
    import torch
except ImportError:
    torch = None

ALIGN = 128  # get_mk_alignment_for_contiguous_layout() on SM90
NK = [(6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)]
CONTIGUOUS_GROUPS = [(4, 8192), (8, 4096)]
MASKED_GROUPS = [(32, 192), (6, 1024), (32, 20), (6, 20)]
MASKED_M_MAX = 4096
KGROUPED = [(4, 4096, 7168, 8192), (4, 7168, 2048, 8192), (8, 4096, 7168, 4096), (8, 7168, 2048, 4096),
            (16, 4096, 7168, 2048), (16, 7168, 2048, 2048)]


def contiguous_cases(quick):
    """(groups, expected M per group, N, K, layout 'nt' | 'nn', psum) in DeepGEMM's order."""
    groups = CONTIGUOUS_GROUPS[:1] if quick else CONTIGUOUS_GROUPS
    nk = NK[::2] if quick else NK
    return [(g, e, n, k, layout, psum) for psum in (True, False) for g, e in groups for n, k in nk
            for layout in ("nt", "nn")]


def masked_cases(quick):
    """(groups, expected M per group, N, K, psum)."""
    groups = MASKED_GROUPS[::2] if quick else MASKED_GROUPS
    nk = NK[:1] if quick else NK
    return [(g, e, n, k, psum) for psum in (False, True) for g, e in groups for n, k in nk]


def kgrouped_cases(quick):
    """(groups, M, N, expected K per group)."""
    return KGROUPED[::3] if quick else list(KGROUPED)


def group_sizes(case, expected, groups, granule=1):
    """Per group: expected x U(0.7, 1.3) (at least 1), aligned to `granule`; drawn from a generator seeded by `case`."""
    rng = random.Random(repr(case))
    return [align(max(1, int(expected * rng.uniform(0.7, 1.3))), granule) for _ in range(groups)]


def contiguous_layout(rows_per_group, psum, device=None):
    """(M total, grouped_layout, valid-row mask [M]) for groups of `rows_per_group` rows, each padded to ALIGN rows:
    per-row expert ids with -1 on the padding, or with psum each group's end row."""
    device = device or shared.DEVICE
    ids, ends, start = [], [], 0
    for g, rows in enumerate(rows_per_group):
        padded = align(rows, ALIGN)
        ids += [g] * rows + [-1] * (padded - rows)
        ends.append(start + rows)
        start += padded
    layout = torch.tensor(ends if psum else ids, dtype=torch.int32, device=device)
    valid = torch.tensor(ids, dtype=torch.int32, device=device) >= 0
    return start, layout, valid


def psum_ends(counts):
    """The psum layout of masked counts: group g ends at align(end of g - 1, ALIGN) + counts[g]."""
    ends, end = [], 0
    for c in counts:
        end = align(end, ALIGN) + c
        ends.append(end)
    return ends


def contiguous(ctx):
    for case in contiguous_cases(ctx.quick):
        g, expected, n, k, layout, psum = case
        rows = group_sizes(case, expected, g)
        m, grouped, valid = contiguous_layout(rows, psum)
        a = randn(m, k) * valid.unsqueeze(1)  # zero padding rows, as DeepGEMM's generator makes them
        b = randn(g, n, k)
        b_arg = b if layout == "nt" else b.mT.contiguous()  # nn: B given as [G, K, N]
        d = torch.empty(m, n, device=shared.DEVICE, dtype=torch.bfloat16)
        kwargs = dict(use_psum_layout=psum, ensure_zero_padding=False)  # SM90's only case in DeepGEMM's test
        tag = layout + (" psum" if psum else "")
        yield Row(f"{tag} g{g} {m}x{n}x{k}",
                  dict(kind="contiguous", layout=layout, psum=psum, groups=g, expected_m=expected, m_total=m,
                       m_valid=sum(rows), n=n, k=k),
                  flops=2 * m * n * k,  # padded rows included, as DeepGEMM counts them
                  nbytes=2 * (m * k + g * n * k + m * n) + 4 * grouped.numel(),
                  calls=paired_calls(ctx, f"m_grouped_bf16_gemm_{layout}_contiguous",
                                      lambda fn: fn(a, b_arg, d, grouped, **kwargs)),
                  baselines={"cublas_dense": lambda: torch.matmul(a, b[0].t())}, bucket=f"contiguous {tag}")


def masked(ctx):
    for case in masked_cases(ctx.quick):
        g, expected, n, k, psum = case
        counts = group_sizes(case, expected, g)
        valid, top = sum(counts), max(counts)
        a, b = randn(g, MASKED_M_MAX, k), randn(g, n, k)
        d = torch.empty(g, MASKED_M_MAX, n, device=shared.DEVICE, dtype=torch.bfloat16)
        if psum:  # the groups packed at ALIGN-row starts in A [G * M_max, K], as DeepGEMM's test converts them
            grouped = torch.tensor(psum_ends(counts), dtype=torch.int32, device=shared.DEVICE)
            a2, d2 = a.view(-1, k), d.view(-1, n)
            name, call = "m_grouped_bf16_gemm_nt_contiguous", \
                lambda fn: fn(a2, b, d2, grouped, use_psum_layout=True, expected_m_for_psum_layout=expected)
        else:
            masked_m = torch.tensor(counts, dtype=torch.int32, device=shared.DEVICE)
            name, call = "m_grouped_bf16_gemm_nt_masked", lambda fn: fn(a, b, d, masked_m, expected)
        yield Row(f"{'psum ' if psum else ''}g{g} e{expected} v{valid} {n}x{k}",
                  dict(kind="masked", psum=psum, groups=g, expected_m=expected, m_valid=valid, n=n, k=k),
                  flops=2 * valid * n * k,  # valid rows only
                  nbytes=2 * (valid * k + g * n * k + valid * n) + 4 * g,
                  calls=paired_calls(ctx, name, call),
                  baselines={"cublas_bmm_top": lambda: torch.bmm(a[:, :top], b.mT)},
                  bucket="masked psum" if psum else "masked")


def kgrouped(ctx):
    for case in kgrouped_cases(ctx.quick):
        g, m, n, expected_k = case
        ks = group_sizes(case, expected_k, g, granule=ALIGN)
        total_k = sum(ks)
        a, b = randn(total_k, m), randn(total_k, n)
        d = torch.randn(g, m, n, device=shared.DEVICE, dtype=torch.float32) * 32
        layout = torch.tensor(ks, dtype=torch.int32, device=shared.DEVICE)
        yield Row(f"tn g{g} {m}x{n}x{total_k}", dict(kind="k-grouped", groups=g, m=m, n=n, k_total=total_k, ks=ks),
                  flops=2 * m * n * total_k, nbytes=2 * (m + n) * total_k + 8 * g * m * n,
                  calls=paired_calls(ctx, "k_grouped_bf16_gemm_tn_contiguous",
                                      lambda fn: fn(a, b, d, ks, layout, c=d)),
                  baselines={"cublas_sumK": lambda: torch.matmul(a.t(), b)}, bucket="k-grouped tn")


def bf16_grouped(ctx):
    yield from contiguous(ctx)
    yield from masked(ctx)
    yield from kgrouped(ctx)


SUITES = [Suite("bf16-grouped", bf16_grouped)]
