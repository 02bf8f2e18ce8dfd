"""BF16 GEMM on the GPU: DeepGEMM's dense test shapes in all four layouts, BF16 and FP32 output, with and without
C, plus odd shapes, against a float64 reference; outputs poisoned (NaN) first, inputs fresh; bad inputs raise with
nothing written. The kernel is reached through tessera.bf16_gemm's functions (the public names route there once
these pass on the H200)."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

import tessera  # noqa: E402
from tessera import bf16_gemm as g  # noqa: E402
from tessera.testing import calc_diff  # noqa: E402

NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
LAYOUTS = {"nt": g.bf16_gemm_nt, "nn": g.bf16_gemm_nn, "tn": g.bf16_gemm_tn, "tt": g.bf16_gemm_tt}


def every_layout(shapes):
    # Each shape in each layout it can take: an MN-major operand needs its M (N) % 8 == 0 (16-byte row strides for
    # TMA), a K-major one K % 8 == 0.
    return [(layout, m, n, k) for m, n, k in shapes for layout in LAYOUTS
            if not (layout[0] == "t" and m % 8) and not (layout[1] == "n" and n % 8)]


def operands(m, n, k, layout):
    """(a, b) as the layout's function takes them, and the [M, K], [N, K] values they hold."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a_arg = a.T.contiguous() if layout[0] == "t" else a   # tn, tt: a given as [K, M]
    b_arg = b.T.contiguous() if layout[1] == "n" else b   # nn, tn: b given as [K, N]
    return a_arg, b_arg, a, b


def check(m, n, k, layout="nt", out=torch.bfloat16, with_c=False, c_is_d=False, bound=1e-5):
    a_arg, b_arg, a, b = operands(m, n, k, layout)
    ref = a.double() @ b.double().T
    c = None
    if with_c:
        c = torch.randn(m, n, device="cuda", dtype=out) * 32
        ref = ref + c.double()
    d = torch.full((m, n), float("nan"), device="cuda", dtype=out)
    if c_is_d:
        d.copy_(c)
        c = d
    LAYOUTS[layout](a_arg, b_arg, d, c=c)
    assert not torch.isnan(d).any(), "unwritten or NaN outputs"
    diff = calc_diff(d, ref)
    assert diff < bound, f"calc_diff {diff} for {m}x{n}x{k} {layout} out={out} c={with_c}"


@pytest.mark.parametrize("m", [1, 128, 4096])
@pytest.mark.parametrize("n,k", NK)
def test_deepgemm_forward_shapes(m, n, k):
    check(m, n, k)
    check(m, n, k, with_c=True, c_is_d=True)  # BF16 accumulation into d


@pytest.mark.parametrize("m", [1, 128])
@pytest.mark.parametrize("n,k", [(256, 7168), (129280, 7168)])
def test_deepgemm_fp32_forward_shapes(m, n, k):
    # DeepGEMM's FP32-output rows at decode sizes (64-row tiles, split or not; M = 4096 is in its own test file).
    check(m, n, k, out=torch.float32)


@pytest.mark.parametrize("n,k", NK + [(256, 7168)])
def test_deepgemm_backward_shapes(n, k):
    check(4096, k, n, layout="nn")                                             # dgrad: B MN-major
    check(n, 4096, k, layout="tn", out=torch.float32, with_c=True, c_is_d=True)  # wgrad into FP32
    check(n, 4096, k, layout="tn")                                             # wgrad into BF16


def test_fp32_output_without_c():
    check(4096, 256, 7168, out=torch.float32)
    check(128, 4096, 7168, layout="tt", out=torch.float32)


@pytest.mark.parametrize("layout,m,n,k", every_layout([(1, 64, 64), (7, 72, 136), (65, 200, 1000), (129, 392, 2056),
                                                     (300, 8, 8), (1000, 1000, 2000), (4097, 136, 128)]))
def test_odd_shapes_every_layout(layout, m, n, k):
    check(m, n, k, layout=layout)
    check(m, n, k, layout=layout, out=torch.float32, with_c=True)


@pytest.mark.parametrize("layout,m,n,k", every_layout([(1, 576, 7168), (5, 1000, 4000), (100, 520, 3000),
                                                     (128, 576, 7128)]))
