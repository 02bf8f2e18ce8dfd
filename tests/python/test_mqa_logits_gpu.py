"""Non-paged MQA logits on the GPU (tessera.mqa_logits).

- DeepGEMM's test cases (test_attention.py: S in {2048, 8192}, S_kv in {8192, 65536}, H in {32, 64}, D in {32, 64,
  128}, causal and two-chunk context-parallel ranges, FP32 / BF16 logits, normal+clean and compressed layouts): a
  representative subset by default, all 192 with TESSERA_MQA_FULL=1. Checked as DeepGEMM checks them (exact -inf
  mask, calc_diff against the quantized inputs' FP32 reference and the BF16 inputs' reference, 20 bitwise-equal
  repeats, dtype and shape), and the profiler sees one 'mqa_logits' and one 'clean_logits' kernel per call.
- Edge cases through the raw op on NaN-poisoned buffers: exactly the in-range entries are written (nothing in the
  padding, past the last row, or outside the ranges), -inf exactly outside with clean; empty, inverted and
  out-of-bounds ranges, ranges at the S_kv edges, S not a multiple of the query block, tiny S_kv, KV splits, padded
  strides, negative KV scales, compressed rows cut at max_seqlen_k.
- The clean kernel alone on unaligned views; CUDA-graph capture; two streams at once; bad inputs raise.
Timings are bench/run.py's (--suite indexer), not a test's."""
import os

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

import tessera  # noqa: E402
from tessera import _C  # noqa: E402
from tessera import mqa_logits as ml  # noqa: E402
from tessera.testing import bench_kineto, calc_diff  # noqa: E402

FULL = os.environ.get("TESSERA_MQA_FULL", "0") not in ("", "0")
NEG_INF = float("-inf")


@pytest.fixture(autouse=True)
def exact_fp32_matmul():
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # the references are FP32 products, not TF32
    yield
    torch.backends.cuda.matmul.allow_tf32 = old


def quantize_kv(kv):
    """Per-row E4M3 with an FP32 scale (amax / 448)."""
    sf = kv.float().abs().amax(dim=1).clamp(min=1e-4) / 448.0
    return (kv.float() / sf[:, None]).to(torch.float8_e4m3fn), sf.contiguous()


