"""Grouped FP8 GEMMs on the GPU (m-grouped contiguous with per-row ids and psum, nn, masked, k-grouped), on the
shapes DeepGEMM's tests enumerate plus edge cases, against a float64 reference on the dequantized inputs and
calc_diff against the unquantized product. Outputs are poisoned (NaN) before each call, inputs are fresh randn.

Contract points checked exactly: D rows of padding (-1) experts are 0; masked rows from masked_m[g] on keep their
poison (not written); an empty K-group leaves D[g] == C[g]; a rejected call leaves d untouched."""
import random
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

import tessera  # noqa: E402
from tessera.utils import align, per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402
from fp8_reference import dequant_blocks, dequant_rows  # noqa: E402

E4M3 = torch.float8_e4m3fn
NAN = float("nan")
# BF16 output rounding alone is ~2e-3 relative (see test_fp8_gemm_gpu.py).
BF16_REL = 8e-3
# FP32 output: within each 128-K block the FP8 tensor cores accumulate with ~2^-13 relative precision.
FP32_REL = 5e-4


@pytest.fixture(autouse=True)
def seed():
    random.seed(0)
    torch.manual_seed(0)


def stack_fp8(parts):
    return torch.stack([p.view(torch.uint8) for p in parts]).view(E4M3)


def cat_fp8_flat(parts, device="cuda"):
    if not parts:
        return torch.empty(0, dtype=E4M3, device=device)
    return torch.cat([p.reshape(-1).view(torch.uint8) for p in parts]).view(E4M3)


def quant_grouped_blocks(x):
    """bf16 [G, R, K] -> (e4m3 [G, R, K], sf [G, ceil(R/128), ceil(K/128)]), 128x128 blocks within each group."""
    parts = [per_block_cast_to_fp8(x[g], use_ue8m0=False) for g in range(x.shape[0])]
    return stack_fp8([p[0] for p in parts]), torch.stack([p[1] for p in parts])


def quant_grouped_rows(x):
    """bf16 [G, R, K] -> (e4m3 [G, R, K], sf [G, R, ceil(K/128)]), per (row, 128 K)."""
    g, r, k = x.shape
    x8, sf = per_token_cast_to_fp8(x.reshape(g * r, k), use_ue8m0=False)
    return x8.view(g, r, k), sf.view(g, r, -1)


class Accuracy:
    """Accumulates, over many row blocks, the relative error against the dequantized float64 reference and
    calc_diff (1 - 2*sum(xy) / sum(x^2 + y^2)) against the unquantized float64 product."""

    def __init__(self):
        self.err = self.ref = self.xy = self.sq = 0.0
        self.blocks = 0

    def add(self, out, ref_dequant, ref_exact):
        assert not torch.isnan(out).any(), "NaN in rows that must be written (unwritten poison or NaN results)"
        out = out.double()
        self.err += (out - ref_dequant).square().sum().item()
        self.ref += ref_dequant.square().sum().item()
        self.xy += (out * ref_exact).sum().item()
        self.sq += (out.square() + ref_exact.square()).sum().item()
        self.blocks += 1

    def check(self, rel_bound):
        if self.blocks == 0:
            return
        rel = (self.err / self.ref) ** 0.5
        diff = 1 - 2 * self.xy / self.sq
        assert rel < rel_bound, f"relative error {rel} vs the dequantized reference"
        assert diff < 1e-3, f"calc_diff {diff} vs the unquantized product"


def random_counts(num_groups, expected, lo=0.7, hi=1.3, maximum=None):
    counts = [int(expected * random.uniform(lo, hi)) for _ in range(num_groups)]
    return [min(c, maximum) for c in counts] if maximum is not None else counts


# ---------------------------------------------------------------------------------------------------------------
# M-grouped contiguous
# ---------------------------------------------------------------------------------------------------------------

