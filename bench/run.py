"""Benchmark runner with named suites: tessera against cuBLASLt in the same run, and against DeepGEMM's H200 numbers.

    python bench/run.py --suite deepgemm-dense [--suite ...] [--json out.jsonl] [--plot out.png] [--reps 30] [--quick]

Suites: deepgemm-dense, deepgemm-grouped-contiguous, deepgemm-grouped-psum, deepgemm-masked, deepgemm-kgrouped,
host-overhead, cold-compile (every dense benchmark kernel compiled cold with NVRTC and NVCC through `tessera compile`;
needs no GPU), or all.
Shapes and DeepGEMM's times come from shared/reference/h200-baselines.md (DeepGEMM v2.6.1 on the same H200 model).

Kernel time (--timer kineto, the default, as DeepGEMM measures): the profiler's GPU durations of every kernel, memset
and copy one call issues, summed per call; L2 flushed before every timed call by a memset of --flush-mib (default
2048 MiB, the baseline file's protocol: besides emptying L2, the flush's length sets how much the card cools between
calls, which moves the clock of compute-bound kernels; --flush-kind read sums the buffer instead of writing it, so the
timed kernel does not also write the memset's dirty L2 lines back to HBM); median of --reps calls after 3 warm-up
calls. --timer events: CUDA events around each call instead, which also counts the launch gap (about 2-4 us, so small
kernels read slower). --timer sustained: the mean per call of a 1 s back-to-back loop without flushes, as a training
or serving loop runs (the H200 then sits at its 700 W cap; large GEMMs read 15-20 % slower than flushed, and their
ratio to cuBLASLt changes: docs/perf/fp8_gemm.md v15); 'vs_dg' then mixes protocols, read ours/cuBLASLt instead.
Only rows whose kernels run well above the host's time per call (tens of µs) and whose operands exceed L2 mean what
they say there: without flushes small working sets stay in L2, and short kernels time the host (torch._scaled_mm
needs ~20 µs of host time per call, so its M = 1 and M = 128 rows read ~22-30 µs).
DeepGEMM's numbers were taken on another day (kineto, 2 GB flush, mean
of 20), so the fair comparison is relative to the same-run cuBLASLt anchor: 'vs_dg' = (ours / cuBLASLt per-tensor,
this run) / (DeepGEMM / cuBLASLt per-tensor, baseline file); below 1 means ahead of DeepGEMM.

Baselines, same shape and same run: cublas_pt = torch._scaled_mm FP8 with per-tensor scales (M padded to 16),
cublas_bs = torch._scaled_mm with 1x128 / 128x128 FP32 block scales (1x128 / 1x128 for the 1D1D rows; 'unsupported'
where torch or cuBLASLt refuses), torch_bf16 = torch.mm on the BF16 originals. The grouped suites have no cuBLASLt time
in the baseline file, so their anchor is one dense per-tensor GEMM of equivalent work (cublas_pt_dense_Mtot: M_total x
N x K; cublas_pt_dense_sumK: M x N x sum K, FP32 out; cublas_pt_rough_GxExp: (G * expected) x N x K, a rough stand-in
for the masked work) and 'ours/dg_abs' compares absolute times across runs; 'ours/dg_cal' scales DeepGEMM's time by how
this machine runs the file's two ceilings in the same run (cuBLASLt FP8 8192^3 for compute-bound rows, a device copy
for memory-bound ones; printed before the tables).
Every timed suite is bracketed by a canary (torch.mm BF16 8192^3, 10 calls): its times go into the JSON lines
(canary_us, canary_steady) and the table warns when they differ by more than 5 %, i.e. when the card's speed changed
during the suite.
Prints one aligned table per suite, then one JSON line per row (also written to --json).
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

try:
    import torch
except ImportError:  # --help and py_compile still work without torch
    torch = None
tessera = None  # imported by main(), after argument parsing

HERE = os.path.dirname(os.path.abspath(__file__))
PEAK_TFLOPS = 1512.0  # measured FP8 dense peak on the H200 (cuBLASLt, 8192^3)
PEAK_TBPS = 4.26      # measured device copy bandwidth, TB/s (bytes read + written)
FLUSH_BYTES = 2048 << 20  # --flush-mib
DENSE_M = (1, 128, 4096)
WGRAD_N = 4096  # the 1D1D weight-gradient shapes: M = N of a pair, N = 4096, K = K of the pair
NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]

# ---- DeepGEMM's numbers from h200-baselines.md -----------------------------------------------------------------------
# (M, N, K) -> (DeepGEMM µs, cuBLASLt per-tensor µs of DeepGEMM's run, cuBLASLt block-scaled µs of the separate run).
# cuBLASLt block-scaled refuses M = 1; the M = 1 rows carry its M = 16 figure, which is what a padded call measures.
DG_DENSE = {
    (4096, 2112, 7168): (96.8, 92.4, 111.0), (4096, 576, 7168): (35.1, 25.2, 44.2),
    (4096, 24576, 1536): (231.6, 234.5, 260.5), (4096, 32768, 512): (127.8, 149.9, 161.6),
    (4096, 7168, 16384): (643.1, 652.4, 712.3), (4096, 4096, 7168): (169.8, 164.8, 180.1),
    (4096, 7168, 2048): (92.8, 92.5, 102.0),
    (128, 2112, 7168): (13.1, 10.4, 22.1), (128, 576, 7168): (11.4, 8.4, 15.5),
    (128, 24576, 1536): (18.6, 16.3, 18.0), (128, 32768, 512): (11.9, 10.5, 10.8),
    (128, 7168, 16384): (47.3, 45.7, 51.6), (128, 4096, 7168): (16.0, 14.4, 23.6),
    (128, 7168, 2048): (10.8, 8.6, 10.1),
    (1, 2112, 7168): (15.4, 9.6, 15.2), (1, 576, 7168): (11.3, 7.2, 14.5), (1, 24576, 1536): (19.0, 15.2, 18.0),
    (1, 32768, 512): (9.7, 8.4, 10.9), (1, 7168, 16384): (42.1, 40.0, 46.8), (1, 4096, 7168): (17.3, 14.6, 17.4),
    (1, 7168, 2048): (9.5, 7.6, 9.7),
}
# (groups, M total incl. padding, N, K) -> DeepGEMM µs
DG_CONTIGUOUS = {
    (4, 32640, 6144, 7168): 1940.3, (4, 33920, 7168, 3072): 1073.1, (4, 31232, 4096, 4096): 737.0,
    (4, 32640, 4096, 2048): 408.0, (8, 31872, 6144, 7168): 1924.0, (8, 32640, 7168, 3072): 1032.6,
    (8, 33024, 4096, 4096): 782.0, (8, 32512, 4096, 2048): 411.4,
}
# (groups, expected M per group, valid M total, N, K) -> DeepGEMM µs; A is [groups, 4096, K]
DG_MASKED = {
    (32, 192, 6221, 6144, 7168): 540.4, (32, 192, 6259, 4096, 2048): 131.2, (6, 1024, 6273, 6144, 7168): 403.7,
    (6, 1024, 6842, 4096, 2048): 102.9, (32, 20, 643, 6144, 7168): 371.2, (32, 20, 597, 4096, 2048): 85.5,
    (6, 20, 125, 6144, 7168): 80.0, (6, 20, 118, 4096, 2048): 23.7,
}
MASKED_M_MAX = 4096
# (groups, M, N, total K) -> DeepGEMM µs (k-grouped weight gradient, FP32 out, D = C + A·Bᵀ)
DG_KGROUPED = {
    (4, 4096, 7168, 35200): 1987.0, (4, 7168, 2048, 32896): 953.0, (8, 4096, 7168, 30720): 1828.0,
    (8, 7168, 2048, 32896): 999.0, (16, 4096, 7168, 33792): 2215.0, (16, 7168, 2048, 31744): 1052.0,
}
DG_HOST_US = 28.4  # one cached fp8_gemm_nt call from Python (DeepGEMM, m=128 n=576 k=7168)


# ---- rows ------------------------------------------------------------------------------------------------------------
@dataclass
class Row:
    """One shape of one suite. Suites yield rows and the runner times them before the suite's generator resumes, so
    the closures may refer to the generator's current tensors."""
    suite: str
    label: str
    shape: dict
    flops: int = 0                     # useful FLOPs (masked: valid rows only)
    nbytes: int = 0                    # bytes that must move at least once: A, B, scales, D (and C) read/written
    ours: Optional[Callable] = None
    baselines: dict = field(default_factory=dict)  # name -> (zero-argument call, its FLOPs); the first is the anchor
    ref: dict = field(default_factory=dict)        # DeepGEMM's numbers for this shape
    bucket: str = ""                   # rows averaged together in the geometric means
    result: dict = field(default_factory=dict)