def make_inputs(s, s_kv, h, d, seed=0):
    torch.manual_seed(seed)
    q = torch.randn(s, h, d, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(s_kv, d, device="cuda", dtype=torch.bfloat16)
    weights = torch.randn(s, h, device="cuda", dtype=torch.float32)
    kv_fp8, kv_sf = quantize_kv(kv)
    return q, kv, q.to(torch.float8_e4m3fn), kv_fp8, kv_sf, weights


def causal_ranges(s, s_kv):
    """ks = 0, ke[i] = S_kv - S + i: the last S queries of a causal prefill."""
    ks = torch.zeros(s, dtype=torch.int32, device="cuda")
    ke = torch.arange(s, dtype=torch.int32, device="cuda") + (s_kv - s)
    return ks, ke


def context_parallel_ranges(s, s_kv):
    """DeepGEMM's two-chunk context-parallel pattern for CP rank cp_size // 3: the first half of the queries end at
    rank * chunk + i, the second half at (2 cp_size - 1 - rank) * chunk + i."""
    chunk, cp_size = s // 2, s_kv // s
    rank = cp_size // 3
    i = torch.arange(chunk, dtype=torch.int32, device="cuda")
    ke = torch.cat([rank * chunk + i, (2 * cp_size - 1 - rank) * chunk + i])
    return torch.zeros(s, dtype=torch.int32, device="cuda"), ke.contiguous()


def reference(q, kv, kv_sf, weights, ks, ke, dtype=torch.float32):
    """[S, S_kv] logits in `dtype` (inputs dequantized: q as given, kv * kv_sf), -inf outside each row's range. ReLU
    of the scaled score, as the contract states it (exact for scales of either sign)."""
    s, h, _ = q.shape
    s_kv = kv.shape[0]
    qd = q.float().to(dtype)
    k = kv.float().to(dtype) * (kv_sf.to(dtype)[:, None] if kv_sf is not None else 1)
    w = weights.to(dtype)
    out = torch.empty(s, s_kv, dtype=dtype, device="cuda")
    chunk = max(1, (1 << 28) // max(1, s * h * qd.element_size()))
    cols = torch.arange(s_kv, device="cuda")
    for n0 in range(0, s_kv, chunk):
        n1 = min(s_kv, n0 + chunk)
        score = torch.einsum("mhd,nd->mhn", qd, k[n0:n1])
        part = torch.einsum("mhn,mh->mn", score.relu(), w)
        mask = (cols[None, n0:n1] >= ks.long()[:, None]) & (cols[None, n0:n1] < ke.long()[:, None])
        out[:, n0:n1] = part.masked_fill(~mask, NEG_INF)
    return out


def valid_mask(ks, ke, s_kv):
    cols = torch.arange(s_kv, device="cuda")
    return (cols[None, :] >= ks.long()[:, None]) & (cols[None, :] < ke.long()[:, None])


def expand_compressed(logits, ks, ke, s_kv):
    """[S, max_seqlen_k] (column t = KV row ks + t) -> [S, S_kv] with -inf outside the ranges."""
    cols = torch.arange(s_kv, device="cuda")
    t = cols[None, :] - ks.long()[:, None]
    mask = valid_mask(ks, ke, s_kv) & (t < logits.shape[1])
    gathered = logits.float().gather(1, t.clamp(0, logits.shape[1] - 1))
    return torch.where(mask, gathered, torch.full_like(gathered, NEG_INF))


def deepgemm_cases():
    cases = []
    for logits_dtype in (torch.bfloat16, torch.float32):
        for compressed in (False, True):
            for s in (2048, 8192):
                for s_kv in (8192, 65536):
                    for h in (32, 64):
                        for d in (32, 64, 128):
                            for cp in (True, False):
                                cases.append((logits_dtype, compressed, s, s_kv, h, d, cp))
    assert len(cases) == 192
    return cases


def subset(cases):
    """Every (H, D, dtype, layout, ranges) at the smallest shape, and each large shape once per layout."""
    small = [c for c in cases if c[2] == 2048 and c[3] == 8192]
    large = [c for c in cases if (c[2], c[3]) != (2048, 8192) and c[4] == 64 and c[5] == 128 and c[6]
             and c[0] == torch.bfloat16]
    return small + large


def case_id(c):
    dtype, compressed, s, s_kv, h, d, cp = c
    dtype_tag = "bf16" if dtype == torch.bfloat16 else "fp32"
    layout = "cmp" if compressed else "clean"
    return f"{dtype_tag}-{layout}-S{s}-SK{s_kv}-H{h}-D{d}-{'cp' if cp else 'causal'}"


CASES = deepgemm_cases() if FULL else subset(deepgemm_cases())


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_deepgemm_cases(case):
    logits_dtype, compressed, s, s_kv, h, d, cp = case
    q, kv, q_fp8, kv_fp8, kv_sf, weights = make_inputs(s, s_kv, h, d)
    ks, ke = context_parallel_ranges(s, s_kv) if cp else causal_ranges(s, s_kv)
    max_seqlen_k = int((ke - ks).max().item()) if compressed else 0
    kwargs = dict(clean_logits=not compressed, max_seqlen_k=max_seqlen_k, logits_dtype=logits_dtype)
    logits = ml.fp8_fp4_mqa_logits((q_fp8, None), (kv_fp8, kv_sf), weights, ks, ke, **kwargs)
    assert logits.dtype == logits_dtype
    assert logits.shape == ((s, max_seqlen_k) if compressed else (s, s_kv))
    elem = logits.element_size()
    assert logits.stride(0) == _C.mqa_logits_row_stride(s_kv, max_seqlen_k, logits_dtype == torch.bfloat16)
    assert (logits.stride(0) * elem) % 1024 == 0

    # 20 repeats, bitwise equal on the specified entries.
    if compressed:
        kept = torch.arange(max_seqlen_k, device="cuda")[None, :] < (ke - ks).long()[:, None]
        first = logits.masked_fill(~kept, 0)
    else:
        first = logits.clone()
    for _ in range(20):
        again = ml.fp8_fp4_mqa_logits((q_fp8, None), (kv_fp8, kv_sf), weights, ks, ke, **kwargs)
        again = again.masked_fill(~kept, 0) if compressed else again
        assert torch.equal(again.view(torch.int16 if elem == 2 else torch.int32),
                           first.view(torch.int16 if elem == 2 else torch.int32)), "not bitwise repeatable"

    full = expand_compressed(logits, ks, ke, s_kv) if compressed else logits.float()
    ref = reference(q_fp8, kv_fp8, kv_sf, weights, ks, ke)
    ref_neg_inf = ref == NEG_INF
    assert torch.equal(full == NEG_INF, ref_neg_inf), "-inf mask differs from the ranges"
    assert torch.isfinite(full[~ref_neg_inf]).all()
    full, ref = full.masked_fill(ref_neg_inf, 0), ref.masked_fill(ref_neg_inf, 0)
    diff = calc_diff(full, ref)
    assert diff < (3e-5 if logits_dtype == torch.bfloat16 else 5e-6), f"diff vs the quantized inputs: {diff}"
    del ref
    ref_bf16 = reference(q, kv, None, weights, ks, ke).masked_fill(ref_neg_inf, 0)
    assert calc_diff(full, ref_bf16) < 1e-3


def test_kernel_names_one_per_call():
    s, s_kv, h, d = 256, 4096, 64, 128
    _, _, q_fp8, kv_fp8, kv_sf, weights = make_inputs(s, s_kv, h, d)
    ks, ke = causal_ranges(s, s_kv)
    fn = lambda: ml.fp8_fp4_mqa_logits((q_fp8, None), (kv_fp8, kv_sf), weights, ks, ke)  # noqa: E731
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    main = [n for n in names if "mqa_logits" in n]
    clean = [n for n in names if "clean_logits" in n]
    assert len(main) == 1 and len(clean) == 1, names
    assert "mqa_logits" not in clean[0]
    t, clean_t = bench_kineto(fn, ("mqa_logits", "clean_logits"), suppress_kineto_output=True)
    assert t > 0 and clean_t > 0
    # The compressed layout runs the main kernel only.
    fn = lambda: ml.fp8_fp4_mqa_logits((q_fp8, None), (kv_fp8, kv_sf), weights, ks, ke,  # noqa: E731
                                        clean_logits=False, max_seqlen_k=s_kv)
    t, clean_t = bench_kineto(fn, ("mqa_logits", "clean_logits"), suppress_kineto_output=True)
    assert t > 0 and clean_t == 0


# ------------------------------------------------------------------------------------------------------------------
# Edge cases through the raw op, on NaN-poisoned buffers.

def run_raw(q_fp8, kv_fp8, kv_sf, weights, ks, ke, clean, max_seqlen_k=0, logits_dtype=torch.float32):
    """Returns (buffer, view): the buffer has one spare row and the padded stride, all NaN before the call."""
    s, s_kv = q_fp8.shape[0], kv_fp8.shape[0]
    cols = max_seqlen_k if max_seqlen_k > 0 else s_kv
    stride = _C.mqa_logits_row_stride(s_kv, max_seqlen_k, logits_dtype == torch.bfloat16)
    buf = torch.full((s + 1, stride), float("nan"), dtype=logits_dtype, device="cuda")
    view = buf[:s, :cols]
    workspace = torch.full((1,), 12345, dtype=torch.int32, device="cuda")  # the op zeroes it
    _C.mqa_logits(q_fp8, kv_fp8, kv_sf, weights, ks, ke, view, workspace, clean, max_seqlen_k)
    return buf, view


def check_raw(q_fp8, kv_fp8, kv_sf, weights, ks, ke, max_seqlen_k=0, logits_dtype=torch.float32):
    s, s_kv = q_fp8.shape[0], kv_fp8.shape[0]
    ref = reference(q_fp8, kv_fp8, kv_sf, weights, ks, ke, dtype=torch.float64)
    if max_seqlen_k > 0:  # compressed rows hold KV rows ks .. ks + max_seqlen_k - 1
        t = torch.arange(s_kv, device="cuda")[None, :] - ks.long()[:, None]
        ref = ref.masked_fill(t >= max_seqlen_k, NEG_INF)
    tol = 3e-5 if logits_dtype == torch.bfloat16 else 5e-6
    for clean in ((False, True) if max_seqlen_k == 0 else (False,)):
        buf, view = run_raw(q_fp8, kv_fp8, kv_sf, weights, ks, ke, clean, max_seqlen_k, logits_dtype)
        cols = view.shape[1]
        assert torch.isnan(buf[s:]).all(), "a row past S was written"
        assert torch.isnan(buf[:, cols:]).all(), "the padding columns were written"
        if max_seqlen_k > 0:
            full = expand_compressed(view.nan_to_num(nan=NEG_INF), ks, ke, s_kv).double()
            t = torch.arange(cols, device="cuda")[None, :]
            width = (ke.long().clamp(max=s_kv) - ks.long().clamp(min=0)).clamp(min=0)
            start_gap = (0 - ks.long()).clamp(min=0)  # columns before KV row 0 (ks < 0) are never written
            written = (t >= start_gap[:, None]) & (t < (start_gap + width)[:, None]) & (t < cols)
            assert torch.equal(~torch.isnan(view), written), "compressed columns written != the range"
        else:
            full = view.double()
            inside = valid_mask(ks, ke, s_kv)
            outside_value = torch.full_like(full, NEG_INF) if clean else torch.full_like(full, float("nan"))
            assert torch.equal(torch.isnan(full), ~inside & torch.isnan(outside_value)), "written entries != ranges"
            assert (full[~inside] == NEG_INF).all() if clean else True
        mask = ref != NEG_INF
        assert torch.isfinite(full[mask]).all()
        if mask.any():
            diff = calc_diff(full[mask], ref[mask])
            assert diff < tol, f"calc_diff {diff}"


def random_ranges(s, s_kv, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    ks = torch.randint(-8, s_kv + 8, (s,), generator=g)
    ke = ks + torch.randint(-16, s_kv // 2 + 16, (s,), generator=g)
    # Fixed edges: empty, inverted, full, at the end, the last row alone, out of bounds on both sides.
    fixed = [(0, s_kv), (0, 0), (5, 5), (9, 3), (s_kv - 1, s_kv), (s_kv - 1, s_kv + 50), (-20, 3), (s_kv, s_kv + 9)]
    for i, (a, b) in enumerate(fixed[:s]):
        ks[i], ke[i] = a, b
    return ks.to(torch.int32).cuda(), ke.to(torch.int32).cuda()


@pytest.mark.parametrize("h", [32, 64])
@pytest.mark.parametrize("d", [32, 64, 128])
@pytest.mark.parametrize("s,s_kv", [(1, 1), (13, 301), (37, 1000), (8, 20000)])
def test_edge_ranges(h, d, s, s_kv):
    _, _, q_fp8, kv_fp8, kv_sf, weights = make_inputs(s, s_kv, h, d, seed=s + s_kv + h + d)
    ks, ke = random_ranges(s, s_kv, seed=s * 7 + d)
    check_raw(q_fp8, kv_fp8, kv_sf, weights, ks, ke)
    check_raw(q_fp8, kv_fp8, kv_sf, weights, ks, ke, logits_dtype=torch.bfloat16)
    width = int((ke.clamp(max=s_kv) - ks.clamp(min=0)).clamp(min=1).max().item())
    check_raw(q_fp8, kv_fp8, kv_sf, weights, ks, ke, max_seqlen_k=width)
    check_raw(q_fp8, kv_fp8, kv_sf, weights, ks, ke, max_seqlen_k=max(1, width // 3))  # rows cut at the width


def test_all_ranges_empty_write_nothing():
    _, _, q_fp8, kv_fp8, kv_sf, weights = make_inputs(40, 500, 32, 64)
    ks = torch.full((40,), 7, dtype=torch.int32, device="cuda")
    for ke in (ks.clone(), ks - 3):
        buf, _ = run_raw(q_fp8, kv_fp8, kv_sf, weights, ks, ke, clean=False)
        assert torch.isnan(buf).all()
        buf, view = run_raw(q_fp8, kv_fp8, kv_sf, weights, ks, ke, clean=True)
        assert (view == NEG_INF).all() and torch.isnan(buf[40:]).all() and torch.isnan(buf[:, 500:]).all()


def test_negative_scales_and_padded_strides():
    s, s_kv, h, d = 21, 700, 64, 64
    _, _, q_fp8, kv_fp8, kv_sf, weights = make_inputs(s, s_kv, h, d, seed=3)
    kv_sf = kv_sf * torch.where(torch.arange(s_kv, device="cuda") % 3 == 0, -1.0, 1.0)  # ReLU(sf * s), any sign
    kv_padded = torch.zeros(s_kv, d + 32, dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)
    kv_padded[:, :d] = kv_fp8
    w_padded = torch.randn(s, h + 4, device="cuda")[:, :h]
    w_padded.copy_(weights)
    ks, ke = random_ranges(s, s_kv, seed=11)
    check_raw(q_fp8, kv_padded[:, :d], kv_sf, w_padded, ks, ke)


@pytest.mark.parametrize("h", [32, 64])
@pytest.mark.parametrize("d", [32, 64, 128])
def test_weighted_query_extremes(h, d):
    # At D <= 64 each query's weighted sum u = sum_h w_h q_h enters the wgmma as FP8 pieces scaled by a power of two
    # from max |u|: queries whose weights are all zero (u = 0: logits exactly 0), tiny (1e-30) and huge (1e25), a
    # single head 1e6 times the others, a query whose u cancels to small values against large w_h q_h terms, and
    # weights spanning 40 orders of magnitude.
    s, s_kv = 11, 777
    _, _, q_fp8, kv_fp8, kv_sf, weights = make_inputs(s, s_kv, h, d, seed=h + d)
    weights[0] = 0
    weights[1] *= 1e-30
    weights[2] *= 1e25
    weights[3, 5] *= 1e6
    weights[4, : h // 2] = 1.0
    weights[4, h // 2:] = -1.0
    q_fp8[4, h // 2:] = q_fp8[4, : h // 2]  # u = 0 exactly: every score's positive and negative halves cancel
    weights[5] = torch.logspace(-20, 20, h, device="cuda") * torch.where(torch.arange(h, device="cuda") % 2 == 0,
                                                                           1.0, -1.0)
    ks = torch.zeros(s, dtype=torch.int32, device="cuda")
    ke = torch.full((s,), s_kv, dtype=torch.int32, device="cuda")
    ref = reference(q_fp8, kv_fp8, kv_sf, weights, ks, ke, dtype=torch.float64)
    _, view = run_raw(q_fp8, kv_fp8, kv_sf, weights, ks, ke, clean=False)
    assert torch.equal(view[0], torch.zeros_like(view[0])), "zero weights give exactly zero"
    for i in [1, 2, 3] + list(range(5, s)):  # each query row on its own scale; row 4's reference is 0
        diff = calc_diff(view[i].double(), ref[i])
        assert diff < 5e-6, f"query {i}: calc_diff {diff}"
    # The cancelling query: |logit - ref| within the FP32 rounding of the |s| sum it is half of.
    scale = (weights[4].abs().double()[None, :, None] *
             torch.einsum("hd,nd->hn", q_fp8[4].double(), kv_fp8.double()).abs() * kv_sf.double().abs()).sum(1)
    assert ((view[4].double() - ref[4]).abs() <= 1e-5 * scale + 1e-30).all()


def test_kv_splits_of_few_queries_match():
    # 4 queries (one block) over 70000 KV rows: the plan splits the block's KV rows across the SMs.
    _, _, q_fp8, kv_fp8, kv_sf, weights = make_inputs(4, 70000, 64, 32, seed=5)
    ks = torch.tensor([0, 100, 33333, 69990], dtype=torch.int32, device="cuda")
    ke = torch.tensor([70000, 69000, 33334, 70000], dtype=torch.int32, device="cuda")
    check_raw(q_fp8, kv_fp8, kv_sf, weights, ks, ke)
    assert " x 1 KV splits" not in _C.mqa_logits_config(4, 70000, 64, 32, False, torch.cuda.current_device())


def test_graph_capture_and_two_streams():
    s, s_kv, h, d = 512, 8192, 32, 128
    _, _, q_fp8, kv_fp8, kv_sf, weights = make_inputs(s, s_kv, h, d, seed=9)
    ks, ke = context_parallel_ranges(s, s_kv)
    call = lambda: ml.fp8_fp4_mqa_logits((q_fp8, None), (kv_fp8, kv_sf), weights, ks, ke)  # noqa: E731
    eager = call()
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        call()  # warm-up outside the capture (compiles and plans)
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        captured = call()
    graph.replay()
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(captured, eager)
    # Two streams at once, each with its own work counter: the same logits as one after the other.
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    outs = []
    for st in streams:
        st.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(st):
            outs.append(call())
    torch.cuda.synchronize()
    assert torch.equal(outs[0], eager) and torch.equal(outs[1], eager)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("with_ks", [True, False])
def test_clean_kernel_alone_on_unaligned_views(dtype, with_ks):
    rows, cols, offset = 77, 1531, 3  # a view starting 3 elements into each row: unaligned vector edges
    buf = torch.full((rows + 1, cols + 40), float("nan"), dtype=dtype, device="cuda")
    view = buf[:rows, offset:offset + cols]
    ks, ke = random_ranges(rows, cols, seed=17)
    _C.clean_logits(view, ks if with_ks else None, ke)
    starts = ks if with_ks else torch.zeros_like(ks)
    inside = valid_mask(starts, ke, cols)
    assert (view[~inside] == NEG_INF).all()
    assert torch.isnan(view[inside]).all()
    assert torch.isnan(buf[rows:]).all() and torch.isnan(buf[:, :offset]).all()
    assert torch.isnan(buf[:, offset + cols:]).all()


def test_bad_inputs_raise_runtime_errors():
    s, s_kv, h, d = 8, 256, 32, 64
    _, _, q_fp8, kv_fp8, kv_sf, weights = make_inputs(s, s_kv, h, d)
    ks, ke = causal_ranges(s, s_kv)
    good = dict(q=(q_fp8, None), kv=(kv_fp8, kv_sf), weights=weights, cu_seq_len_k_start=ks, cu_seq_len_k_end=ke)

    def raises(exc, match, **change):
        args = dict(good, **change)
        extra = {k: args.pop(k) for k in ("clean_logits", "max_seqlen_k", "logits_dtype") if k in args}
        with pytest.raises(exc, match=match) as info:
            ml.fp8_fp4_mqa_logits(**args, **extra)
        assert isinstance(info.value, RuntimeError)

    raises(NotImplementedError, "SM100-only", q=(q_fp8, torch.ones(s, h, device="cuda")))
    raises(NotImplementedError, "16 heads are SM100-only", q=(q_fp8[:, :16].contiguous(), None),
           weights=weights[:, :16].contiguous())
    raises(NotImplementedError, "BF16 weights", weights=weights.bfloat16())
    raises(tessera.InvalidArgument, "clean_logits", max_seqlen_k=4)
    raises(tessera.InvalidArgument, "argument 'weights': expected stride", weights=torch.randn(s, h + 1,
                                                                                             device="cuda")[:, :h])
    raises(tessera.InvalidArgument, "argument 'q': expected \\[S, H, D\\]",
           q=(q_fp8.transpose(0, 1).contiguous().transpose(0, 1), None))
    raises(tessera.InvalidArgument, "argument 'kv_sf'", kv=(kv_fp8, kv_sf[:-1]))
    raises(tessera.TypeMismatch, "argument 'cu_seq_len_k_end': expected dtype int32", cu_seq_len_k_end=ke.long())
    raises(tessera.InvalidArgument, "argument 'kv_sf': expected the device|argument 'kv_sf': expected a CUDA",
           kv=(kv_fp8, kv_sf.cpu()))