def make_m_grouped(ms, n, k, psum=False, tail=0):
    """Expert g has ms[g] rows; each segment is padded to the alignment (128). With psum the layout is the
    cumulative group ends and gap rows of A (and SFA) hold random bytes; with per-row ids the padding rows are -1
    and A holds ordinary random data there (the kernel must still write zeros). tail: extra rows at the end."""
    alignment = tessera.get_mk_alignment_for_contiguous_layout()
    starts, start = [], 0
    for m in ms:
        starts.append(start)
        start += align(m, alignment)
    m_total = start + tail
    a = torch.randn(m_total, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(len(ms), n, k, device="cuda", dtype=torch.bfloat16)
    a8, sfa = per_token_cast_to_fp8(a, use_ue8m0=False)
    b8, sfb = quant_grouped_blocks(b)
    valid = torch.zeros(m_total, dtype=torch.bool)
    ids = torch.full((m_total,), -1, dtype=torch.int32)
    for g, (s, m) in enumerate(zip(starts, ms)):
        valid[s:s + m] = True
        ids[s:s + m] = g
    if psum:
        layout = torch.tensor([s + m for s, m in zip(starts, ms)], dtype=torch.int32, device="cuda")
        gap = (~valid).nonzero().squeeze(1).cuda()
        if gap.numel():
            # Garbage, as DeepGEMM's tests leave it uninitialized (may include FP8 NaN encodings): it may only
            # affect the gap rows of D, which are unspecified.
            a8.view(torch.uint8)[gap] = torch.randint(0, 256, (gap.numel(), k), dtype=torch.uint8, device="cuda")
            sfa[gap] = torch.rand(gap.numel(), sfa.shape[1], device="cuda") * 1e3
    else:
        layout = ids.cuda()
    d = torch.full((m_total, n), NAN, device="cuda", dtype=torch.bfloat16)
    return SimpleNamespace(ms=ms, starts=starts, m_total=m_total, a=a, b=b, a8=a8, sfa=sfa, b8=b8, sfb=sfb,
                           layout=layout, ids=ids.cuda(), d=d, psum=psum)


def check_m_grouped(p):
    acc = Accuracy()
    for g, (s, m) in enumerate(zip(p.starts, p.ms)):
        if m == 0:
            continue
        rows = slice(s, s + m)
        ref = dequant_rows(p.a8[rows], p.sfa[rows]) @ dequant_blocks(p.b8[g], p.sfb[g]).T
        exact = p.a[rows].double() @ p.b[g].double().T
        acc.add(p.d[rows], ref, exact)
    acc.check(BF16_REL)
    if not p.psum:
        padding = p.d[p.ids == -1]
        assert bool((padding == 0).all()), (f"{int((padding != 0).sum())} values of padding (-1) rows are not exactly "
                                            f"0 ({int(torch.isnan(padding).sum())} NaN, i.e. unwritten)")


def run_contiguous(p, nn=False, **kwargs):
    if nn:
        b = (p.b8.transpose(1, 2), p.sfb.transpose(1, 2))  # given as [G, K, N]: a view of the [G, N, K] buffer
        tessera.m_grouped_fp8_gemm_nn_contiguous((p.a8, p.sfa), b, p.d, p.layout, use_psum_layout=p.psum, **kwargs)
    else:
        tessera.m_grouped_fp8_gemm_nt_contiguous((p.a8, p.sfa), (p.b8, p.sfb), p.d, p.layout,
                                                 use_psum_layout=p.psum, **kwargs)


CONTIGUOUS_GROUPS = [(4, 8192), (8, 4096)]
CONTIGUOUS_NK = [(6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)]
CONTIGUOUS_CASES = [pytest.param(g, m, n, k, id=f"g{g}-m{m}-n{n}-k{k}")
                    for g, m in CONTIGUOUS_GROUPS for n, k in CONTIGUOUS_NK]


@pytest.mark.parametrize("groups,expected_m,n,k", CONTIGUOUS_CASES)
def test_contiguous_row_ids(groups, expected_m, n, k):
    p = make_m_grouped(random_counts(groups, expected_m), n, k)
    run_contiguous(p)
    check_m_grouped(p)


@pytest.mark.parametrize("groups,expected_m,n,k", CONTIGUOUS_CASES)
def test_contiguous_psum(groups, expected_m, n, k):
    ms = random_counts(groups, expected_m)
    ms[1] = 0  # an empty group: end == start
    p = make_m_grouped(ms, n, k, psum=True, tail=256)
    run_contiguous(p, expected_m_for_psum_layout=expected_m)
    check_m_grouped(p)


@pytest.mark.parametrize("ms,n,k,tail", [
    pytest.param([300, 0, 130, 0, 77], 2048, 1536, 0, id="empty-experts"),
    pytest.param([0, 0, 0, 0], 1024, 512, 512, id="all-padding"),
    pytest.param([1000], 4096, 2048, 0, id="one-group"),
    pytest.param([1, 127, 128, 129, 255], 1024, 1024, 256, id="segment-edges-and-padding-tail"),
])
def test_contiguous_row_ids_edges(ms, n, k, tail):
    p = make_m_grouped(ms, n, k, tail=tail)
    run_contiguous(p)
    check_m_grouped(p)
    if sum(ms) == 0:
        assert bool((p.d == 0).all()), "all rows are padding: D must be all zeros"


@pytest.mark.parametrize("ms,n,k,tail", [
    pytest.param([300, 0, 130, 0, 77], 2048, 1536, 0, id="empty-groups"),
    pytest.param([1, 127, 128, 129, 255], 1024, 1024, 256, id="segment-edges-and-tail"),
    pytest.param([200, 70], 576, 512, 128, id="small"),
])
def test_contiguous_psum_edges(ms, n, k, tail):
    # Small enough for racecheck; the psum plans here are two-warpgroup 128-row tiles (32 reserved registers).
    p = make_m_grouped(ms, n, k, psum=True, tail=tail)
    run_contiguous(p, expected_m_for_psum_layout=max(1, sum(ms) // len(ms)))
    check_m_grouped(p)


def test_psum_end_rows_past_m_stop_at_m():
    # The layout is device data the host cannot check without a sync: an end row past A's rows must not make the
    # kernel store past D (here D is a view of a larger poisoned buffer whose tail must keep its poison).
    p = make_m_grouped([100, 200], 512, 512, psum=True)  # group 1 at rows [128, 328) of 384
    m = 300
    tessera.m_grouped_fp8_gemm_nt_contiguous((p.a8[:m], p.sfa[:m]), (p.b8, p.sfb), p.d[:m], p.layout,
                                             use_psum_layout=True, expected_m_for_psum_layout=150)
    acc = Accuracy()
    for g, rows in ((0, slice(0, 100)), (1, slice(128, m))):
        ref = dequant_rows(p.a8[rows], p.sfa[rows]) @ dequant_blocks(p.b8[g], p.sfb[g]).T
        acc.add(p.d[rows], ref, p.a[rows].double() @ p.b[g].double().T)
    acc.check(BF16_REL)
    assert torch.isnan(p.d[m:]).all(), "rows past M were written"


# Psum 128x256 tiles (two N halves) store rows that stop early through shared memory: forced (one subprocess each,
# TESSERA_FP8_CONFIG is read once per process) on groups that end inside either warpgroup's 64 rows or fill a tile,
# an empty group, and garbage in the gaps. K = 2048: the idle second warpgroup skips its wgmmas; K = 4096: it does not.
FORCED_PSUM = """
import sys
sys.path.insert(0, {tests!r})
import test_fp8_grouped_gpu as t
p = t.make_m_grouped([44, 0, 300, 129, 1, 65, 256], {n}, {k}, psum=True, tail=128)
t.run_contiguous(p, expected_m_for_psum_layout=128)
t.check_m_grouped(p)
print(t.tessera._C.fp8_grouped_gemm_config("psum", p.m_total, {n}, {k}, 7, 128, 0))
print("ok")
"""


@pytest.mark.parametrize("n,k", [(1280, 2048), (1536, 4096)])
def test_psum_forced_wide_tiles(n, k):
    import os
    import subprocess
    import sys
    env = dict(os.environ, TESSERA_FP8_CONFIG="128x256")
    script = FORCED_PSUM.format(tests=os.path.dirname(os.path.abspath(__file__)), n=n, k=k)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout + out.stderr
    assert "block 128x256" in out.stdout, out.stdout


@pytest.mark.parametrize("psum", [False, True], ids=["ids", "psum"])
def test_contiguous_256_groups(psum):
    ms = random_counts(256, 48)
    p = make_m_grouped(ms, 512, 512, psum=psum)
    run_contiguous(p)
    check_m_grouped(p)


@pytest.mark.parametrize("psum", [False, True], ids=["ids", "psum"])
def test_nn_contiguous(psum):
    ms = random_counts(4, 1024)
    if psum:
        ms[2] = 0
    p = make_m_grouped(ms, 4096, 2048, psum=psum, tail=128 if psum else 0)
    run_contiguous(p, nn=True)
    check_m_grouped(p)


def test_contiguous_empty_m_returns():
    a8, sfa = torch.empty(0, 512, dtype=E4M3, device="cuda"), torch.empty(0, 4, device="cuda")
    b8, sfb = quant_grouped_blocks(torch.randn(2, 256, 512, device="cuda", dtype=torch.bfloat16))
    d = torch.empty(0, 256, device="cuda", dtype=torch.bfloat16)
    tessera.m_grouped_fp8_gemm_nt_contiguous((a8, sfa), (b8, sfb), d, torch.empty(0, dtype=torch.int32,
                                                                                     device="cuda"))


# ---------------------------------------------------------------------------------------------------------------
# M-grouped masked
# ---------------------------------------------------------------------------------------------------------------

def make_masked(groups, m_max, n, k):
    a = torch.randn(groups, m_max, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16)
    a8, sfa = quant_grouped_rows(a)
    b8, sfb = quant_grouped_blocks(b)
    d = torch.full((groups, m_max, n), NAN, device="cuda", dtype=torch.bfloat16)
    return SimpleNamespace(a=a, b=b, a8=a8, sfa=sfa, b8=b8, sfb=sfb, d=d)


def check_masked(p, masked):
    acc = Accuracy()
    for g, m in enumerate(masked):
        assert bool(torch.isnan(p.d[g, m:]).all()), f"group {g}: rows from masked_m = {m} on were written"
        if m:
            ref = dequant_rows(p.a8[g, :m], p.sfa[g, :m]) @ dequant_blocks(p.b8[g], p.sfb[g]).T
            exact = p.a[g, :m].double() @ p.b[g].double().T
            acc.add(p.d[g, :m], ref, exact)
    acc.check(BF16_REL)


def run_masked(p, masked, expected_m):
    masked_m = torch.tensor(masked, dtype=torch.int32, device="cuda")
    tessera.m_grouped_fp8_gemm_nt_masked((p.a8, p.sfa), (p.b8, p.sfb), p.d, masked_m, expected_m)
    check_masked(p, masked)


MASKED_M_MAX = 4096

# Masked plans forced through TESSERA_FP8_CONFIG (read once per process: one subprocess each): two-warpgroup 128-row tiles whose groups end inside the first warpgroup's 64 rows (300 = 2 x 128 + 44, 37, 129, 1):
# the second warpgroup has no row to compute there. 128x256 (two N halves) at K = 2048 skips the idle warpgroup's wgmmas
# and stages D in halves for a fourth stage (":p3" keeps the whole D tile and 3 stages), whole tiles through TMA stores
# and tiles that stop early through the staged row copy, with N = 1152 also a last n-block whose second half lies wholly
# past N; at K = 3072 it runs the k-block loop unrolled over the stages.
FORCED_MASKED = """
import sys
sys.path.insert(0, {tests!r})
import test_fp8_grouped_gpu as t
p = t.make_masked(5, 300, {n}, {k})
t.run_masked(p, [0, 300, 37, 129, 1], 100)
print(t.tessera._C.fp8_grouped_gemm_config("masked", 300, {n}, {k}, 5, 100, 0))
print("ok")
"""


@pytest.mark.parametrize("forced,k,n", [("64x128", 1536, 1024), ("64x192", 1536, 1024), ("128x144", 1536, 1024),
                                       ("128x128", 1536, 1024), ("128x256", 2048, 1024), ("128x256", 2048, 1152),
                                       ("128x256:p3", 2048, 1024), ("128x256", 3072, 1024)])
def test_masked_forced_configs(forced, k, n):
    import os
    import subprocess
    import sys
    env = dict(os.environ, TESSERA_FP8_CONFIG=forced)
    script = FORCED_MASKED.format(tests=os.path.dirname(os.path.abspath(__file__)), k=k, n=n)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout + out.stderr
    # the forced plan was the one that ran
    assert ("D in halves" in out.stdout) == (forced == "128x256" and k <= 2048), out.stdout
    assert f"block {forced.split(':')[0]}x128" in out.stdout, out.stdout


@pytest.mark.parametrize("groups,expected_m,n,k", [
    pytest.param(g, m, n, k, id=f"g{g}-m{m}-n{n}-k{k}")
    for g, m, n, k in [(32, 192, 4096, 2048), (6, 1024, 4096, 2048), (32, 20, 4096, 2048), (6, 20, 4096, 2048),
                       (32, 192, 4096, 7168), (6, 1024, 7168, 2048),
                       # K = 1536: the heuristic's 64x192 spills there and is planned again (64x160)
                       (32, 20, 4096, 1536)]])
def test_masked(groups, expected_m, n, k):
    p = make_masked(groups, MASKED_M_MAX, n, k)
    masked = random_counts(groups, expected_m, maximum=MASKED_M_MAX)
    run_masked(p, masked, expected_m)


@pytest.mark.parametrize("groups,m_max,n,k,masked", [
    pytest.param(4, 200, 1024, 512, [0, 200, 37, 129], id="mmax200-empty-and-full"),
    pytest.param(3, 200, 1024, 512, [0, 0, 0], id="mmax200-all-empty"),
    pytest.param(5, 77, 512, 1024, [1, 77, 64, 65, 0], id="mmax77"),
    pytest.param(6, 4096, 2048, 1024, [0, 4096, 1000, 1, 4095, 128], id="mmax4096-empty-and-full"),
])
def test_masked_edges(groups, m_max, n, k, masked):
    p = make_masked(groups, m_max, n, k)
    run_masked(p, masked, max(1, sum(masked) // groups))


def test_masked_cuda_graph_follows_masked_m():
    groups, m_max, n, k = 8, 256, 1024, 1024
    p = make_masked(groups, m_max, n, k)
    first = [100, 0, 256, 17, 200, 128, 1, 64]
    masked_m = torch.tensor(first, dtype=torch.int32, device="cuda")

    def call():
        tessera.m_grouped_fp8_gemm_nt_masked((p.a8, p.sfa), (p.b8, p.sfb), p.d, masked_m, 128)

    call()  # outside the capture first: compiles and loads the kernel
    torch.cuda.synchronize()
    check_masked(p, first)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    for values in ([256, 3, 0, 129, 64, 255, 128, 0], [0] * groups, [m_max] * groups, first):
        masked_m.copy_(torch.tensor(values, dtype=torch.int32))
        p.d.fill_(NAN)
        graph.replay()
        torch.cuda.synchronize()
        check_masked(p, values)


# ---------------------------------------------------------------------------------------------------------------
# K-grouped (weight gradient)
# ---------------------------------------------------------------------------------------------------------------

def make_k_grouped(m, n, ks, sf_mn_major=False):
    """Per group A_g [M, k_g], B_g [N, k_g] bf16, quantized per (row, 128 K); A = flat concat of the K-major
    blocks, SFA = concat along dim 1 ([M, sum(k_g/128)]); same for B. sf_mn_major: SFs given as the transpose of a
    contiguous [sum, MN] tensor (the zero-copy form)."""
    groups = []
    for k in ks:
        if k == 0:
            groups.append(None)
            continue
        a_g = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b_g = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        a8_g, sfa_g = per_token_cast_to_fp8(a_g, use_ue8m0=False)
        b8_g, sfb_g = per_token_cast_to_fp8(b_g, use_ue8m0=False)
        groups.append(SimpleNamespace(a=a_g, b=b_g, a8=a8_g, sfa=sfa_g, b8=b8_g, sfb=sfb_g))
    present = [x for x in groups if x is not None]
    a8 = cat_fp8_flat([x.a8 for x in present])
    b8 = cat_fp8_flat([x.b8 for x in present])
    sfa = torch.cat([x.sfa for x in present], dim=1) if present else torch.empty(m, 0, device="cuda")
    sfb = torch.cat([x.sfb for x in present], dim=1) if present else torch.empty(n, 0, device="cuda")
    if sf_mn_major:
        sfa, sfb = sfa.T.contiguous().T, sfb.T.contiguous().T
    c = torch.randn(len(ks), m, n, device="cuda")
    layout = torch.tensor(ks, dtype=torch.int32, device="cuda")
    return SimpleNamespace(groups=groups, a8=a8, sfa=sfa, b8=b8, sfb=sfb, c=c, layout=layout, ks=list(ks))


def run_and_check_k_grouped(p, in_place):
    c_ref = p.c.clone()
    if in_place:
        d = p.c
        tessera.k_grouped_fp8_gemm_nt_contiguous((p.a8, p.sfa), (p.b8, p.sfb), d, p.ks, p.layout, c=d)
    else:
        d = torch.full_like(p.c, NAN)
        tessera.k_grouped_fp8_gemm_nt_contiguous((p.a8, p.sfa), (p.b8, p.sfb), d, p.ks, p.layout, c=p.c)
        assert torch.equal(p.c, c_ref), "c was modified"
    acc = Accuracy()
    for g, x in enumerate(p.groups):
        if x is None:
            assert torch.equal(d[g], c_ref[g]), f"group {g} has k = 0: D[g] must equal C[g] exactly"
            continue
        ref = c_ref[g].double() + dequant_rows(x.a8, x.sfa) @ dequant_rows(x.b8, x.sfb).T
        exact = c_ref[g].double() + x.a.double() @ x.b.double().T
        acc.add(d[g], ref, exact)
    acc.check(FP32_REL)


def random_ks(groups, expected_k):
    ks = [align(int(expected_k * random.uniform(0.7, 1.3)), 128) for _ in range(groups)]
    ks[random.randrange(groups)] = 0  # an empty group
    return ks


@pytest.mark.parametrize("groups,m,n,expected_k", [
    pytest.param(g, m, n, k, id=f"g{g}-m{m}-n{n}-k{k}")
    for g, m, n, k in [(4, 4096, 7168, 8192), (4, 7168, 2048, 8192), (8, 4096, 7168, 4096), (8, 7168, 2048, 4096)]])
@pytest.mark.parametrize("in_place", [True, False], ids=["c-is-d", "c-separate"])
def test_k_grouped(groups, m, n, expected_k, in_place):
    p = make_k_grouped(m, n, random_ks(groups, expected_k))
    run_and_check_k_grouped(p, in_place)


@pytest.mark.parametrize("m,n,ks,sf_mn_major", [
    pytest.param(768, 2048, [128, 0, 256, 128, 384, 0, 128, 256, 128, 128, 0, 384, 256, 128, 128, 0], False,
                 id="16-small-groups"),
    pytest.param(256, 512, [0, 256, 0, 384, 0], True, id="mn-major-sf-first-last-empty"),
    pytest.param(4096, 1024, [1024], True, id="one-group-mn-major-sf"),
    pytest.param(512, 256, [0, 0, 128], False, id="only-last-group"),
    # M not a multiple of the tile: the last m-block's rows stop early and go out by the epilogue's predicated
    # reduce-adds (store_rows_direct), which must not touch the next group's D rows.
    pytest.param(200, 264, [128, 0, 384, 256], False, id="m200-partial-tiles"),
])
def test_k_grouped_edges(m, n, ks, sf_mn_major):
    p = make_k_grouped(m, n, ks, sf_mn_major=sf_mn_major)
    run_and_check_k_grouped(p, in_place=False)


def test_k_grouped_all_empty_is_c():
    p = make_k_grouped(256, 512, [0, 0, 0])
    run_and_check_k_grouped(p, in_place=False)


# ---------------------------------------------------------------------------------------------------------------
# Rejected inputs: raised before any launch, d untouched
# ---------------------------------------------------------------------------------------------------------------

def test_bad_inputs_raise_before_launch():
    p = make_m_grouped([100, 200], 512, 512)
    d = torch.full_like(p.d, 7.0)
    a, b = (p.a8, p.sfa), (p.b8, p.sfb)
    f = tessera.m_grouped_fp8_gemm_nt_contiguous
    with pytest.raises(TypeError, match="argument 'b': expected dtype float8_e4m3fn"):
        f(a, (p.b.to(torch.bfloat16), p.sfb), d, p.layout)
    with pytest.raises(TypeError, match="argument 'grouped_layout': expected dtype int32"):
        f(a, b, d, p.layout.long())
    with pytest.raises(ValueError, match="argument 'grouped_layout': expected a 1-D int32 tensor"):
        f(a, b, d, p.layout[:-1])
    with pytest.raises(NotImplementedError, match=r"only recipe \(1, 128, 128\)"):
        f(a, b, d, p.layout, recipe=(1, 1, 128))
    with pytest.raises(ValueError, match="expected_m_for_psum_layout"):
        f(a, b, d, p.layout, expected_m_for_psum_layout=128)
    assert bool((d == 7.0).all())

    q = make_masked(2, 128, 512, 512)
    dm = torch.full_like(q.d, 7.0)
    masked_m = torch.tensor([64, 128], dtype=torch.int32, device="cuda")
    fm = tessera.m_grouped_fp8_gemm_nt_masked
    with pytest.raises(ValueError, match="argument 'masked_m': expected a 1-D int32 tensor of 2 elements"):
        fm((q.a8, q.sfa), (q.b8, q.sfb), dm, masked_m[:1], 64)
    for expected_m in (0, -1):
        with pytest.raises(ValueError, match="argument 'expected_m'"):
            fm((q.a8, q.sfa), (q.b8, q.sfb), dm, masked_m, expected_m)
    with pytest.raises(NotImplementedError, match="recipe"):
        fm((q.a8, q.sfa), (q.b8, q.sfb), dm, masked_m, 64, recipe=(1, 1, 128))
    assert bool((dm == 7.0).all())

    r = make_k_grouped(256, 256, [128, 256])
    dk = torch.full_like(r.c, 7.0)
    fk = tessera.k_grouped_fp8_gemm_nt_contiguous
    args = (r.a8, r.sfa), (r.b8, r.sfb), dk
    with pytest.raises(ValueError, match="argument 'ks_cpu'.*multiple of 128"):
        fk(*args, [128, 200], r.layout, c=r.c)
    with pytest.raises(ValueError, match="argument 'ks_cpu'.*one K per group"):
        fk(*args, [384], r.layout, c=r.c)
    with pytest.raises(tessera.InvalidArgument, match="argument 'c': expected a tensor"):
        fk(*args, r.ks, r.layout)
    with pytest.raises(NotImplementedError, match="not supported on SM90"):
        fk(*args, r.ks, r.layout, c=r.c, use_psum_layout=True)
    with pytest.raises(NotImplementedError, match="SM90 supports only"):
        fk(*args, r.ks, r.layout, c=r.c, recipe=(1, 128, 128))
    with pytest.raises(NotImplementedError, match="SM100-only in DeepGEMM"):
        tn_a = (torch.empty(384, 256, dtype=E4M3, device="cuda"), torch.ones(3, 256, device="cuda"))
        tessera.k_grouped_fp8_gemm_tn_contiguous(tn_a, tn_a, dk, r.ks, r.layout, c=r.c)
    assert bool((dk == 7.0).all())


def test_grouped_config_query_names_the_plan():
    device = torch.cuda.current_device()
    for kind, m in (("contiguous", 32640), ("psum", 32640), ("masked", 4096), ("k_grouped", 4096)):
        line = tessera._C.fp8_grouped_gemm_config(kind, m, 4096, 7168, 4, 192 if kind == "masked" else 0, device)
        assert line.startswith("block ") and "stages" in line, (kind, line)
