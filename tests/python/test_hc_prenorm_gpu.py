"""TF32 HyperConnection pre-norm GEMM on the GPU: every shape of DeepGEMM's test (tests/test_hyperconnection.py) with
num_splits None and 16, odd M, N = 8/16/24/32, empty split chunks, strided operands, determinism, streams, and bad
inputs raising with the outputs untouched. References: PyTorch's TF32 matmul for d (what DeepGEMM compares with) and
float64 for sqr_sum; outputs are poisoned (NaN) first.

    python tests/python/test_hc_prenorm_gpu.py    # DeepGEMM-style timing lines, and the share of copy bandwidth
"""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

import tessera  # noqa: E402
from tessera.hc_prenorm import tf32_hc_prenorm_gemm as hc  # noqa: E402
from tessera.testing import calc_diff  # noqa: E402

DEEPGEMM_MS = (13, 137, 4096, 8192)
DEEPGEMM_NK = ((24, 28672), (24, 7680), (24, 7168))


@pytest.fixture(autouse=True)
def tf32_matmul():
    """DeepGEMM's test compares with PyTorch's TF32 matmul; restore the caller's setting afterwards."""
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    yield
    torch.backends.cuda.matmul.allow_tf32 = saved


def operands(m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.float32)
    return a, b


def outputs(m, n, num_splits):
    lead = () if num_splits is None else (num_splits,)
    d = torch.full(lead + (m, n), float("nan"), device="cuda")
    s = torch.full(lead + (m,), float("nan"), device="cuda")
    return d, s


def chunks(k, num_splits):
    """DeepGEMM's partition of K into num_splits chunks of 64-wide blocks (earlier chunks take the extra block)."""
    blocks = k // 64
    base, rem = divmod(blocks, num_splits)
    start, out = 0, []
    for i in range(num_splits):
        count = base + (1 if i < rem else 0)
        out.append((start * 64, (start + count) * 64))
        start += count
    return out


def tf32_product(x, b):
    """x @ b.T as PyTorch's TF32 GEMM computes it. For fewer than 16 rows cuBLAS may take a GEMV path that ignores
    TF32 (an exact FP32 product, about 3e-8 in calc_diff from the TF32 one at M = 1), so small x is padded with zero
    rows to keep the reference the TF32 GEMM."""
    rows = x.shape[0]
    if rows >= 16:
        return x @ b.T
    padded = torch.zeros(16, x.shape[1], device=x.device, dtype=x.dtype)
    padded[:rows] = x
    return (padded @ b.T)[:rows]


def check(m, n, k, num_splits=None, bound=1e-8):
    a, b = operands(m, n, k)
    d, s = outputs(m, n, num_splits)
    hc(a, b, d, s, num_splits=num_splits)
    assert not torch.isnan(d).any() and not torch.isnan(s).any(), "unwritten outputs"
    final_d = d if num_splits is None else d.sum(0)
    final_s = s if num_splits is None else s.sum(0)
    ref_d = tf32_product(a.float(), b)
    ref_s = a.double().square().sum(-1)
    diff = max(calc_diff(final_d, ref_d), calc_diff(final_s, ref_s))
    assert diff < bound, f"calc_diff {diff} for m={m} n={n} k={k} num_splits={num_splits}"
    if num_splits is not None:  # each slice holds its own chunk's partial sums
        for i, (k0, k1) in enumerate(chunks(k, num_splits)):
            if k0 == k1:
                assert torch.equal(d[i], torch.zeros_like(d[i])) and torch.equal(s[i], torch.zeros_like(s[i]))
                continue
            part_d = tf32_product(a[:, k0:k1].float(), b[:, k0:k1])
            part_s = a[:, k0:k1].double().square().sum(-1)
            diff = max(calc_diff(d[i], part_d), calc_diff(s[i], part_s))
            assert diff < bound, f"slice {i} (K {k0}..{k1}): calc_diff {diff}"
    return a, b, d, s


@pytest.mark.parametrize("m", DEEPGEMM_MS)
@pytest.mark.parametrize("n,k", DEEPGEMM_NK)
@pytest.mark.parametrize("num_splits", [None, 16])
def test_deepgemm_shapes(m, n, k, num_splits):
    check(m, n, k, num_splits)


@pytest.mark.parametrize("m", [1, 8, 63, 64, 65, 129, 1000])
@pytest.mark.parametrize("n", [8, 16, 24, 32])
def test_odd_m_and_every_n(m, n):
    check(m, n, 7168)
    check(m, n, 1024, num_splits=3)


