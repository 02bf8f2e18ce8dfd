"""The FP8 suites: DeepGEMM's own test shapes (tests/test_fp8_fp4.py and shared/reference/h200-baselines.md), each
row called the same way on tessera and on DeepGEMM (the functions share names and arguments), on the same inputs:
scale factors are passed as a caller holds them (row-major FP32), so a library that transposes them first pays for
that kernel in its time. cuBLASLt through torch._scaled_mm is the anchor that runs on every machine."""
import random

from rows import Row, Suite, align, split_total
import deepgemm_peer as peer_module

try:
    import torch
except ImportError:
    torch = None

DENSE_M = (1, 128, 4096)
WGRAD_N = 4096  # the 1D1D weight-gradient rows: M = N of a pair, N = 4096, K = K of the pair
NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
MASKED_M_MAX = 4096


def randn(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16)


def pad_rows(x, rows):
    if x.shape[0] >= rows:
        return x
    out = x.new_zeros(rows, *x.shape[1:])
    out[:x.shape[0]] = x
    return out


def cublas_per_tensor(a8, b8, out_dtype):
    """cuBLASLt FP8 with per-tensor scales (no block-scale promotion): A [M, K] x B [N, K]ᵀ, M padded to 16."""
    a = pad_rows(a8, align(max(a8.shape[0], 16), 16))
    one = torch.ones((), device="cuda")
    return lambda: torch._scaled_mm(a, b8.t(), one, one, out_dtype=out_dtype)


def cublas_block_scaled(a8, sfa, b8, sfb, out_dtype):
    """cuBLASLt FP8 with DeepSeek-style block scales through torch._scaled_mm (SM90, CUDA >= 12.9, torch >= 2.8):
    scale_a [M, K/128] M-major; B 128x128 scales seen transposed with a row pitch rounded up to 4; B 1x128 scales as
    a contiguous [K/128, N]. M padded to 16 (cuBLASLt refuses M = 1)."""
    m, kb = sfa.shape
    mp = align(max(m, 16), 16)
    a = pad_rows(a8, mp)
    scale_a = torch.ones(kb, mp, device="cuda")
    scale_a[:, :m] = sfa.t()
    scale_a = scale_a.t()
    if sfb.shape[0] == b8.shape[0]:
        scale_b = sfb.t().contiguous()
    else:
        scale_b = torch.zeros(sfb.shape[0], align(kb, 4), device="cuda")
        scale_b[:, :kb] = sfb
        scale_b = scale_b[:, :kb].t()
    return lambda: torch._scaled_mm(a, b8.t(), scale_a, scale_b, out_dtype=out_dtype)


def cat_flat(blocks):
    """FP8 blocks concatenated, flattened, through a uint8 view."""
    return torch.cat([blk.contiguous().view(torch.uint8).flatten() for blk in blocks]).view(torch.float8_e4m3fn)