def test_split_k_decode_every_layout(layout, m, n, k):
    # The planner splits these over clusters (its CPU test says why); ragged M, N and K edges, then bitwise repeats
    # (the cluster sums its partials in rank order).
    text = tessera._C.bf16_gemm_config(m, n, k, layout[0] == "t", layout[1] == "n", False, False,
                                       torch.cuda.current_device())
    assert "split-K" in text, text
    check(m, n, k, layout=layout)
    check(m, n, k, layout=layout, with_c=True, c_is_d=True)                   # BF16 C: D += the cluster's sum
    check(m, n, k, layout=layout, out=torch.float32)                          # FP32 pairs
    check(m, n, k, layout=layout, out=torch.float32, with_c=True)             # FP32 C copied into D first
    a_arg, b_arg, _, _ = operands(m, n, k, layout)
    first = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    LAYOUTS[layout](a_arg, b_arg, first)
    for _ in range(5):
        again = torch.full_like(first, float("nan"))
        LAYOUTS[layout](a_arg, b_arg, again)
        assert torch.equal(again, first), "split-K results differ between calls"


@pytest.mark.parametrize("layout,m,n,k", every_layout([(1, 4096, 7168), (1, 2112, 7168), (100, 1032, 3000),
                                                     (128, 4096, 7128)]))
def test_one_wave_decode_plans_run_whole_k(layout, m, n, k):
    # Tiles that fill one wave run over the whole K, no split-K (its CPU test says why; the plan is asserted for nt,
    # every layout runs): the narrow tiles, deep rings and 8-row A stages those plans take; ragged edges; with C.
    if layout == "nt":
        text = tessera._C.bf16_gemm_config(m, n, k, False, False, False, False, torch.cuda.current_device())
        assert "split-K" not in text, text
    check(m, n, k, layout=layout)
    check(m, n, k, layout=layout, out=torch.float32, with_c=True)


def test_c_distinct_from_d_is_added_and_left_alone():
    a, b = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16), torch.randn(384, 512, device="cuda",
                                                                                    dtype=torch.bfloat16)
    c = torch.randn(256, 384, device="cuda", dtype=torch.float32)
    c_before = c.clone()
    d = torch.full_like(c, float("nan"))
    g.bf16_gemm_nt(a, b, d, c=c)
    assert torch.equal(c, c_before)
    assert calc_diff(d, a.double() @ b.double().T + c.double()) < 1e-5