@pytest.mark.parametrize("m", [13, 137, 2048, 4096, 6000])
@pytest.mark.parametrize("k", [64, 128, 640, 28672])
def test_internal_split_sizes(m, k):
    # None: from a single k-block (no split possible) to the planner's widest splits of a long K.
    check(m, 24, k)


def plan_of(m, n, k, num_splits=None):
    return tessera._C.tf32_hc_prenorm_gemm_config(m, n, k, num_splits or 0, torch.cuda.current_device())


@pytest.mark.parametrize("m,n,k", [(13, 24, 28672), (137, 24, 7168), (64, 8, 7680), (130, 32, 28672),
                                   (13, 16, 7168), (4096, 24, 7168)])
def test_cluster_sums(m, n, k):
    # The splits of an m-block as one cluster, each CTA pushing its pieces into the owning CTA's shared memory (16
    # CTAs at small M, pairs at M = 4096); rows past M in the last m-block are not written.
    assert "summed in a cluster" in plan_of(m, n, k), plan_of(m, n, k)
    check(m, n, k)


def test_workspace_sum_of_a_very_long_k():
    # K = 131072 over one m-block: more splits than a cluster holds pay off, summed through the workspace.
    assert "summed in the kernel" in plan_of(13, 24, 131072), plan_of(13, 24, 131072)
    check(13, 24, 131072)


def test_empty_chunks_are_zeros():
    check(65, 24, 128, num_splits=5)   # 2 k-blocks over 5 slices: slices 2..4 are zeros
    check(13, 8, 64, num_splits=16)


def test_single_split_is_the_plain_product():
    check(300, 32, 7680, num_splits=1)


def test_strided_operands_and_output():
    m, n, k = 200, 24, 2048
    a_big = torch.randn(m, k + 64, device="cuda", dtype=torch.bfloat16)
    b_big = torch.randn(n, k + 32, device="cuda", dtype=torch.float32)
    a, b = a_big[:, :k], b_big[:, :k]                     # padded rows (TMA row strides)
    d_big = torch.full((m, n + 8), float("nan"), device="cuda")
    d = d_big[:, :n]                                       # padded D rows
    s = torch.full((m,), float("nan"), device="cuda")
    hc(a, b, d, s)
    assert calc_diff(d, a.float() @ b.T) < 1e-8
    assert calc_diff(s, a.double().square().sum(-1)) < 1e-8
    assert torch.isnan(d_big[:, n:]).all(), "wrote past the row"


@pytest.mark.parametrize("m,k", [(13, 28672), (137, 7168), (4096, 7680)])
def test_internal_splits_are_deterministic(m, k):
    a, b = operands(m, 24, k)
    runs = []
    for _ in range(5):
        d, s = outputs(m, 24, None)
        hc(a, b, d, s)
        runs.append((d, s))
    for d, s in runs[1:]:
        assert torch.equal(d, runs[0][0]) and torch.equal(s, runs[0][1]), "results depend on the CTAs' arrival order"


def test_workspace_counters_reset_between_shapes_and_streams():
    # The summed splits share a workspace per stream; its counters must be back at zero after every launch.
    shapes = [(13, 28672), (137, 7680), (13, 7168), (2048, 7168), (13, 28672)]
    side = torch.cuda.Stream()
    for stream in (torch.cuda.current_stream(), side):
        with torch.cuda.stream(stream):
            for m, k in shapes:
                check(m, 24, k)
    torch.cuda.synchronize()


def test_cuda_graph_capture_and_replay():
    # The capture stream gets a workspace slot of its own (the slots exist by now), so the summed splits are captured.
    m, n, k = 137, 24, 28672
    a, b = operands(m, n, k)
    d, s = outputs(m, n, None)
    hc(a, b, d, s)  # warm-up outside the capture (compiles the kernel, makes the workspace)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hc(a, b, d, s)
    for _ in range(3):
        d.fill_(float("nan"))
        s.fill_(float("nan"))
        a.copy_(torch.randn_like(a))
        graph.replay()
        torch.cuda.synchronize()
        assert calc_diff(d, a.float() @ b.T) < 1e-8
        assert calc_diff(s, a.double().square().sum(-1)) < 1e-8


def test_more_streams_than_workspace_slots_still_compute_the_product():
    # Past the per-device workspace slots a stream's call runs unsplit: slower, the same result.
    streams = [torch.cuda.Stream() for _ in range(12)]
    for stream in streams:
        with torch.cuda.stream(stream):
            check(13, 24, 7168)
            check(137, 32, 7680)
    torch.cuda.synchronize()