def ceil_div(a, b):
    return -(-a // b)


def align(a, b):
    return ceil_div(a, b) * b


def split_total(total, parts, rng, lo=0.7, hi=1.3):
    """`parts` non-negative ints summing to `total`, each drawn as mean x U(lo, hi) then scaled to the total, so that a
    generated case has exactly the size of DeepGEMM's reported one."""
    w = [rng.uniform(lo, hi) for _ in range(parts)]
    out = [int(total * x / sum(w)) for x in w]
    for i in range(total - sum(out)):  # the rounding remainder, < parts
        out[i] += 1
    return out


def randn(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16)


def fp8_rows(x):
    """1x128 (per row, per 128 K) e4m3 quantization: (x8, sf [rows, K/128])."""
    return tessera.utils.per_token_cast_to_fp8(x, use_ue8m0=False)


def fp8_blocks(x):
    """128x128 block quantization: (x8, sf [rows/128, K/128])."""
    return tessera.utils.per_block_cast_to_fp8(x, use_ue8m0=False)


def mn_major(sf):
    return tessera.get_mn_major_tma_aligned_tensor(sf)


def pad_rows(x, rows):
    if x.shape[0] >= rows:
        return x
    out = x.new_zeros(rows, *x.shape[1:])
    out[:x.shape[0]] = x
    return out


def cat_flat(blocks):
    """Concatenate fp8 tensors, flattened, through a uint8 view."""
    return torch.cat([blk.contiguous().view(torch.uint8).flatten() for blk in blocks]).view(torch.float8_e4m3fn)


def config_of(m, n, k, kind, groups, expected_m=0):
    """The kernel config tessera picks (tile, stages, cluster, split-K, grid) for a benchmark row."""
    device = torch.cuda.current_device()
    if kind in ("1d2d", "1d1d"):
        return str(tessera._C.fp8_gemm_config(m, n, k, 1 if kind == "1d1d" else 0, device))
    grouped = {"m_grouped_contiguous": "contiguous", "m_grouped_psum": "psum", "m_grouped_masked": "masked",
               "k_grouped": "k_grouped"}[kind]
    try:  # a failing config query must not cost the row its timing
        return str(tessera._C.fp8_grouped_gemm_config(grouped, m, n, k, groups, expected_m, device))
    except Exception as e:  # noqa: BLE001
        return f"(config query failed: {type(e).__name__}: {str(e)[:80]})"


# ---- baselines -------------------------------------------------------------------------------------------------------
def cublas_per_tensor(a8, b8, out_dtype):
    """cuBLASLt FP8 through torch._scaled_mm with per-tensor scales of 1: A [M, K] x B [N, K]ᵀ, M padded to 16."""
    a = pad_rows(a8, align(max(a8.shape[0], 16), 16))
    one = torch.ones((), device="cuda")
    return lambda: torch._scaled_mm(a, b8.t(), one, one, out_dtype=out_dtype)


def cublas_block_scaled(a8, sfa, b8, sfb, out_dtype):
    """cuBLASLt FP8 with DeepSeek-style scales through torch._scaled_mm (SM90, CUDA >= 12.9, torch >= 2.8).

    A 1x128: scale_a [M, K/128] with strides (1, M). B 128x128 (sfb [N/128, K/128]): scale_b is seen transposed,
    [N/128, K/128] with a row pitch of K/128 rounded up to 4 (newer torch; older torch wants K/128, the same for every
    K here). B 1x128 (sfb [N, K/128]): the transpose of an N-major [N, K/128], i.e. a contiguous [K/128, N].
    M is padded to 16 (cuBLASLt refuses M = 1)."""
    m, kb = sfa.shape
    mp = align(max(m, 16), 16)
    a = pad_rows(a8, mp)
    scale_a = torch.ones(kb, mp, device="cuda")
    scale_a[:, :m] = sfa.t()
    scale_a = scale_a.t()
    if sfb.shape[0] == b8.shape[0]:  # 1x128
        scale_b = sfb.t().contiguous()
    else:  # 128x128
        scale_b = torch.zeros(sfb.shape[0], align(kb, 4), device="cuda")
        scale_b[:, :kb] = sfb
        scale_b = scale_b[:, :kb].t()
    return lambda: torch._scaled_mm(a, b8.t(), scale_a, scale_b, out_dtype=out_dtype)


# ---- suites ----------------------------------------------------------------------------------------------------------
def suite_dense(quick):
    pairs = NK[::3] if quick else NK
    bf16, f32 = torch.bfloat16, torch.float32
    for m in DENSE_M:
        for n, k in pairs:  # 1D2D: BF16 out, A 1x128, B 128x128
            a, b = randn(m, k), randn(n, k)
            (a8, sfa), (b8, sfb) = fp8_rows(a), fp8_blocks(b)
            sfa_k = mn_major(sfa)
            d = torch.empty(m, n, device="cuda", dtype=bf16)
            dg, dg_pt, dg_bs = DG_DENSE[(m, n, k)]
            yield Row("deepgemm-dense", f"1d2d {m}x{n}x{k}", dict(kind="1d2d", m=m, n=n, k=k),
                      flops=2 * m * n * k, nbytes=m * k + n * k + 4 * (sfa.numel() + sfb.numel()) + 2 * m * n,
                      ours=lambda: tessera.fp8_gemm_nt((a8, sfa_k), (b8, sfb), d),
                      baselines={"cublas_pt": (cublas_per_tensor(a8, b8, bf16), None),
                                 "cublas_bs": (cublas_block_scaled(a8, sfa, b8, sfb, bf16), None),
                                 "torch_bf16": (lambda: torch.mm(a, b.t()), None)},
                      ref=dict(dg_us=dg, dg_cublas_pt_us=dg_pt, file_cublas_bs_us=dg_bs), bucket=f"M={m}",
                      result=dict(config=config_of(m, n, k, "1d2d", 1)))
    for n_pair, k in pairs:
        # 1D1D weight gradient as DeepGEMM's test enumerates it (M = N of the pair, N = 4096, K = K of the pair; FP32
        # out, D = C + A·Bᵀ with c = d). h200-baselines.md has no DeepGEMM time for these: ratios to cuBLASLt only.
        m, n = n_pair, WGRAD_N
        a, b = randn(m, k), randn(n, k)
        (a8, sfa), (b8, sfb) = fp8_rows(a), fp8_rows(b)
        sfa_k, sfb_k = mn_major(sfa), mn_major(sfb)
        d = torch.zeros(m, n, device="cuda", dtype=f32)
        yield Row("deepgemm-dense", f"1d1d {m}x{n}x{k}", dict(kind="1d1d-wgrad", m=m, n=n, k=k),
                  flops=2 * m * n * k, nbytes=m * k + n * k + 4 * (sfa.numel() + sfb.numel()) + 8 * m * n,
                  ours=lambda: tessera.fp8_gemm_nt((a8, sfa_k), (b8, sfb_k), d, c=d, recipe=(1, 1, 128)),
                  baselines={"cublas_pt": (cublas_per_tensor(a8, b8, f32), None),
                             "cublas_bs": (cublas_block_scaled(a8, sfa, b8, sfb, f32), None),
                             "torch_bf16": (lambda: torch.mm(a, b.t()), None)},  # BF16 out
                  bucket="1d1d-wgrad", result=dict(config=config_of(m, n, k, "1d1d", 1)))


def suite_contiguous(quick, psum=False):
    """DeepGEMM's contiguous shapes; psum=True: the same segments as cumulative group ends (use_psum_layout, each
    group starting at the next 128-aligned row), against DeepGEMM's per-row-id figure (its table has no psum rows)."""
    suite = "deepgemm-grouped-psum" if psum else "deepgemm-grouped-contiguous"
    rng = random.Random(0)
    for (g, m_total, n, k), dg in list(DG_CONTIGUOUS.items())[::4 if quick else 1]:
        # Per expert: a 128-aligned segment whose tail is padding (-1 in grouped_layout, zero rows of A), as in
        # DeepGEMM's test (M = expected x U(0.7, 1.3), aligned up to 128), scaled to the reported M total.
        layout = torch.full((m_total,), -1, dtype=torch.int32)
        ends = []
        start = valid = 0
        for e, blocks in enumerate(split_total(m_total // 128, g, rng)):
            rows = max(1, blocks * 128 - rng.randrange(128)) if blocks else 0
            layout[start:start + rows] = e
            ends.append(start + rows)
            start, valid = start + blocks * 128, valid + rows
        a = randn(m_total, k) * (layout.cuda() >= 0).unsqueeze(1)  # (psum: the same rows, as group ends)
        layout = (torch.tensor(ends, dtype=torch.int32) if psum else layout).cuda()
        (a8, sfa), (b8, sfb) = fp8_rows(a), fp8_blocks(randn(g * n, k))
        sfa_k, b8, sfb = mn_major(sfa), b8.view(g, n, k), sfb.view(g, n // 128, -1)
        d = torch.empty(m_total, n, device="cuda", dtype=torch.bfloat16)
        extra = dict(use_psum_layout=True, expected_m_for_psum_layout=m_total // g) if psum else {}
        yield Row(suite, f"g{g} {m_total}x{n}x{k}", dict(groups=g, m_total=m_total, m_valid=valid, n=n, k=k),
                  flops=2 * m_total * n * k,  # padded rows included, as DeepGEMM counts them
                  nbytes=m_total * k + g * n * k + 4 * (sfa.numel() + sfb.numel()) + 2 * m_total * n +
                  4 * (g if psum else m_total),
                  ours=lambda: tessera.m_grouped_fp8_gemm_nt_contiguous((a8, sfa_k), (b8, sfb), d, layout, **extra),
                  baselines={"cublas_pt_dense_Mtot": (cublas_per_tensor(a8, b8[0], torch.bfloat16), None)},
                  ref=dict(dg_us=dg), bucket="psum" if psum else "contiguous",
                  result=dict(config=config_of(m_total, n, k, "m_grouped_psum" if psum else "m_grouped_contiguous", g,
                                               m_total // g if psum else 0)))


def suite_masked(quick):
    rng = random.Random(0)
    for (g, expected, valid, n, k), dg in list(DG_MASKED.items())[::4 if quick else 1]:
        # masked_m drawn in expected x U(0.7, 1.3), scaled to DeepGEMM's reported valid total
        counts = split_total(valid, g, rng)
        masked_m = torch.tensor(counts, device="cuda", dtype=torch.int32)
        active = sum(c > 0 for c in counts)
        (a8, sfa), (b8, sfb) = fp8_rows(randn(g * MASKED_M_MAX, k)), fp8_blocks(randn(g * n, k))
        anchor = cublas_per_tensor(a8[:g * expected], b8[:n], torch.bfloat16)
        a8, sfa = a8.view(g, MASKED_M_MAX, k), mn_major(sfa.view(g, MASKED_M_MAX, -1))
        b8, sfb = b8.view(g, n, k), sfb.view(g, n // 128, -1)
        kb = sfb.shape[-1]
        d = torch.empty(g, MASKED_M_MAX, n, device="cuda", dtype=torch.bfloat16)
        yield Row("deepgemm-masked", f"g{g} e{expected} v{valid} {n}x{k}",
                  dict(groups=g, expected_m=expected, m_valid=valid, n=n, k=k),
                  flops=2 * valid * n * k,  # valid rows only; bytes: valid rows and the active experts' weights
                  nbytes=valid * k + active * n * k + 4 * (valid + active * (n // 128)) * kb + 2 * valid * n + 4 * g,
                  ours=lambda: tessera.m_grouped_fp8_gemm_nt_masked((a8, sfa), (b8, sfb), d, masked_m, expected),
                  baselines={"cublas_pt_rough_GxExp": (anchor, 2 * g * expected * n * k)},
                  ref=dict(dg_us=dg), bucket="masked",
                  result=dict(config=config_of(MASKED_M_MAX, n, k, "m_grouped_masked", g, expected)))


def suite_kgrouped(quick):
    rng = random.Random(0)
    for (g, m, n, total_k), dg in list(DG_KGROUPED.items())[::4 if quick else 1]:
        ks = [u * 128 for u in split_total(total_k // 128, g, rng)]
        # Groups are 128-aligned in K, so 1x128 scales of the whole [M, ΣK] equal those of each group.
        (a8, sfa), (b8, sfb) = fp8_rows(randn(m, total_k)), fp8_rows(randn(n, total_k))
        a_flat, b_flat = cat_flat(a8.split(ks, dim=1)), cat_flat(b8.split(ks, dim=1))
        sfa_k, sfb_k = mn_major(sfa), mn_major(sfb)
        ks_tensor = torch.tensor(ks, device="cuda", dtype=torch.int32)
        d = torch.zeros(g, m, n, device="cuda", dtype=torch.float32)
        yield Row("deepgemm-kgrouped", f"g{g} {m}x{n}x{total_k}", dict(groups=g, m=m, n=n, k_total=total_k, ks=ks),
                  flops=2 * m * n * total_k,  # bytes: C read and D written, FP32
                  nbytes=(m + n) * total_k + 4 * (sfa.numel() + sfb.numel()) + 8 * g * m * n,
                  ours=lambda: tessera.k_grouped_fp8_gemm_nt_contiguous((a_flat, sfa_k), (b_flat, sfb_k), d, ks,
                                                                        ks_tensor, c=d),
                  baselines={"cublas_pt_dense_sumK": (cublas_per_tensor(a8, b8, torch.float32), None)},
                  ref=dict(dg_us=dg), bucket="kgrouped", result=dict(config=config_of(m, n, total_k, "k_grouped", g)))


def suite_host_overhead(quick):
    sys.path.insert(0, HERE)
    import python_overhead
    for name, us in python_overhead.measure():
        ref = dict(dg_host_us=DG_HOST_US) if name.startswith("tessera.fp8_gemm_nt") else {}
        res = dict(host_us=us, ours_over_dg_abs=us / ref["dg_host_us"] if ref else None)
        yield Row("host-overhead", name, {}, ref=ref, result=res)
    # The C++ entry points, from `tessera bench` (its JSON lines carry host_us_per_call).
    command = tessera_command()
    out = subprocess.run([command, "bench"], capture_output=True, text=True) if command else None
    if out is None or out.returncode != 0:
        print(f"  note: no C++ host rows ({'no tessera command' if out is None else out.stderr.strip()[-200:]})")
        return
    for line in out.stdout.splitlines():
        if line.startswith("{") and "host_us_per_call" in line:
            r = json.loads(line)
            shape = f"m{r['m']} n{r['n']} k{r['k']}" if "m" in r else f"{r.get('mn')}x{r.get('sf_k')}"
            yield Row("host-overhead", f"C++ {r['kernel']} {shape}", {}, result=dict(host_us=r["host_us_per_call"]))


DG_COLD_COMPILE_S = {"nvrtc": 2.2, "nvcc": 4.0}  # DeepGEMM's first call with an empty cache (baselines file)


def tessera_command():
    """The `tessera` command: $TESSERA_BIN, else the build tree's, else the one on PATH."""
    for path in (os.environ.get("TESSERA_BIN"), os.path.join(os.path.dirname(HERE), "build-gpu", "tessera"),
                 os.path.join(os.path.dirname(HERE), "build", "tessera"), shutil.which("tessera")):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


FIRST_CALL = """
import os, sys, time
sys.path.insert(0, {build_python!r})
import torch
import tessera
from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
m, n, k = {m}, {n}, {k}
a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
sfa = tessera.get_mn_major_tma_aligned_tensor(sfa)
d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
start = time.perf_counter()
tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
torch.cuda.synchronize()
print("FIRST_CALL_S", time.perf_counter() - start)
"""


def first_call_rows():
    """DeepGEMM's cold-start figures are whole first calls from Python with an empty cache (compile + load + launch):
    the same, in a fresh process per compiler, on the baselines file's shapes."""
    build_python = os.path.join(os.path.dirname(HERE), "build-gpu", "python")
    if not os.path.isdir(build_python):
        build_python = os.path.join(os.path.dirname(HERE), "build", "python")
    for compiler, (m, n, k) in (("nvrtc", (256, 3584, 5120)), ("nvcc", (256, 3072, 5120))):
        with tempfile.TemporaryDirectory(prefix="tessera-cold-") as cache:
            script = FIRST_CALL.format(build_python=build_python, m=m, n=n, k=k)
            out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                 env=dict(os.environ, TESSERA_CACHE_DIR=cache, TESSERA_JIT_COMPILER=compiler))
        line = next((x for x in out.stdout.splitlines() if x.startswith("FIRST_CALL_S")), None)
        if line is None:
            raise RuntimeError(f"first call ({compiler}) failed: {out.stderr.strip()[-300:]}")
        yield Row("cold-compile", f"{compiler} first Python call {m}x{n}x{k}", {"compiler": compiler},
                  ref=dict(dg_compile_s=DG_COLD_COMPILE_S[compiler]), result=dict(compile_s=float(line.split()[1])))


def suite_cold_compile(quick):
    """Cold compile time of every dense FP8 GEMM kernel the benchmark shapes use, with each compiler, into an empty
    cache (`tessera compile`: the compile alone, no GPU needed)."""
    command = tessera_command()
    if command is None:
        raise RuntimeError("no `tessera` command found (set TESSERA_BIN)")
    # NVRTC on some installs returns no ptxas report: registers and spills then print as -1.
    pattern = re.compile(r"^(nvrtc|nvcc)-\S+ compiled\s+([0-9.]+) s\s+regs\s+(-?\d+)\s+spills (-?\d+)/(-?\d+)\s+(\S+)")
    for compiler in ("nvrtc", "nvcc"):
        with tempfile.TemporaryDirectory(prefix="tessera-cold-") as cache:
            start = time.perf_counter()
            out = subprocess.run([command, "compile", "--compiler", compiler, "--suite", "fp8_gemm"],
                                 env=dict(os.environ, TESSERA_CACHE_DIR=cache), capture_output=True, text=True)
            wall = time.perf_counter() - start
        if out.returncode != 0:
            raise RuntimeError(f"tessera compile --compiler {compiler} failed: {out.stderr.strip()[-300:]}")
        lines = [m for m in map(pattern.match, out.stdout.splitlines()) if m]
        # The per-kernel figures time the compiler call alone. The command's wall time per kernel adds process start,
        # include hashing and the cache writes. On the GPU machine NVRTC's timed calls summed to a fraction of it
        # (docs/perf/fp8_gemm.md v6), so the wall row is the figure to quote until that is explained.
        if lines:
            yield Row("cold-compile", f"{compiler} wall per kernel, tessera compile of {len(lines)}",
                      {"compiler": compiler}, ref=dict(dg_compile_s=DG_COLD_COMPILE_S[compiler]),
                      result=dict(compile_s=wall / len(lines)))
        for m in lines[:4] if quick else lines:
            spec = m.group(6)
            f = dict(kv.split("=") for kv in spec[spec.index("{") + 1:-1].split(","))
            label = (f"{compiler} {'1d1d' if f['kMode'] == '1' else '1d2d'} {f['kBlockM']}x{f['kBlockN']} "
                     f"{f['kClusterM']}x{f['kClusterN']} s{f.get('kSplitK', '1')} N{f['kShapeN']} K{f['kShapeK']}")
            yield Row("cold-compile", label, {"compiler": compiler, "spec": spec},
                      ref=dict(dg_compile_s=DG_COLD_COMPILE_S[compiler]),
                      result=dict(compile_s=float(m.group(2)), regs=int(m.group(3)) if int(m.group(3)) >= 0 else None,
                                  spill_bytes=int(m.group(4)) + int(m.group(5)) if int(m.group(4)) >= 0 else None))
    if torch is not None and torch.cuda.is_available():
        yield from first_call_rows()


SUITES = {
    "deepgemm-dense": suite_dense,
    "deepgemm-grouped-contiguous": suite_contiguous,
    "deepgemm-grouped-psum": lambda quick: suite_contiguous(quick, psum=True),
    "deepgemm-masked": suite_masked,
    "deepgemm-kgrouped": suite_kgrouped,
    "host-overhead": suite_host_overhead,
    "cold-compile": suite_cold_compile,
}
NO_GPU_SUITES = {"cold-compile"}


# ---- timing ----------------------------------------------------------------------------------------------------------
_flush = None


TIMER = "kineto"


# --flush-kind: "memset" (the baselines' protocol) ends with L2 full of the memset's dirty lines, which the timed
# kernel's reads evict, so it writes them back to HBM: under ncu, 1x7168x16384 wrote 29 MB after a memset and
# ran 42.2-42.5 us, against 0.02-0.17 MB and 36.4-36.9 us after a read flush (docs/perf/fp8_gemm.md v10). "read"
# sums the buffer instead, leaving L2 full of clean lines the kernel does not use. Memory-bound rows read 0.3-6 us
# faster that way; ratios against DeepGEMM's file stay on the memset protocol.
FLUSH_KIND = "memset"


def flush_buffer():
    global _flush
    if _flush is None:
        _flush = torch.zeros(FLUSH_BYTES, dtype=torch.int8, device="cuda")
    return _flush


def flush_l2():
    """Evict L2 before a timed call (FLUSH_KIND)."""
    if FLUSH_KIND == "read":
        flush_buffer().sum()
    else:
        flush_buffer().zero_()


def time_us(fn, reps, warmup=3):
    """µs per call of `fn` by the --timer: kineto / events take the median over `reps` calls, each preceded by an L2
    flush (flush_l2: FLUSH_BYTES, larger than L2); sustained takes the mean of a back-to-back loop without flushes."""
    for _ in range(warmup):
        fn()
    if TIMER == "sustained":
        return time_us_sustained(fn, reps)
    return time_us_kineto(fn, reps) if TIMER == "kineto" else time_us_events(fn, reps)


_flush_names = None


def gpu_activities(prof):
    return sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                  key=lambda e: e.time_range.start)


def time_us_kineto(fn, reps):
    """Sum of the GPU activity durations between consecutive flushes, per call (the flush itself excluded). The flush
    is recognized by the names its own profile shows."""
    global _flush_names
    flush_buffer()
    if _flush_names is None:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            flush_l2()
            torch.cuda.synchronize()
        _flush_names = {e.name for e in gpu_activities(prof)}
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            flush_l2()
            fn()
        torch.cuda.synchronize()
    gpu = gpu_activities(prof)
    # A flush of 2 GiB or more is several kernels (torch splits at 2^31 elements): consecutive flush activities are
    # one separator.
    calls = []
    in_flush = False
    for e in gpu:
        if e.name in _flush_names:
            if not in_flush:
                calls.append(0.0)
            in_flush = True
        else:
            in_flush = False
            if calls:
                calls[-1] += e.time_range.elapsed_us()
    if len(calls) != reps or min(calls) <= 0.0:
        raise RuntimeError(f"kineto timer: expected {reps} flush-separated calls, found {len(calls)} "
                           f"(GPU activities: {sorted({e.name for e in gpu})[:6]})")
    return statistics.median(calls)


def time_us_events(fn, reps):
    """Median µs of `fn` between CUDA events."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        flush_l2()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times)


# --timer sustained: calls back to back, no flush, for SUSTAINED_SECONDS after SUSTAINED_WARMUP_SECONDS, as a training
# or serving loop runs them. The H200 then holds its 700 W cap and large GEMMs run 15-20 % slower than in the
# flush-separated bursts the default protocol times (docs/perf/fp8_gemm.md v15). Short kernels time the host instead
# (a loop cannot outrun its launches), and operands that fit in L2 stay there.
SUSTAINED_SECONDS = 1.0
SUSTAINED_WARMUP_SECONDS = 0.5


def time_us_sustained(fn, reps):
    """Mean µs per call over a back-to-back loop of at least `reps` calls and SUSTAINED_SECONDS, after a warm-up loop
    that brings the card to the clock it can hold."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def loop(seconds, min_calls):
        calls = 0
        t0 = time.perf_counter()
        while calls < min_calls or time.perf_counter() - t0 < seconds:
            for _ in range(10):
                fn()
            calls += 10
            stop.record()
            stop.synchronize()  # keeps the queue short, so the host clock tracks the GPU's work
        return calls

    loop(SUSTAINED_WARMUP_SECONDS, 0)
    start.record()
    calls = loop(SUSTAINED_SECONDS, reps)
    return start.elapsed_time(stop) * 1e3 / calls


# ---- steadiness canary -----------------------------------------------------------------------------------------------
# A long, heavy GEMM that does not involve tessera, timed before and after every suite: a card whose speed changes
# inside a suite (seen once on the H200: rows of 1-2 ms ran twice as long in tessera and in cuBLASLt alike, while
# shorter rows did not) makes that suite's absolute times and its ratios against the baselines file unusable, though
# same-run ratios may survive. The verdict says so in the table instead of leaving it to be noticed.
CANARY_MNK = (8192, 8192, 8192)  # torch.mm BF16, ~1.5 ms on the H200
CANARY_TOLERANCE = 0.05


def canary_us(reps=10):
    m, n, k = CANARY_MNK
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    return time_us(lambda: torch.mm(a, b), reps)


def canary_verdict(times_us, tolerance=CANARY_TOLERANCE):
    """None when the canary times (µs, in run order) agree within `tolerance`; else a warning line."""
    times = [t for t in times_us if t]
    if len(times) < 2:
        return None
    spread = max(times) / min(times) - 1.0
    if spread <= tolerance:
        return None
    shown = " -> ".join(f"{t:.0f}" for t in times)
    return (f"WARNING: the card's speed changed during this suite: canary torch.mm bf16 {'x'.join(map(str, CANARY_MNK))} "
            f"{shown} us ({spread:.0%} apart, tolerance {tolerance:.0%}); this suite's absolute times and its ratios "
            f"against the baselines file are suspect")


# ---- machine calibration (grouped suites) ---------------------------------------------------------------------------
# DeepGEMM's grouped times are absolute times from the baselines file's machine and day; the same H200 model ran our
# unchanged kernels up to ~8 % apart on different machines (docs/perf/fp8_grouped.md v10). So every run times the
# file's two ceilings the same way (kineto, the same flush): cuBLASLt FP8 per-tensor at 8192^3 (file: PEAK_TFLOPS) and
# a 2 GiB device copy (file: PEAK_TBPS, bytes read + written). A row's DeepGEMM time is scaled by the factor of the
# ceiling that bounds the row (FLOPs at PEAK_TFLOPS against bytes at PEAK_TBPS): 'ours/dg_cal'.
CAL_GEMM_MNK = (8192, 8192, 8192)
CAL_COPY_BYTES = 2 << 30
CALIBRATION = None  # {"compute": factor, "memory": factor, ...}: this machine's time over the file's; set by main()


def measure_calibration(reps):
    m, n, k = CAL_GEMM_MNK
    a8 = randn(m, k).to(torch.float8_e4m3fn)
    b8 = randn(n, k).to(torch.float8_e4m3fn)
    gemm_us = time_us(cublas_per_tensor(a8, b8, torch.bfloat16), reps)
    del a8, b8
    src = torch.empty(CAL_COPY_BYTES, dtype=torch.int8, device="cuda").random_(-128, 127)
    dst = torch.empty_like(src)
    copy_us = time_us(lambda: dst.copy_(src), reps)
    del src, dst
    return calibration_factors(gemm_us, copy_us)


def calibration_factors(gemm_us, copy_us):
    """This machine's times for the two ceilings over the baselines file's (> 1: this machine is slower)."""
    m, n, k = CAL_GEMM_MNK
    file_gemm_us = 2 * m * n * k / (PEAK_TFLOPS * 1e6)
    file_copy_us = 2 * CAL_COPY_BYTES / (PEAK_TBPS * 1e6)
    return {"compute": gemm_us / file_gemm_us, "memory": copy_us / file_copy_us, "gemm_us": gemm_us,
            "copy_us": copy_us}


def calibrated_dg_us(dg_us, flops, nbytes, factors):
    """(DeepGEMM's time scaled to this machine, the bound used): compute when FLOPs at the peak take longer than the
    bytes at the copy bandwidth."""
    bound = "compute" if flops / PEAK_TFLOPS >= nbytes / PEAK_TBPS else "memory"
    return dg_us * factors[bound], bound


def try_time(name, fn, reps, ours):
    """(µs, status). Ours: NotImplementedError / AttributeError -> 'unavailable'. Baselines: RuntimeError or
    ValueError (torch reports a refused scale layout as ValueError) -> 'unsupported'. Anything else -> 'error'.
    Never raises: one shape must not stop the run."""
    try:
        return time_us(fn, reps), "ok"
    except Exception as e:  # noqa: BLE001
        if ours:
            status = "unavailable" if isinstance(e, (NotImplementedError, AttributeError)) else "error"
        else:
            status = "unsupported" if isinstance(e, (RuntimeError, ValueError)) else "error"
        print(f"    {name}: {status}: {type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:200]}", flush=True)
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001  (a sticky CUDA error: later rows will report it too)
            pass
        return None, status


def measure(row, reps):
    r = row.result
    if row.ours is None:
        return
    r["ours_us"], r["ours_status"] = try_time("tessera", row.ours, reps, ours=True)
    for name, (fn, flops) in row.baselines.items():
        us, r[f"{name}_status"] = try_time(name, fn, reps, ours=False)
        r[f"{name}_us"] = us
        r[f"{name}_tflops"] = (flops or row.flops) / us / 1e6 if us else None
    row.ours, row.baselines = None, dict.fromkeys(row.baselines)  # free the inputs; keep the column names
    ours = r["ours_us"]
    r["tflops"] = row.flops / ours / 1e6 if ours else None
    r["gbps"] = row.nbytes / ours / 1e3 if ours else None
    for name in row.baselines:
        base = r[f"{name}_us"]
        r[f"ours_over_{name}"] = ours / base if ours and base else None
    dg = row.ref.get("dg_us")
    if "dg_cublas_pt_us" in row.ref:  # dense: through the same-run cuBLASLt anchor
        r["dg_over_cublas_pt_file"] = dg / row.ref["dg_cublas_pt_us"]
        pt = r.get("ours_over_cublas_pt")
        r["vs_dg"] = pt / r["dg_over_cublas_pt_file"] if pt else None
    elif dg:  # grouped: the baseline file has no cuBLASLt time for these shapes
        r["ours_over_dg_abs"] = ours / dg if ours else None
        if CALIBRATION:
            r["dg_cal_us"], r["cal_bound"] = calibrated_dg_us(dg, row.flops, row.nbytes, CALIBRATION)
            r["ours_over_dg_cal"] = ours / r["dg_cal_us"] if ours else None


# ---- output ----------------------------------------------------------------------------------------------------------
def cell(r, key, fmt):
    v = r.get(key)
    if v is None:
        status = r.get(key[:-3] + "_status", "") if key.endswith("_us") else ""
        return status if status not in ("", "ok") else "-"
    return format(v, fmt) if isinstance(v, (int, float)) else str(v)


def print_table(suite, rows, canary=()):
    if not rows:
        return
    cols = [("shape", "label", "")]
    if suite == "host-overhead":
        cols += [("host_us", "host_us", ".2f"), ("dg_host_us", "dg_host_us", ".1f"),
                 ("ours/dg_abs", "ours_over_dg_abs", ".2f")]
    elif suite == "cold-compile":
        cols += [("compile_s", "compile_s", ".3f"), ("regs", "regs", "d"), ("spill_B", "spill_bytes", "d"),
                 ("dg_compile_s", "dg_compile_s", ".1f")]
    else:
        names = list(rows[0].baselines)
        cols += [("ours_us", "ours_us", ".1f"), ("TFLOPS", "tflops", ".0f"), ("GB/s", "gbps", ".0f")]
        cols += [(f"{n}_us", f"{n}_us", ".1f") for n in names]
        cols += [(f"ours/{n}", f"ours_over_{n}", ".2f") for n in names]
        cols += [("dg_us", "dg_us", ".1f")]
        if suite == "deepgemm-dense":
            cols += [("dg/cublas_pt(file)", "dg_over_cublas_pt_file", ".2f"), ("vs_dg", "vs_dg", ".2f")]
        else:
            cols += [("ours/dg_abs", "ours_over_dg_abs", ".2f"), ("dg_cal_us", "dg_cal_us", ".1f"),
                     ("ours/dg_cal", "ours_over_dg_cal", ".2f")]
        cols += [("config", "config", "")]
    table = [[h for h, _, _ in cols]]
    for row in rows:
        merged = {"label": row.label, **row.ref, **row.result}
        table.append([cell(merged, key, fmt) for _, key, fmt in cols])
    widths = [max(len(line[i]) for line in table) for i in range(len(cols))]
    print(f"\n== {suite}")
    for line in table:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))).rstrip())
    geomeans(rows)
    if len(canary) == 1:
        print(f"  canary: {canary[0]:.0f} us before the suite only (it stopped early): steadiness unknown")
    elif canary:
        warning = canary_verdict(canary)
        print(f"  {warning}" if warning else "  canary steady: " + ", ".join(f"{t:.0f}" for t in canary) + " us")


def geomeans(rows):
    if rows and rows[0].suite == "cold-compile":
        for compiler in ("nvrtc", "nvcc"):
            times = sorted(r.result["compile_s"] for r in rows
                           if r.shape["compiler"] == compiler and "first" not in r.label and "wall" not in r.label)
            if times:
                print(f"  {compiler}: median {times[len(times) // 2]:.3f} s, max {times[-1]:.3f} s over {len(times)} "
                      f"kernels (target <= 1 s; DeepGEMM {DG_COLD_COMPILE_S[compiler]} s)")
        return
    buckets = {}
    for row in rows:
        buckets.setdefault(row.bucket, []).append(row)
    keys = ["vs_dg", "ours_over_dg_abs", "ours_over_dg_cal"] + [f"ours_over_{n}" for n in (rows[0].baselines or {})]
    for bucket, members in buckets.items():
        parts = []
        for key in keys:
            vals = [m.result[key] for m in members if m.result.get(key)]
            if vals:
                parts.append(f"{key} {math.exp(sum(map(math.log, vals)) / len(vals)):.3f} (n={len(vals)})")
        if parts and bucket:
            print(f"  geomean [{bucket}]: " + ", ".join(parts))


def json_row(row, meta):
    out = {"suite": row.suite, "shape": row.label, **row.shape, "flops": row.flops, "bytes": row.nbytes}
    if row.nbytes:
        out["bw_bound_tflops"] = row.flops * PEAK_TBPS / row.nbytes
    out.update(row.ref)
    out.update(row.result)
    out.update(meta)
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}


def plot(path, by_suite):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"note: matplotlib is not importable; skipping the plot {path}")
        return
    suites = [(s, rows) for s, rows in by_suite.items() if rows and rows[0].flops]
    if not suites:
        print("note: nothing to plot")
        return
    fig, axes = plt.subplots(len(suites), 1, figsize=(max(10, 0.6 * max(len(r) for _, r in suites)), 4.5 * len(suites)),
                             squeeze=False)
    for ax, (suite, rows) in zip(axes[:, 0], suites):
        series = [("tessera", "tflops")] + [(n, f"{n}_tflops") for n in rows[0].baselines]
        width = 0.8 / len(series)
        x = range(len(rows))
        for i, (name, key) in enumerate(series):
            ax.bar([j + (i - (len(series) - 1) / 2) * width for j in x],
                   [row.result.get(key) or float("nan") for row in rows], width, label=name)
        bw = [min(PEAK_TFLOPS, row.flops * PEAK_TBPS / row.nbytes) for row in rows]
        ax.plot(list(x), bw, "kv", markersize=6, label=f"roofline: min(peak, bytes at {PEAK_TBPS} TB/s)")
        ax.axhline(PEAK_TFLOPS, color="r", linestyle="--", label=f"FP8 peak (measured) {PEAK_TFLOPS:.0f}")
        ax.set_yscale("log")
        ax.set_ylabel("TFLOPS")
        ax.set_title(suite)
        ax.set_xticks(list(x))
        ax.set_xticklabels([row.label for row in rows], rotation=45, ha="right", fontsize=7)
        ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")


# ---- main ------------------------------------------------------------------------------------------------------------
def import_tessera():
    global tessera
    try:
        import tessera as t
    except ImportError:  # fall back to the build tree
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "build", "python"))
        import tessera as t
    tessera = t


def git_commit():
    # The device machine may hold a copy of the tree whose .git is stale: the caller can say which commit it ran.
    if os.environ.get("TESSERA_COMMIT"):
        return os.environ["TESSERA_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
    except Exception:  # noqa: BLE001
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="suites: " + ", ".join(SUITES) + ", all")
    parser.add_argument("--suite", action="append", choices=list(SUITES) + ["all"],
                        help="suite to run (repeatable; default deepgemm-dense)")
    parser.add_argument("--json", metavar="OUT.jsonl", help="also write the JSON lines to this file")
    parser.add_argument("--plot", metavar="OUT.png", help="TFLOPS per shape, ours vs baselines (needs matplotlib)")
    parser.add_argument("--reps", type=int, default=30, help="timed calls per measurement, median taken (>= 20)")
    parser.add_argument("--quick", action="store_true", help="a subset of each suite's shapes")
    parser.add_argument("--timer", choices=["kineto", "events", "sustained"], default="kineto",
                        help="kernel durations from the profiler (default), CUDA events around each call, or the mean "
                             "of a 1 s back-to-back loop without flushes (the card at its power cap)")
    parser.add_argument("--flush-mib", type=int, default=2048,
                        help="L2 flush memset before every timed call, MiB (default 2048, as the baselines; >= 64)")
    parser.add_argument("--flush-kind", choices=["memset", "read"], default="memset",
                        help="flush by a memset (default, the baselines' protocol: leaves L2 dirty) or by reading the "
                             "buffer (leaves it clean)")
    args = parser.parse_args(argv)
    if args.flush_mib < 64:
        parser.error("--flush-mib must be at least 64 (larger than L2)")
    global FLUSH_BYTES, FLUSH_KIND
    FLUSH_BYTES = args.flush_mib << 20
    FLUSH_KIND = args.flush_kind
    if args.reps < 20:
        parser.error("--reps must be at least 20")
    global TIMER
    TIMER = args.timer
    suites = args.suite or ["deepgemm-dense"]
    suites = list(SUITES) if "all" in suites else list(dict.fromkeys(suites))

    if set(suites) <= NO_GPU_SUITES:
        meta = dict(commit=git_commit())
        print(f"commit {meta['commit']} (compile only, no GPU needed)")
    else:
        if torch is None or not torch.cuda.is_available():
            sys.exit("bench/run.py: needs PyTorch with a CUDA GPU (only " + ", ".join(sorted(NO_GPU_SUITES)) +
                     " runs without one)")
        import_tessera()
        meta = dict(card=torch.cuda.get_device_name(), torch=torch.__version__, cuda=torch.version.cuda,
                    commit=git_commit(), reps=args.reps, timer=args.timer, flush_mib=args.flush_mib,
                    flush_kind=args.flush_kind)
        print(f"{meta['card']}, torch {meta['torch']} (CUDA {meta['cuda']}), tessera {tessera.__version__}, "
              f"commit {meta['commit']}, median of {args.reps}, timer {args.timer}, flush {args.flush_mib} MiB "
              f"({args.flush_kind})")

    global CALIBRATION
    grouped = {"deepgemm-grouped-contiguous", "deepgemm-grouped-psum", "deepgemm-masked",
               "deepgemm-kgrouped"} & set(suites)
    if grouped and TIMER == "sustained":
        # The file's ceilings were measured in flushed bursts; a sustained loop runs 15-20 % slower at the power cap,
        # so factors taken that way would scale DeepGEMM's burst times by the protocol, not by the machine.
        print("calibration skipped: --timer sustained (the baselines file's ceilings are flushed bursts)")
    elif grouped:
        try:
            CALIBRATION = measure_calibration(args.reps)
        except Exception as e:  # noqa: BLE001  (the suites still run; their rows then carry no calibrated ratio)
            print(f"calibration failed: {type(e).__name__}: {str(e)[:200]}")
    if CALIBRATION:
        meta["calibration"] = {key: round(v, 4) for key, v in CALIBRATION.items()}
        print(f"calibration: cuBLASLt FP8 {'x'.join(map(str, CAL_GEMM_MNK))} {CALIBRATION['gemm_us']:.1f} us "
              f"(x{CALIBRATION['compute']:.3f} the file's {PEAK_TFLOPS:.0f} TFLOPS), {CAL_COPY_BYTES >> 30} GiB copy "
              f"{CALIBRATION['copy_us']:.1f} us (x{CALIBRATION['memory']:.3f} the file's {PEAK_TBPS} TB/s)")
    by_suite, canaries = {}, {}
    for suite in suites:
        rows = by_suite.setdefault(suite, [])
        timed = suite not in NO_GPU_SUITES
        print(f"\n-- running {suite}", flush=True)
        try:
            if timed:
                canaries[suite] = [canary_us()]
            for row in SUITES[suite](args.quick):
                print(f"  {row.label}", flush=True)
                measure(row, args.reps)
                rows.append(row)
            if timed:
                canaries[suite].append(canary_us())
        except Exception as e:  # noqa: BLE001  (building a suite's inputs failed: report, go on with the next suite)
            print(f"  suite {suite} stopped: {type(e).__name__}: {e}", flush=True)
    for suite, rows in by_suite.items():
        print_table(suite, rows, canaries.get(suite, ()))

    def suite_meta(suite):
        times = canaries.get(suite, [])
        if not times:
            return {}
        steady = canary_verdict(times) is None if len(times) >= 2 else None  # None: the suite stopped early
        return {"canary_us": [round(t, 1) for t in times], "canary_steady": steady}

    lines = [json.dumps(json_row(row, {**meta, **suite_meta(suite)})) for suite, rows in by_suite.items() for row in rows]
    print()
    print("\n".join(lines))
    if args.json:
        with open(args.json, "w") as f:
            f.write("\n".join(lines) + "\n")
    if args.plot:
        plot(args.plot, by_suite)


if __name__ == "__main__":
    main()
