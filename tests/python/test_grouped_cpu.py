"""Grouped FP8 GEMMs without a GPU: the names and aliases exist, and the argument errors Python raises before
anything reaches the kernels (recipes, ks_cpu, psum, shapes, dtypes) have the right types and leave d untouched.
The trivial cases that need no kernel (M_total == 0, sum(ks) == 0) run on CPU tensors."""
import functools
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import tessera  # noqa: E402

E4M3 = torch.float8_e4m3fn
NAMES = ["m_grouped_fp8_gemm_nt_contiguous", "m_grouped_fp8_gemm_nn_contiguous", "m_grouped_fp8_gemm_nt_masked",
         "k_grouped_fp8_gemm_nt_contiguous", "k_grouped_fp8_gemm_tn_contiguous",
         "m_grouped_fp8_fp4_gemm_nt_contiguous", "m_grouped_fp8_fp4_gemm_nn_contiguous",
         "m_grouped_fp8_fp4_gemm_nt_masked", "fp8_m_grouped_gemm_nt_masked"]


def without_cuda_of_others(test):
    """Runs `test` in a new interpreter when this one has already initialized CUDA (an earlier test on the same pytest
    worker did, on a GPU machine), so that its closing "CUDA was not initialized" speaks of this test alone."""
    @functools.wraps(test)
    def run():
        if not torch.cuda.is_initialized():
            return test()
        node = f"{os.path.abspath(__file__)}::{test.__name__}"
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", node],
                              capture_output=True, text=True)
        # exactly this test, passed: a skip or an empty collection in the child is not a pass here
        assert proc.returncode == 0 and "1 passed" in proc.stdout and "skipped" not in proc.stdout, (
            proc.stdout[-3000:] + proc.stderr[-2000:])
    return run


def test_names_exist_and_are_not_pending():
    from tessera import _pending
    for name in NAMES:
        assert callable(getattr(tessera, name)), name
        assert name not in _pending.NOT_IMPLEMENTED, name
        assert getattr(tessera, name).__module__ == "tessera.fp8_grouped", name


def test_aliases_are_the_same_objects():
    assert tessera.m_grouped_fp8_fp4_gemm_nt_contiguous is tessera.m_grouped_fp8_gemm_nt_contiguous
    assert tessera.m_grouped_fp8_fp4_gemm_nn_contiguous is tessera.m_grouped_fp8_gemm_nn_contiguous
    assert tessera.m_grouped_fp8_fp4_gemm_nt_masked is tessera.m_grouped_fp8_gemm_nt_masked
    assert tessera.fp8_m_grouped_gemm_nt_masked is tessera.m_grouped_fp8_gemm_nt_masked


def test_signatures_match_deepgemm():
    import inspect
    params = lambda f: list(inspect.signature(f).parameters)  # noqa: E731
    assert params(tessera.m_grouped_fp8_gemm_nt_contiguous) == [
        "a", "b", "d", "grouped_layout", "recipe", "recipe_a", "recipe_b", "compiled_dims", "disable_ue8m0_cast",
        "use_psum_layout", "ensure_zero_padding", "expected_m_for_psum_layout"]
    assert params(tessera.m_grouped_fp8_gemm_nn_contiguous) == params(tessera.m_grouped_fp8_gemm_nt_contiguous)[:-1]
    assert params(tessera.m_grouped_fp8_gemm_nt_masked) == [
        "a", "b", "d", "masked_m", "expected_m", "recipe", "recipe_a", "recipe_b", "compiled_dims",
        "disable_ue8m0_cast"]
    k_params = ["a", "b", "d", "ks_cpu", "grouped_layout", "c", "recipe", "compiled_dims", "use_psum_layout"]
    assert params(tessera.k_grouped_fp8_gemm_nt_contiguous) == k_params
    assert params(tessera.k_grouped_fp8_gemm_tn_contiguous) == k_params
    assert inspect.signature(tessera.k_grouped_fp8_gemm_nt_contiguous).parameters["recipe"].default == (1, 1, 128)