def dense(ctx):
    utils = ctx.tessera.utils
    pairs = NK[::3] if ctx.quick else NK
    bf16, f32 = torch.bfloat16, torch.float32
    for m in DENSE_M:
        for n, k in pairs:  # 1D2D: BF16 out, A 1x128, B 128x128
            a, b = randn(m, k), randn(n, k)
            (a8, sfa), (b8, sfb) = utils.per_token_cast_to_fp8(a, use_ue8m0=False), \
                utils.per_block_cast_to_fp8(b, use_ue8m0=False)
            d = torch.empty(m, n, device="cuda", dtype=bf16)
            yield Row(f"1d2d {m}x{n}x{k}", dict(kind="1d2d", m=m, n=n, k=k), flops=2 * m * n * k,
                      nbytes=m * k + n * k + 4 * (sfa.numel() + sfb.numel()) + 2 * m * n,
                      calls=ctx.both(lambda lib: lib.fp8_gemm_nt((a8, sfa), (b8, sfb), d)),
                      baselines={"cublas_pt": cublas_per_tensor(a8, b8, bf16),
                                 "cublas_bs": cublas_block_scaled(a8, sfa, b8, sfb, bf16)},
                      recorded_us=peer_module.RECORDED_DENSE.get((m, n, k)), bucket=f"M={m}",
                      config=ctx.config("dense", m, n, k))
    for n_pair, k in pairs:
        # The 1D1D weight gradient as DeepGEMM's test enumerates it on SM90: FP32 out, D = C + A·Bᵀ with c = d.
        m, n = n_pair, WGRAD_N
        (a8, sfa), (b8, sfb) = utils.per_token_cast_to_fp8(randn(m, k), use_ue8m0=False), \
            utils.per_token_cast_to_fp8(randn(n, k), use_ue8m0=False)
        d = torch.zeros(m, n, device="cuda", dtype=f32)
        yield Row(f"1d1d {m}x{n}x{k}", dict(kind="1d1d", m=m, n=n, k=k), flops=2 * m * n * k,
                  nbytes=m * k + n * k + 4 * (sfa.numel() + sfb.numel()) + 8 * m * n,
                  calls=ctx.both(lambda lib: lib.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=d, recipe=(1, 1, 128))),
                  baselines={"cublas_pt": cublas_per_tensor(a8, b8, f32),
                             "cublas_bs": cublas_block_scaled(a8, sfa, b8, sfb, f32)},
                  bucket="1d1d wgrad", config=ctx.config("dense_1d1d", m, n, k))