@pytest.mark.parametrize("out", [torch.bfloat16, torch.float32])
def test_cpp_entry_matches_python_path(out):
    # tessera.bf16_gemm_nt launches the common call (c absent or d itself) from C++; the Python path it hands every
    # other call to must give the same bits.
    from tessera.bf16_gemm import _bf16_gemm_nt_py
    a = torch.randn(129, 1000, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(200, 1000, device="cuda", dtype=torch.bfloat16)
    for accumulate in (False, True):
        init = torch.randn(129, 200, device="cuda", dtype=out) if accumulate else torch.full(
            (129, 200), float("nan"), device="cuda", dtype=out)
        d_entry, d_py = init.clone(), init.clone()
        g.bf16_gemm_nt(a, b, d_entry, d_entry if accumulate else None, "nk")
        _bf16_gemm_nt_py(a, b, d_py, c=d_py if accumulate else None)
        assert torch.equal(d_entry, d_py)
        assert calc_diff(d_entry, a.double() @ b.double().T + (init.double() if accumulate else 0)) < 1e-5


def test_empty_k_gives_c_or_zeros():
    a, b = torch.empty(64, 0, device="cuda", dtype=torch.bfloat16), torch.empty(32, 0, device="cuda",
                                                                                 dtype=torch.bfloat16)
    d = torch.full((64, 32), float("nan"), device="cuda", dtype=torch.bfloat16)
    g.bf16_gemm_nt(a, b, d)
    assert torch.equal(d, torch.zeros_like(d))
    c = torch.randn_like(d)
    g.bf16_gemm_nt(a, b, d, c=c)
    assert torch.equal(d, c)


def test_bad_inputs_raise_before_launch():
    a = torch.randn(128, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(64, 256, device="cuda", dtype=torch.bfloat16)
    d = torch.full((128, 64), 7.0, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="argument 'a': expected dtype bfloat16, got float32"):
        g.bf16_gemm_nt(a.float(), b, d)
    with pytest.raises(TypeError, match="argument 'd': expected dtype bfloat16 or float32, got float16"):
        g.bf16_gemm_nt(a, b, d.half())
    with pytest.raises(ValueError, match="argument 'b': expected K = 256"):
        g.bf16_gemm_nt(a, b[:, :128], d)
    with pytest.raises(ValueError, match=r"argument 'd': expected shape \(128, 64\)"):
        g.bf16_gemm_nt(a, b, d[:, :32])
    with pytest.raises(TypeError, match="argument 'c': expected dtype bfloat16"):
        g.bf16_gemm_nt(a, b, d, c=d.float())
    with pytest.raises(ValueError, match="expected K-major .* or MN-major"):
        g.bf16_gemm_nt(a[:, ::2], b[:, ::2], d)
    with pytest.raises(ValueError, match="row stride of a multiple of 16 bytes"):
        g.bf16_gemm_nt(a[:, :100].contiguous(), b[:, :100].contiguous(), d)
    with pytest.raises(RuntimeError):  # every argument error is also a RuntimeError, as DeepGEMM's are
        g.bf16_gemm_nt(a, b, d[:, :32])
    assert bool((d == 7.0).all()), "a rejected call wrote d"


def test_plan_reports_every_layout():
    dev = torch.cuda.current_device()
    for mn_a, mn_b in ((False, False), (False, True), (True, False), (True, True)):
        text = tessera._C.bf16_gemm_config(4096, 4096, 7168, mn_a, mn_b, False, False, dev)
        assert text.startswith("block ") and "stages" in text, text


# ---- m-grouped ------------------------------------------------------------------------------------------------------

def grouped_b(groups, n, k, mn_major):
    """(b as the nt function takes it, b as the nn function takes it or None, values [G, N, K])."""
    b = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16)
    if mn_major:
        b_kn = b.mT.contiguous()  # [G, K, N], what the nn variant takes
        return b_kn.mT, b_kn, b
    return b, None, b


@pytest.mark.parametrize("mn_b", [False, True])
@pytest.mark.parametrize("rows,n,k", [([100, 0, 256, 37], 512, 1024), ([128, 128], 384, 128),
                                      ([1, 300, 129], 1024, 2048)])
def test_contiguous_per_row_ids(rows, n, k, mn_b):
    groups, align = len(rows), 128
    seg = [(r + align - 1) // align * align for r in rows]
    m = sum(seg)
    layout = torch.full((m,), -1, dtype=torch.int32)
    start = 0
    for grp, (r, s) in enumerate(zip(rows, seg)):
        layout[start:start + r] = grp
        start += s
    layout = layout.cuda()
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b_nt, b_nn, b = grouped_b(groups, n, k, mn_b)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    if mn_b:
        g.m_grouped_bf16_gemm_nn_contiguous(a, b_nn, d, layout)
    else:
        g.m_grouped_bf16_gemm_nt_contiguous(a, b_nt, d, layout)
    ref = torch.zeros(m, n, device="cuda", dtype=torch.float64)
    valid = layout >= 0
    for grp in range(groups):
        rows_g = layout == grp
        ref[rows_g] = a[rows_g].double() @ b[grp].double().T
    assert not torch.isnan(d).any(), "unwritten rows"
    assert torch.equal(d[~valid], torch.zeros_like(d[~valid])), "padding rows must be exact zeros"
    if valid.any():
        assert calc_diff(d[valid], ref[valid]) < 1e-5


@pytest.mark.parametrize("mn_b", [False, True])
def test_contiguous_psum_layout(mn_b):
    rows, n, k, align = [200, 0, 77, 512], 768, 1024, 128
    ends, start = [], 0
    for r in rows:
        ends.append(start + r)
        start = (start + r + align - 1) // align * align
    m = start
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b_nt, b_nn, b = grouped_b(len(rows), n, k, mn_b)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    layout = torch.tensor(ends, device="cuda", dtype=torch.int32)
    fn = g.m_grouped_bf16_gemm_nn_contiguous if mn_b else g.m_grouped_bf16_gemm_nt_contiguous
    fn(a, b_nn if mn_b else b_nt, d, layout, use_psum_layout=True, expected_m_for_psum_layout=200)
    begin = 0
    for grp, end in enumerate(ends):
        if end > begin:
            assert calc_diff(d[begin:end], a[begin:end].double() @ b[grp].double().T) < 1e-5
        begin = (end + align - 1) // align * align


def test_psum_end_rows_past_m_stop_at_m():
    # The layout is device data the host cannot check without a sync: an end row past A's rows must not make the
    # kernel store past D (here D is a view of a larger poisoned buffer whose tail must keep its poison).
    m, n, k = 300, 256, 512
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b_nt, _, b = grouped_b(2, n, k, False)
    buffer = torch.full((384, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    d = buffer[:m]
    layout = torch.tensor([100, 328], device="cuda", dtype=torch.int32)
    g.m_grouped_bf16_gemm_nt_contiguous(a, b_nt, d, layout, use_psum_layout=True, expected_m_for_psum_layout=150)
    assert calc_diff(d[:100], a[:100].double() @ b[0].double().T) < 1e-5
    assert calc_diff(d[128:], a[128:].double() @ b[1].double().T) < 1e-5
    assert torch.isnan(buffer[m:]).all(), "rows past M were written"


@pytest.mark.parametrize("groups,m_max,n,k,expected", [(4, 256, 512, 1024, 100), (6, 4096, 1024, 2048, 20),
                                                       (3, 200, 384, 128, 150)])
def test_masked_rows_past_masked_m_untouched(groups, m_max, n, k, expected):
    a = torch.randn(groups, m_max, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16)
    counts = [min(m_max, max(0, int(expected * f))) for f in (0.0, 1.3, 0.7, 1.0, 1.1, 0.9)[:groups]]
    masked_m = torch.tensor(counts, device="cuda", dtype=torch.int32)
    d = torch.full((groups, m_max, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    g.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected)
    check_masked(a, b, d, counts)


def check_masked(a, b, d, counts):
    for grp, c in enumerate(counts):
        assert torch.isnan(d[grp, c:]).all(), f"group {grp}: rows past masked_m written"
        if c:
            assert calc_diff(d[grp, :c], a[grp, :c].double() @ b[grp].double().T) < 1e-5


def test_masked_cuda_graph_follows_masked_m():
    # masked_m is read on the device only: a captured call must follow the values written into it between replays.
    groups, m_max, n, k = 8, 256, 1024, 1024
    a = torch.randn(groups, m_max, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16)
    d = torch.full((groups, m_max, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    first = [100, 0, 256, 17, 200, 128, 1, 64]
    masked_m = torch.tensor(first, dtype=torch.int32, device="cuda")
    g.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, 96)  # outside the capture first: compiles and loads the kernel
    torch.cuda.synchronize()
    check_masked(a, b, d, first)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        g.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, 96)
    for values in ([256, 3, 0, 129, 64, 255, 128, 0], [0] * groups, [m_max] * groups, first):
        masked_m.copy_(torch.tensor(values, dtype=torch.int32))
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_masked(a, b, d, values)


@pytest.mark.parametrize("m,n,ks", [(4096, 7168, [1024, 0, 2048, 384]), (256, 512, [128, 0, 256]),
                                    (200, 264, [256, 128, 640]), (640, 1152, [0, 0])])
@pytest.mark.parametrize("out", [torch.float32, torch.bfloat16])
def test_k_grouped_tn_accumulates_into_c(m, n, ks, out):
    total = sum(ks)
    a = torch.randn(total, m, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(total, n, device="cuda", dtype=torch.bfloat16)
    c = torch.randn(len(ks), m, n, device="cuda", dtype=out)
    ref = c.double().clone()
    start = 0
    for grp, k in enumerate(ks):
        ref[grp] += a[start:start + k].double().T @ b[start:start + k].double()
        start += k
    d = c.clone()  # c is d: accumulate in place
    g.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, torch.tensor(ks, device="cuda", dtype=torch.int32), c=d)
    for grp, k in enumerate(ks):
        if k == 0:
            assert torch.equal(d[grp], c[grp]), "an empty group must leave C"
        else:
            # BF16 D: the tile and C are added in BF16 (two roundings, ~2^-9 relative each)
            assert calc_diff(d[grp], ref[grp]) < (1e-5 if out == torch.float32 else 1e-4)
