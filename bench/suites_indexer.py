"""The indexer suite: the DeepSeek V3.2 lightning-indexer kernels on DeepGEMM's own test cases (tests/test_attention.py,
SM90 branches), tessera's and DeepGEMM's functions of the same name (fp8_gemm_nt_skip_head_mid, fp8_fp4_mqa_logits,
get_paged_mqa_logits_metadata, fp8_fp4_paged_mqa_logits) on the same tensors; a function a library lacks reports
'unavailable' for its rows.

* skip-head-mid: M in {128, 4096} x (N, K) in {(32768, 512), (8192, 512)}, head_splits (128, 64, 128), 1D2D FP8 with
  FP32 scales (A per token, B per 128x128 block), BF16 D. Baseline: tessera's fp8_gemm_nt of the same product into
  a plain [M, N] D (what skipping the mid columns costs).
* mqa: logits BF16 / FP32, FP32 weights, (compressed, clean_logits) in {(no, yes), (yes, no)}, S in {2048, 8192},
  S_kv in {8192, 65536}, H in {32, 64}, D in {32, 64, 128}, causal or DeepGEMM's context-parallel ranges; Q E4M3,
  KV E4M3 with one FP32 scale per row. With clean_logits the call includes the clean kernel; those rows also time
  tessera's clean kernel alone (baseline clean, on a logits buffer of the call's layout) beside clean_copy, an HBM copy
  of the bytes it writes: the goal is >= 80 % of copy bandwidth (column clean_bw).
* paged: logits BF16 / FP32, FP32 weights, (B, average context) in {(256, 8192), (256, 65536), (4096, 8192)},
  next_n in {1, 2}, H in {32, 64}, D = 128, 64-token blocks from a shuffled pool, 2-D context lengths (the last
  query token sees the whole context, the others a random prefix). Each library's schedule comes from its own
  metadata function, computed once before the timed calls. Baseline hbm_copy moves the row's bytes (mostly the KV
  cache) as a device copy: the goal is >= 92 % of copy bandwidth, i.e. ours/hbm_copy <= 1.087 (column copy_bw).
"""
import zlib

from rows import OURS, PEER, Row, Suite
import suites_bf16 as shared
from suites_bf16 import hbm_copy, peer_public, paired_calls, randn, tessera_fn

try:
    import torch
except ImportError:
    torch = None

HEAD_SPLITS = (128, 64, 128)
SKIP_M = (128, 4096)
SKIP_NK = [(32768, 512), (8192, 512)]
MQA_S, MQA_SKV, MQA_H, MQA_D = (2048, 8192), (8192, 65536), (32, 64), (32, 64, 128)
PAGED_B, PAGED_AVG, PAGED_NEXT_N, PAGED_H = (256, 4096), (8192, 65536), (1, 2), (32, 64)
PAGED_POOL_TOKENS = 32 * 1024 * 1024  # DeepGEMM's bound on B x average context
PAGED_D = 128
BLOCK_KV = 64
DTYPES = {"fp32": "float32", "bf16": "bfloat16"}


def skip_cases(quick):
    """(M, N, K)."""
    return [(m, n, k) for m in (SKIP_M[-1:] if quick else SKIP_M) for n, k in SKIP_NK]


def mqa_cases(quick):
    """(logits, compressed, S, S_kv, H, D, context-parallel) in DeepGEMM's SM90 order; clean_logits = not compressed.
    Quick: FP32 logits at the largest S_kv, H and D."""
    cases = [(logits, compressed, s, skv, h, d, cp) for logits in ("bf16", "fp32") for compressed in (False, True)
             for s in MQA_S for skv in MQA_SKV for h in MQA_H for d in MQA_D
             for cp in (True, False) if not cp or (skv % s == 0 and s % 2 == 0)]
    if quick:
        cases = [c for c in cases if c[0] == "fp32" and c[3:6] == (MQA_SKV[-1], MQA_H[-1], MQA_D[-1])]
    return cases


def paged_cases(quick):
    """(logits, B, average context, next_n, H) in DeepGEMM's SM90 order. Quick: FP32 logits, the most heads."""
    cases = [(logits, b, avg, nn, h) for logits in ("bf16", "fp32") for b in PAGED_B for nn in PAGED_NEXT_N
             for h in PAGED_H for avg in PAGED_AVG if b * avg <= PAGED_POOL_TOKENS]
    return [c for c in cases if c[0] == "fp32" and c[4] == PAGED_H[-1]] if quick else cases