def contiguous(ctx, psum=False):
    """m-grouped contiguous: per expert a 128-aligned segment whose tail is padding (-1 in the per-row layout, zero
    rows of A), M = expected x U(0.7, 1.3) as in DeepGEMM's test, scaled to the recorded M total. psum: the same
    segments given as cumulative group ends (each group starting at the next 128-aligned row)."""
    utils = ctx.tessera.utils
    rng = random.Random(0)
    for (g, m_total, n, k), recorded in list(peer_module.RECORDED_CONTIGUOUS.items())[::4 if ctx.quick else 1]:
        layout = torch.full((m_total,), -1, dtype=torch.int32)
        ends = []
        start = valid = 0
        for e, blocks in enumerate(split_total(m_total // 128, g, rng)):
            rows = max(1, blocks * 128 - rng.randrange(128)) if blocks else 0
            layout[start:start + rows] = e
            ends.append(start + rows)
            start, valid = start + blocks * 128, valid + rows
        a = randn(m_total, k) * (layout.cuda() >= 0).unsqueeze(1)
        layout = (torch.tensor(ends, dtype=torch.int32) if psum else layout).cuda()
        (a8, sfa) = utils.per_token_cast_to_fp8(a, use_ue8m0=False)
        b8, sfb = utils.per_block_cast_to_fp8(randn(g * n, k), use_ue8m0=False)
        b8, sfb = b8.view(g, n, k), sfb.view(g, n // 128, -1)
        d = torch.empty(m_total, n, device="cuda", dtype=torch.bfloat16)
        extra = dict(use_psum_layout=True, expected_m_for_psum_layout=m_total // g) if psum else {}
        yield Row(f"g{g} {m_total}x{n}x{k}", dict(groups=g, m_total=m_total, m_valid=valid, n=n, k=k),
                  flops=2 * m_total * n * k,  # padded rows included, as DeepGEMM counts them
                  nbytes=m_total * k + g * n * k + 4 * (sfa.numel() + sfb.numel()) + 2 * m_total * n +
                  4 * (g if psum else m_total),
                  calls=ctx.both(lambda lib: lib.m_grouped_fp8_gemm_nt_contiguous((a8, sfa), (b8, sfb), d, layout,
                                                                                  **extra)),
                  baselines={"cublas_pt_dense": cublas_per_tensor(a8, b8[0], torch.bfloat16)},
                  recorded_us=None if psum else recorded, bucket="psum" if psum else "contiguous",
                  config=ctx.config("psum" if psum else "contiguous", m_total, n, k, g, m_total // g if psum else 0))


def masked(ctx):
    utils = ctx.tessera.utils
    rng = random.Random(0)
    for (g, expected, valid, n, k), recorded in list(peer_module.RECORDED_MASKED.items())[::4 if ctx.quick else 1]:
        counts = split_total(valid, g, rng)  # masked_m in expected x U(0.7, 1.3), scaled to the recorded total
        masked_m = torch.tensor(counts, device="cuda", dtype=torch.int32)
        active = sum(c > 0 for c in counts)
        a8, sfa = utils.per_token_cast_to_fp8(randn(g * MASKED_M_MAX, k), use_ue8m0=False)
        b8, sfb = utils.per_block_cast_to_fp8(randn(g * n, k), use_ue8m0=False)
        anchor = cublas_per_tensor(a8[:g * expected], b8[:n], torch.bfloat16)
        a8, sfa = a8.view(g, MASKED_M_MAX, k), sfa.view(g, MASKED_M_MAX, -1)
        b8, sfb = b8.view(g, n, k), sfb.view(g, n // 128, -1)
        kb = sfb.shape[-1]
        d = torch.empty(g, MASKED_M_MAX, n, device="cuda", dtype=torch.bfloat16)
        yield Row(f"g{g} e{expected} v{valid} {n}x{k}", dict(groups=g, expected_m=expected, m_valid=valid, n=n, k=k),
                  flops=2 * valid * n * k,  # valid rows only; bytes: valid rows and the active experts' weights
                  nbytes=valid * k + active * n * k + 4 * (valid + active * (n // 128)) * kb + 2 * valid * n + 4 * g,
                  calls=ctx.both(lambda lib: lib.m_grouped_fp8_gemm_nt_masked((a8, sfa), (b8, sfb), d, masked_m,
                                                                              expected)),
                  baselines={"cublas_pt_GxE": anchor}, recorded_us=recorded, bucket="masked",
                  config=ctx.config("masked", MASKED_M_MAX, n, k, g, expected))


def kgrouped(ctx):
    utils = ctx.tessera.utils
    rng = random.Random(0)
    for (g, m, n, total_k), recorded in list(peer_module.RECORDED_KGROUPED.items())[::4 if ctx.quick else 1]:
        ks = [u * 128 for u in split_total(total_k // 128, g, rng)]
        # Groups are 128-aligned in K, so the 1x128 scales of the whole [M, ΣK] are those of each group.
        (a8, sfa), (b8, sfb) = utils.per_token_cast_to_fp8(randn(m, total_k), use_ue8m0=False), \
            utils.per_token_cast_to_fp8(randn(n, total_k), use_ue8m0=False)
        a_flat, b_flat = cat_flat(a8.split(ks, dim=1)), cat_flat(b8.split(ks, dim=1))
        # SM90 k-grouped takes MN-major scales (DeepGEMM's test hands them over transposed).
        sfa_t, sfb_t = sfa.t().contiguous().t(), sfb.t().contiguous().t()
        ks_tensor = torch.tensor(ks, device="cuda", dtype=torch.int32)
        d = torch.zeros(g, m, n, device="cuda", dtype=torch.float32)
        yield Row(f"g{g} {m}x{n}x{total_k}", dict(groups=g, m=m, n=n, k_total=total_k, ks=ks),
                  flops=2 * m * n * total_k, nbytes=(m + n) * total_k + 4 * (sfa.numel() + sfb.numel()) + 8 * g * m * n,
                  calls=ctx.both(lambda lib: lib.k_grouped_fp8_gemm_nt_contiguous(
                      (a_flat, sfa_t), (b_flat, sfb_t), d, ks, ks_tensor, c=d, recipe=(1, 1, 128))),
                  baselines={"cublas_pt_sumK": cublas_per_tensor(a8, b8, torch.float32)},
                  recorded_us=recorded, bucket="k-grouped", config=ctx.config("k_grouped", m, n, total_k, g))


SUITES = [
    Suite("fp8-dense", dense),
    Suite("fp8-contiguous", contiguous),
    Suite("fp8-psum", lambda ctx: contiguous(ctx, psum=True)),
    Suite("fp8-masked", masked),
    Suite("fp8-kgrouped", kgrouped),
]