def test_tf32_treatment_of_b_matches_pytorch():
    # A full-FP32 product differs from TF32 by ~1e-7 in calc_diff: the kernel must sit on PyTorch's TF32 result, far
    # closer than that. The message gives the distances to B truncated and rounded to TF32 (float64 products),
    # which shows how the tensor cores (and cuBLAS) treat the low mantissa bits.
    m, n, k = 512, 24, 7168
    a, b = operands(m, n, k)
    d, s = outputs(m, n, None)
    hc(a, b, d, s)
    ref_tf32 = a.float() @ b.T
    exact = a.double() @ b.double().T
    bits = b.view(torch.int32)
    truncated = (bits & ~0x1FFF).view(torch.float32)
    rounded = ((bits + 0x1000) & ~0x1FFF).view(torch.float32)  # ties away from zero, as cvt.rna.tf32.f32
    info = (f"vs torch TF32 {calc_diff(d, ref_tf32):.3e}, exact {calc_diff(d, exact):.3e}, B truncated "
            f"{calc_diff(d, a.double() @ truncated.double().T):.3e}, B rounded "
            f"{calc_diff(d, a.double() @ rounded.double().T):.3e}; torch vs exact {calc_diff(ref_tf32, exact):.3e}")
    assert calc_diff(d, ref_tf32) < 1e-8, info
    print(info)


def test_m_zero_returns():
    a = torch.empty(0, 7168, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(24, 7168, device="cuda")
    hc(a, b, torch.empty(0, 24, device="cuda"), torch.empty(0, device="cuda"))
    hc(a, b, torch.empty(16, 0, 24, device="cuda"), torch.empty(16, 0, device="cuda"), num_splits=16)


@pytest.mark.parametrize("case", ["n20", "n40", "k96", "b_bf16", "d_shape", "s_strided", "a_mn_major", "splits0"])
def test_bad_inputs_raise_and_leave_outputs_untouched(case):
    m, n, k = 64, 24, 128
    a, b = operands(m, n, k)
    d, s = outputs(m, n, None)
    num_splits = None
    expected = tessera.InvalidArgument
    if case == "n20":
        b, d = b[:20].contiguous(), d[:, :20].contiguous()
    elif case == "n40":
        b = torch.randn(40, k, device="cuda")
        d = torch.full((m, 40), float("nan"), device="cuda")
    elif case == "k96":
        a, b = a[:, :96].contiguous(), b[:, :96].contiguous()
    elif case == "b_bf16":
        b, expected = b.to(torch.bfloat16), tessera.TypeMismatch
    elif case == "d_shape":
        d = torch.full((m, n + 8), float("nan"), device="cuda")
    elif case == "s_strided":
        s = torch.full((m, 2), float("nan"), device="cuda")[:, 0]
    elif case == "a_mn_major":
        a = a.T.contiguous().T
    elif case == "splits0":
        num_splits = 0
    with pytest.raises(expected):
        hc(a, b, d, s, num_splits=num_splits)
    torch.cuda.synchronize()
    assert torch.isnan(d).all() and torch.isnan(s).all(), "a rejected call wrote its outputs"


def _report():
    """DeepGEMM's timing lines (kernel time by profiler, L2 flushed) and the share of the device's copy bandwidth."""
    from tessera.testing import bench, bench_kineto, count_bytes
    torch.backends.cuda.matmul.allow_tf32 = True
    big = torch.empty(int(2e9) // 4, device="cuda")
    copy_gbs = 2 * big.numel() * 4 / bench(lambda: big.clone(), num_tests=10) / 1e9
    del big
    print(f"copy bandwidth (clone of 2 GB): {copy_gbs:.0f} GB/s")
    for m in DEEPGEMM_MS:
        for n, k in DEEPGEMM_NK:
            for num_splits in (None, 16):
                a, b = operands(m, n, k)
                d, s = outputs(m, n, num_splits)
                t = bench_kineto(lambda: hc(a, b, d, s, num_splits=num_splits), "tf32_hc_prenorm_gemm",
                                 suppress_kineto_output=True)
                gbs = count_bytes(a, b, d, s) / 1e9 / t
                config = tessera._C.tf32_hc_prenorm_gemm_config(m, n, k, num_splits or 0, a.device.index)
                print(f" > Perf (m={m:5}, n={n:5}, k={k:5}, num_splits={(num_splits or 0):2}): {t * 1e6:4.0f} us | "
                      f"{2 * m * n * k / t / 1e12:4.0f} TFLOPS | {gbs:4.0f} GB/s ({100 * gbs / copy_gbs:3.0f}% of "
                      f"copy) | {config}")


if __name__ == "__main__":
    _report()