def mqa_ranges(s, skv, cp, device=None):
    """(ks, ke) int32 [S]. Causal: query i sees KV rows [0, S_kv - S + i]. Context-parallel (DeepGEMM's pattern): the
    queries in two halves of S / 2, ranks of S / 2 rows over S_kv, the first half ending in rank r = (S_kv / S) / 3
    and the second in its mirror 2 S_kv / S - 1 - r, each query one row further than the one before."""
    device = device or shared.DEVICE
    i = torch.arange(s, dtype=torch.int32, device=device)
    ks = torch.zeros(s, dtype=torch.int32, device=device)
    if not cp:
        return ks, i + (skv - s)
    half, ranks = s // 2, skv // s
    rank = ranks // 3
    return ks, torch.cat([rank * half + i[:half], (2 * ranks - 1 - rank) * half + i[:half]])


def paged_layout(seed, batch, avg, next_n, device=None):
    """(context_lens [B, next_n], block_table [B, max blocks], blocks used, max_context_len): each context drawn from
    [0.7, 1.3) x avg, the earlier query tokens a random prefix of it, each sequence a run of a shuffled block pool
    (unused table entries 0)."""
    device = device or shared.DEVICE
    gen = torch.Generator().manual_seed(seed)
    lens = torch.randint(int(0.7 * avg), int(1.3 * avg), (batch,), generator=gen, dtype=torch.int32)
    ctx2d = ((lens.unsqueeze(1) + 1) * torch.rand(batch, next_n, generator=gen)).int()
    ctx2d[:, -1] = lens
    pages = (lens + BLOCK_KV - 1) // BLOCK_KV
    total, widest = int(pages.sum()), int(pages.max())
    pool = torch.randperm(total, generator=gen).to(torch.int32)
    col = torch.arange(widest)
    idx = ((torch.cumsum(pages, 0) - pages).unsqueeze(1) + col).clamp(max=total - 1)
    table = torch.where(col < pages.unsqueeze(1), pool[idx], torch.zeros((), dtype=torch.int32))
    return ctx2d.to(device), table.to(torch.int32).contiguous().to(device), total, widest * BLOCK_KV


def paged_kv_cache(blocks, dim, device=None, chunk=1 << 15):
    """uint8 [blocks, BLOCK_KV, 1, dim + 4]: per block, BLOCK_KV tokens of dim E4M3 bytes, then their FP32 scales
    (each token's amax / 448)."""
    device = device or shared.DEVICE
    raw = torch.empty(blocks, BLOCK_KV * (dim + 4), dtype=torch.uint8, device=device)
    for lo in range(0, blocks, chunk):  # chunks keep the FP32 temporaries small
        hi = min(lo + chunk, blocks)
        x = torch.randn(hi - lo, BLOCK_KV, dim, device=device)
        sf = x.abs().amax(-1).clamp(min=1e-4) / 448.0
        raw[lo:hi, :BLOCK_KV * dim] = (x / sf.unsqueeze(-1)).to(torch.float8_e4m3fn).view(torch.uint8).reshape(
            hi - lo, -1)
        raw[lo:hi, BLOCK_KV * dim:] = sf.view(torch.uint8).reshape(hi - lo, -1)
    return raw.view(blocks, BLOCK_KV, 1, dim + 4)