# ---- M-grouped contiguous ---------------------------------------------------------------------------------------

G, M, N, K = 2, 256, 256, 384


def contiguous_args(m=M, g=G, n=N, k=K, psum=False):
    a = (torch.empty(m, k, dtype=E4M3), torch.ones(m, (k + 127) // 128))
    b = (torch.empty(g, n, k, dtype=E4M3), torch.ones(g, (n + 127) // 128, (k + 127) // 128))
    d = torch.full((m, n), 7.0, dtype=torch.bfloat16)
    layout = torch.zeros(g if psum else m, dtype=torch.int32)
    return a, b, d, layout


@pytest.fixture
def untouched():
    """Collects outputs; after the test each must still hold 7 everywhere (a rejected call writes nothing)."""
    outputs = []
    yield outputs.append
    for d in outputs:
        assert bool((d == 7.0).all()), "a rejected call modified d"


BAD_RECIPES = [dict(recipe=(1, 1, 128)), dict(recipe=(128, 128, 128)), dict(recipe=(1, 128, 32)),
               dict(recipe_a=(1, 128), recipe_b=(1, 128)), dict(recipe_a=(1, 32), recipe_b=(32, 32))]


@pytest.mark.parametrize("kwargs", BAD_RECIPES, ids=lambda kw: "-".join(f"{k}{v}" for k, v in kw.items()))
def test_m_grouped_unsupported_recipe_is_not_implemented(kwargs, untouched):
    a, b, d, layout = contiguous_args()
    untouched(d)
    for fn in (tessera.m_grouped_fp8_gemm_nt_contiguous, tessera.m_grouped_fp8_gemm_nn_contiguous):
        b_arg = b if fn is tessera.m_grouped_fp8_gemm_nt_contiguous else (b[0].transpose(1, 2), b[1].transpose(1, 2))
        with pytest.raises(NotImplementedError, match=r"recipe.*only recipe \(1, 128, 128\)"):
            fn(a, b_arg, d, layout, **kwargs)
    am, bm, dm, masked_m = masked_args()
    untouched(dm)
    with pytest.raises(NotImplementedError, match=r"m_grouped_fp8_gemm_nt_masked: argument 'recipe'"):
        tessera.m_grouped_fp8_gemm_nt_masked(am, bm, dm, masked_m, 64, **kwargs)


def test_m_grouped_recipe_combinations(untouched):
    a, b, d, layout = contiguous_args()
    untouched(d)
    with pytest.raises(ValueError, match="either 'recipe' or both"):
        tessera.m_grouped_fp8_gemm_nt_contiguous(a, b, d, layout, recipe=(1, 128, 128), recipe_a=(1, 128))
    with pytest.raises(ValueError, match="must be given together"):
        tessera.m_grouped_fp8_gemm_nt_contiguous(a, b, d, layout, recipe_b=(128, 128))


def test_m_grouped_contiguous_argument_errors(untouched):
    a, b, d, layout = contiguous_args()
    untouched(d)
    f = tessera.m_grouped_fp8_gemm_nt_contiguous
    with pytest.raises(ValueError, match="'expected_m_for_psum_layout': only meaningful with use_psum_layout=True"):
        f(a, b, d, layout, expected_m_for_psum_layout=128)
    with pytest.raises(TypeError, match="argument 'b': expected dtype float8_e4m3fn, got bfloat16"):
        f(a, (b[0].bfloat16(), b[1]), d, layout)
    with pytest.raises(NotImplementedError, match="argument 'b': FP4 operands"):
        f(a, (torch.empty(G, N, K // 2, dtype=torch.int8), b[1]), d, layout)
    with pytest.raises(NotImplementedError, match="argument 'sfa': packed UE8M0"):
        f((a[0], torch.ones(M, 1, dtype=torch.int32)), b, d, layout)
    with pytest.raises(TypeError, match="argument 'grouped_layout': expected dtype int32, got int64"):
        f(a, b, d, layout.long())
    with pytest.raises(ValueError, match=f"argument 'grouped_layout': expected a 1-D int32 tensor of {M} elements"):
        f(a, b, d, layout[:-1])
    with pytest.raises(ValueError, match=f"argument 'grouped_layout': expected a 1-D int32 tensor of {G} elements"):
        f(a, b, d, layout, use_psum_layout=True)
    with pytest.raises(ValueError, match=r"argument 'b': expected \[G, N, K\] with K = 384"):
        f(a, (b[0][:, :, :256], b[1]), d, layout)
    with pytest.raises(ValueError, match=r"argument 'd': expected shape \(256, 256\)"):
        f(a, b, d[:, :128], layout)
    with pytest.raises(TypeError, match="argument 'd': expected dtype bfloat16, got float32"):
        f(a, b, d.float(), layout)
    with pytest.raises(ValueError, match=r"argument 'sfa': expected shape \(256, 3\)"):
        f((a[0], a[1][:, :2]), b, d, layout)
    with pytest.raises(ValueError, match=r"argument 'sfb': expected shape \(2, 2, 3\)"):
        f(a, (b[0], b[1][:, :1]), d, layout)
    with pytest.raises(ValueError, match="argument 'expected_m_for_psum_layout': expected an int >= 0"):
        f(a, b, d, layout[:G], use_psum_layout=True, expected_m_for_psum_layout=-1)
    with pytest.raises(TypeError, match="argument 'a': expected a pair"):
        f(a[0], b, d, layout)


def test_m_grouped_nn_checks_the_given_layout(untouched):
    a, b, d, layout = contiguous_args()
    untouched(d)
    f = tessera.m_grouped_fp8_gemm_nn_contiguous
    with pytest.raises(ValueError, match=r"m_grouped_fp8_gemm_nn_contiguous: argument 'b': expected \[G, K, N\]"):
        f(a, b, d, layout)  # [G, N, K] passed where [G, K, N] is expected (K != N)
    with pytest.raises(ValueError, match="argument 'b': expected 3 dimensions"):
        f(a, (b[0][0], b[1][0]), d, layout)


@without_cuda_of_others
def test_m_grouped_empty_m_returns_without_cuda():
    a, b, d, layout = contiguous_args(m=0)
    tessera.m_grouped_fp8_gemm_nt_contiguous(a, b, d, layout)
    tessera.m_grouped_fp8_gemm_nn_contiguous(a, (b[0].transpose(1, 2), b[1].transpose(1, 2)), d, layout)
    a, b, d, layout = contiguous_args(m=0, psum=True)
    tessera.m_grouped_fp8_gemm_nt_contiguous(a, b, d, layout, use_psum_layout=True, expected_m_for_psum_layout=0)
    assert not torch.cuda.is_initialized()


# ---- M-grouped masked -------------------------------------------------------------------------------------------

def masked_args(g=G, m_max=200, n=N, k=K):
    a = (torch.empty(g, m_max, k, dtype=E4M3), torch.ones(g, m_max, (k + 127) // 128))
    b = (torch.empty(g, n, k, dtype=E4M3), torch.ones(g, (n + 127) // 128, (k + 127) // 128))
    d = torch.full((g, m_max, n), 7.0, dtype=torch.bfloat16)
    return a, b, d, torch.zeros(g, dtype=torch.int32)


@pytest.mark.parametrize("expected_m", [0, -4, 1.5, True, "64", None])
def test_masked_expected_m_must_be_a_positive_int(expected_m, untouched):
    a, b, d, masked_m = masked_args()
    untouched(d)
    with pytest.raises(ValueError, match="m_grouped_fp8_gemm_nt_masked: argument 'expected_m': expected an int >= 1"):
        tessera.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected_m)


def test_masked_argument_errors(untouched):
    a, b, d, masked_m = masked_args()
    untouched(d)
    f = tessera.fp8_m_grouped_gemm_nt_masked
    with pytest.raises(ValueError, match=f"argument 'masked_m': expected a 1-D int32 tensor of {G} elements"):
        f(a, b, d, torch.zeros(G + 1, dtype=torch.int32), 64)
    with pytest.raises(TypeError, match="argument 'masked_m': expected dtype int32, got int64"):
        f(a, b, d, masked_m.long(), 64)
    with pytest.raises(TypeError, match="argument 'b': expected dtype float8_e4m3fn, got float32"):
        f(a, (b[0].float(), b[1]), d, masked_m, 64)
    with pytest.raises(ValueError, match=r"argument 'b': expected \[G, N, K\] with G = 2"):
        f(a, (b[0][:1], b[1][:1]), d, masked_m, 64)
    with pytest.raises(ValueError, match=r"argument 'd': expected shape \(2, 200, 256\)"):
        f(a, b, d[:, :100], masked_m, 64)
    with pytest.raises(ValueError, match=r"argument 'sfa': expected shape \(2, 200, 3\)"):
        f((a[0], a[1][:, :, :1]), b, d, masked_m, 64)
    with pytest.raises(ValueError, match="argument 'a': expected 3 dimensions"):
        f((a[0][0], a[1][0]), b, d, masked_m, 64)
    a0, b0, d0, m0 = masked_args(m_max=0)
    with pytest.raises(ValueError, match="M_max = 0"):
        f(a0, b0, d0, m0, 64)


# ---- K-grouped ----------------------------------------------------------------------------------------------------

def k_grouped_args(ks, m=256, n=128, g=None):
    g = len(ks) if g is None else g
    s = sum(ks)
    a = (torch.empty(s * m, dtype=E4M3), torch.ones(m, s // 128))
    b = (torch.empty(s * n, dtype=E4M3), torch.ones(n, s // 128))
    d = torch.full((g, m, n), 7.0)
    layout = torch.tensor(ks, dtype=torch.int32)
    return a, b, d, layout


def test_k_grouped_recipe_and_psum_are_not_implemented(untouched):
    ks = [128, 256]
    a, b, d, layout = k_grouped_args(ks)
    untouched(d)
    f = tessera.k_grouped_fp8_gemm_nt_contiguous
    for recipe in [(1, 128, 128), (1, 1, 32), None]:
        with pytest.raises(NotImplementedError, match=r"argument 'recipe': SM90 supports only \(1, 1, 128\)"):
            f(a, b, d, ks, layout, c=d, recipe=recipe)
    with pytest.raises(NotImplementedError, match="'use_psum_layout'.*not supported on SM90"):
        f(a, b, d, ks, layout, c=d, use_psum_layout=True)
    with pytest.raises(tessera.InvalidArgument, match="argument 'c': expected a tensor"):
        f(a, b, d, ks, layout)


@pytest.mark.parametrize("ks_cpu,match", [
    ([128, 200], "multiple of 128, got 200 at index 1"),
    ([128, -128], "got -128 at index 1"),
    ([128], "one K per group \\(2 groups"),
    ([128, 128, 128], "one K per group \\(2 groups"),
    ([], "non-empty list"),
    (None, "non-empty list"),
    ([128, 128.0], "expected ints, got 128.0"),
], ids=["not-multiple", "negative", "too-few", "too-many", "empty", "none", "float"])
def test_k_grouped_ks_errors(ks_cpu, match, untouched):
    a, b, d, layout = k_grouped_args([128, 256])
    untouched(d)
    with pytest.raises(ValueError, match=f"argument 'ks_cpu': .*{match}"):
        tessera.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks_cpu, layout, c=d)


def test_k_grouped_shape_errors(untouched):
    ks = [128, 256]
    a, b, d, layout = k_grouped_args(ks)
    c = torch.zeros_like(d)
    untouched(d)
    f = tessera.k_grouped_fp8_gemm_nt_contiguous
    with pytest.raises(ValueError, match=r"argument 'a': expected sum\(ks_cpu\) \* M = 384 \* 256"):
        f((a[0][:-1], a[1]), b, d, ks, layout, c=c)
    with pytest.raises(ValueError, match=r"argument 'b': expected sum\(ks_cpu\) \* N = 384 \* 128"):
        f(a, (b[0][:-128], b[1]), d, ks, layout, c=c)
    with pytest.raises(ValueError, match=r"argument 'sfa': expected shape \(256, 3\)"):
        f((a[0], a[1][:, :2]), b, d, ks, layout, c=c)
    with pytest.raises(ValueError, match=r"argument 'sfb': expected shape \(128, 3\)"):
        f(a, (b[0], b[1].T), d, ks, layout, c=c)
    with pytest.raises(TypeError, match="argument 'a': expected dtype float8_e4m3fn, got bfloat16"):
        f((a[0].bfloat16(), a[1]), b, d, ks, layout, c=c)
    with pytest.raises(ValueError, match="argument 'grouped_layout': expected a 1-D int32 tensor of 2 elements"):
        f(a, b, d, ks, layout[:1], c=c)
    with pytest.raises(ValueError, match=r"argument 'c': expected shape \(2, 256, 128\)"):
        f(a, b, d, ks, layout, c=c[:1])
    with pytest.raises(ValueError, match="argument 'c': expected shape .* and dtype float32"):
        f(a, b, d, ks, layout, c=c.double())
    with pytest.raises(TypeError, match="argument 'd': expected dtype float32, got bfloat16"):
        f(a, b, d.bfloat16(), ks, layout, c=c.bfloat16())
    with pytest.raises(ValueError, match="argument 'd': expected 3 dimensions"):
        f(a, b, d[0], ks, layout, c=c[0])
    with pytest.raises(ValueError, match="argument 'c': shares storage with d but differs"):
        f(a, b, d, ks, layout, c=d.view(2, 128, 256))


@without_cuda_of_others
def test_k_grouped_zero_total_k_copies_c_without_a_kernel():
    ks = [0, 0, 0]
    a, b, d, layout = k_grouped_args(ks)
    c = torch.randn_like(d)
    tessera.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, layout, c=c)
    assert torch.equal(d, c)
    before = d.clone()
    tessera.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, layout, c=d)
    assert torch.equal(d, before)
    assert not torch.cuda.is_initialized()


def test_k_grouped_tn_is_sm100_only(untouched):
    ks = [128, 256]
    g, m, n = len(ks), 256, 128
    a = (torch.empty(sum(ks), m, dtype=E4M3), torch.ones(sum(ks) // 128, m))
    b = (torch.empty(sum(ks), n, dtype=E4M3), torch.ones(sum(ks) // 128, n))
    d = torch.full((g, m, n), 7.0)
    layout = torch.tensor(ks, dtype=torch.int32)
    untouched(d)
    f = tessera.k_grouped_fp8_gemm_tn_contiguous
    with pytest.raises(NotImplementedError, match="SM100-only in DeepGEMM; on SM90 use k_grouped_fp8_gemm_nt_"):
        f(a, b, d, ks, layout, c=d)
    with pytest.raises(NotImplementedError, match="SM100-only"):
        f(a, b, d, None, torch.tensor([128, 384], dtype=torch.int32), c=d, use_psum_layout=True)
    with pytest.raises(ValueError, match=r"argument 'a': expected shape \(384, 256\)"):
        f((a[0][:128], a[1]), b, d, ks, layout, c=d)
    with pytest.raises(ValueError, match="argument 'ks_cpu'"):
        f(a, b, d, None, layout, c=d)
    # Total K == 0: the trivial case runs as in DeepGEMM (d = c), no kernel needed.
    zero = torch.empty(0, m, dtype=E4M3), torch.ones(0, m)
    zero_b = torch.empty(0, n, dtype=E4M3), torch.ones(0, n)
    out = torch.full((g, m, n), 3.0)
    c = torch.randn_like(out)
    f(zero, zero_b, out, [0, 0], layout, c=c)
    assert torch.equal(out, c)


def test_import_still_does_not_initialize_cuda():
    code = ("import torch, tessera; import sys; "
            "sys.exit(1 if torch.cuda.is_initialized() or tessera.k_grouped_fp8_gemm_nt_contiguous is None else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