def skip_head_mid_rows(ctx):
    utils = ctx.tessera.utils
    left, mid, right = HEAD_SPLITS
    for m, n, k in skip_cases(ctx.quick):
        a = utils.per_token_cast_to_fp8(randn(m, k), use_ue8m0=False)
        b = utils.per_block_cast_to_fp8(randn(n, k), use_ue8m0=False)
        d = torch.empty(m, n // (left + right) * (left + mid + right), device=shared.DEVICE, dtype=torch.bfloat16)
        plain = torch.empty(m, n, device=shared.DEVICE, dtype=torch.bfloat16)
        yield Row(f"skip-head-mid {m}x{n}x{k}", dict(kind="skip_head_mid", m=m, n=n, k=k, head_splits=HEAD_SPLITS),
                  flops=2 * m * n * k, nbytes=m * k + n * k + 4 * (a[1].numel() + b[1].numel()) + 2 * m * n,
                  calls=paired_calls(ctx, "fp8_gemm_nt_skip_head_mid",
                                      lambda fn: fn(a, b, d, HEAD_SPLITS, disable_ue8m0_cast=True)),
                  baselines={"fp8_gemm_nt": lambda: ctx.tessera.fp8_gemm_nt(a, b, plain)}, bucket="skip-head-mid")


def mqa_rows(ctx):
    utils = ctx.tessera.utils
    for logits, compressed, s, skv, h, d, cp in mqa_cases(ctx.quick):
        dtype = getattr(torch, DTYPES[logits])
        q = randn(s, h, d).to(torch.float8_e4m3fn)
        kv = utils.per_custom_dims_cast_to_fp8(randn(skv, d), (0,), False)  # one FP32 scale per KV row
        weights = torch.randn(s, h, device=shared.DEVICE, dtype=torch.float32)
        ks, ke = mqa_ranges(s, skv, cp)
        cost = int((ke - ks).clamp(min=0).sum())  # the scores inside the ranges
        kwargs = dict(clean_logits=not compressed, max_seqlen_k=int((ke - ks).max()) if compressed else 0,
                      logits_dtype=dtype)
        written = cost if compressed else s * skv  # clean_logits writes -inf everywhere else
        baselines = {} if compressed else clean_baselines(ctx, s, skv, logits, ks, ke, (s * skv - cost) * dtype.itemsize)
        yield Row(f"mqa {logits} {'compressed' if compressed else 'clean'} s{s} skv{skv} h{h} d{d} "
                  f"{'cp' if cp else 'causal'}",
                  dict(kind="mqa", logits=logits, compressed=compressed, s=s, s_kv=skv, h=h, d=d, cp=cp, cost=cost),
                  flops=2 * cost * h * d,
                  nbytes=s * h * d + skv * (d + 4) + 4 * s * h + 8 * s + written * dtype.itemsize,
                  calls=paired_calls(ctx, "fp8_fp4_mqa_logits",
                                      lambda fn: fn((q, None), kv, weights, ks, ke, **kwargs)),
                  baselines=baselines, bucket=f"mqa {'compressed' if compressed else 'clean'}")


def clean_baselines(ctx, s, skv, logits, ks, ke, clean_bytes):
    """tessera's clean kernel alone on a [s, skv] view of a buffer with the call's row stride, and an HBM copy of
    the bytes it writes (-inf outside each row's range)."""
    private = getattr(ctx.tessera, "_C", None)
    clean = getattr(private, "clean_logits", None)
    if clean is None:
        return {}
    bf16 = logits == "bf16"
    stride = private.mqa_logits_row_stride(skv, 0, bf16)
    buffer = torch.empty(s, stride, device=shared.DEVICE, dtype=torch.bfloat16 if bf16 else torch.float32)
    out = buffer[:, :skv]
    return {"clean": lambda: clean(out, ks, ke), "clean_copy": hbm_copy(clean_bytes)}


def scheduled(metadata, logits, num_sms, ctx2d, args, kwargs):
    """A logits call on its own library's schedule, computed at the first (warm-up) call and reused, as a decode
    step reuses it across layers; a missing metadata function makes the call raise as the logits one would."""
    schedule = []

    def call():
        if not schedule:
            schedule.append(metadata(ctx2d, BLOCK_KV, num_sms()))
        q, kv, weights, table, max_len = args
        return logits(q, kv, weights, ctx2d, table, schedule[0], max_len, **kwargs)
    return call


def paged_calls(ctx, ctx2d, args, kwargs):
    libs = {OURS: (tessera_fn(ctx, "get_paged_mqa_logits_metadata"),
                   tessera_fn(ctx, "fp8_fp4_paged_mqa_logits"), ctx.tessera.get_num_sms)}
    if ctx.peer is not None:
        libs[PEER] = (peer_public(ctx, "get_paged_mqa_logits_metadata"),
                      peer_public(ctx, "fp8_fp4_paged_mqa_logits"), ctx.peer.get_num_sms)
    return {lib: scheduled(*fns, ctx2d, args, kwargs) for lib, fns in libs.items()}


def paged_rows(ctx):
    for case in paged_cases(ctx.quick):
        logits, b, avg, nn, h = case
        dtype = getattr(torch, DTYPES[logits])
        # seeded by the case: a row holds the same contexts in every run, quick or full
        ctx2d, table, blocks, max_len = paged_layout(zlib.crc32(repr(case).encode()), b, avg, nn)
        kv = paged_kv_cache(blocks, PAGED_D)
        q = randn(b, nn, h, PAGED_D).to(torch.float8_e4m3fn)
        weights = torch.randn(b * nn, h, device=shared.DEVICE, dtype=torch.float32)
        tokens, scores = int(ctx2d[:, -1].sum()), int(ctx2d.sum())
        nbytes = (q.numel() + 4 * weights.numel() + tokens * (PAGED_D + 4) + 4 * (ctx2d.numel() + table.numel()) +
                  scores * dtype.itemsize)
        yield Row(f"paged {logits} b{b} ctx{avg} next_n{nn} h{h}",
                  dict(kind="paged", logits=logits, b=b, avg_context=avg, next_n=nn, h=h, d=PAGED_D, blocks=blocks,
                       max_context_len=max_len),
                  flops=2 * scores * h * PAGED_D, nbytes=nbytes,
                  calls=paged_calls(ctx, ctx2d, ((q, None), kv, weights, table, max_len),
                                    dict(clean_logits=False, logits_dtype=dtype)),
                  baselines={"hbm_copy": hbm_copy(nbytes)}, bucket="paged")


def indexer(ctx):
    yield from skip_head_mid_rows(ctx)
    yield from mqa_rows(ctx)
    yield from paged_rows(ctx)


SUITES = [Suite("indexer", indexer)]
