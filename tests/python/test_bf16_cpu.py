"""tessera.bf16_gemm's argument checks, which run before the kernel is reached (CPU tensors suffice): dtypes, shapes,
c against d, the layouts' transposes, and the C++ op's refusal of host memory."""
import pytest

torch = pytest.importorskip("torch")
import tessera  # noqa: E402
from tessera import bf16_gemm as g  # noqa: E402


def bf16(*shape):
    return torch.zeros(*shape, dtype=torch.bfloat16)


def test_dtypes_are_named():
    with pytest.raises(tessera.TypeMismatch, match="bf16_gemm_nt: argument 'a': expected dtype bfloat16, got float32"):
        g.bf16_gemm_nt(torch.zeros(4, 8), bf16(4, 8), bf16(4, 4))
    with pytest.raises(tessera.TypeMismatch, match="argument 'd': expected dtype bfloat16 or float32, got float16"):
        g.bf16_gemm_nt(bf16(4, 8), bf16(4, 8), torch.zeros(4, 4, dtype=torch.float16))
    with pytest.raises(tessera.TypeMismatch, match="argument 'c': expected dtype float32"):
        g.bf16_gemm_nt(bf16(4, 8), bf16(4, 8), torch.zeros(4, 4), c=bf16(4, 4))
    with pytest.raises(tessera.TypeMismatch, match="argument 'b': expected a torch.Tensor, got tuple"):
        g.bf16_gemm_nt(bf16(4, 8), (bf16(4, 8), None), bf16(4, 4))


def test_public_name_is_the_cpp_entry():
    # The cached common call launches from C++ (host time); anything it does not take goes to the Python path, with
    # the same arguments (compiled_dims positional or named) and the same messages.
    assert tessera.bf16_gemm_nt is tessera._C.bf16_gemm_nt_entry is g.bf16_gemm_nt
    with pytest.raises(tessera.TypeMismatch, match="bf16_gemm_nt: argument 'a': expected a torch.Tensor, got list"):
        g.bf16_gemm_nt([[1.0]], bf16(4, 8), bf16(4, 4), None, "nk")
    with pytest.raises(tessera.InvalidArgument, match="bf16_gemm_nt: argument 'a': expected a CUDA tensor"):
        g.bf16_gemm_nt(bf16(4, 8), bf16(4, 8), bf16(4, 4), compiled_dims="mn")
    # tensors the binding has no dtype for reach the Python path too, which names the op and the dtype
    with pytest.raises(tessera.TypeMismatch, match="bf16_gemm_nt: argument 'a': expected dtype bfloat16, got int16"):
        g.bf16_gemm_nt(torch.zeros(4, 8, dtype=torch.int16), bf16(4, 8), bf16(4, 4))
    with pytest.raises(tessera.TypeMismatch, match="bf16_gemm_nt: argument 'd': expected dtype bfloat16 or float32, "
                                                   "got bool"):
        g.bf16_gemm_nt(bf16(4, 8), bf16(4, 8), torch.zeros(4, 4, dtype=torch.bool))


def test_shapes_are_named():
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'b': expected K = 8 \(from a\), got shape \(4, 6\)"):
        g.bf16_gemm_nt(bf16(4, 8), bf16(4, 6), bf16(4, 4))
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'd': expected shape \(4, 5\), got \(4, 4\)"):
        g.bf16_gemm_nt(bf16(4, 8), bf16(5, 8), bf16(4, 4))
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'c': expected shape \(4, 4\)"):
        g.bf16_gemm_nt(bf16(4, 8), bf16(4, 8), bf16(4, 4), c=bf16(4, 5))
    with pytest.raises(tessera.InvalidArgument, match="argument 'a': expected 2 dimensions"):
        g.bf16_gemm_nt(bf16(2, 4, 8), bf16(4, 8), bf16(4, 4))


@pytest.mark.parametrize("fn,a,b", [("bf16_gemm_nn", (4, 8), (8, 5)), ("bf16_gemm_tn", (8, 4), (8, 5)),
                                    ("bf16_gemm_tt", (8, 4), (5, 8))])
def test_layouts_take_transposed_operands(fn, a, b):
    # The shapes each layout takes reach the C++ op (which then refuses host memory, naming a), and the wrong
    # orientation is refused in Python first.
    with pytest.raises(tessera.InvalidArgument, match="bf16_gemm_nt: argument 'a': expected a CUDA tensor"):
        getattr(g, fn)(bf16(*a), bf16(*b), bf16(4, 5))
    with pytest.raises(tessera.InvalidArgument, match="expected K = 8"):
        getattr(g, fn)(bf16(*a), bf16(*b[::-1]) if b[0] != b[1] else bf16(3, 3), bf16(4, 5))


def test_empty_products_need_no_gpu():
    d = torch.full((4, 3), 7.0, dtype=torch.bfloat16)
    g.bf16_gemm_nt(bf16(4, 0), bf16(3, 0), d)
    assert torch.equal(d, torch.zeros_like(d))
    c = torch.ones(4, 3, dtype=torch.bfloat16)
    g.bf16_gemm_nt(bf16(4, 0), bf16(3, 0), d, c=c)
    assert torch.equal(d, c)
    g.bf16_gemm_nt(bf16(0, 8), bf16(3, 8), bf16(0, 3))  # M = 0: nothing to do


def test_grouped_arguments_are_checked_before_the_kernel():
    a, b, d = bf16(256, 128), bf16(2, 64, 128), bf16(256, 64)
    layout = torch.zeros(256, dtype=torch.int32)
    with pytest.raises(tessera.TypeMismatch, match="argument 'b': expected dtype bfloat16"):
        g.m_grouped_bf16_gemm_nt_contiguous(a, b.float(), d, layout)
    with pytest.raises(tessera.InvalidArgument, match="argument 'b': expected 3 dimensions"):
        g.m_grouped_bf16_gemm_nt_contiguous(a, b[0], d, layout)
    with pytest.raises(tessera.InvalidArgument, match="expected_m_for_psum_layout': only with use_psum_layout"):
        g.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout, expected_m_for_psum_layout=128)
    with pytest.raises(tessera.InvalidArgument, match="m_grouped_bf16_gemm_nt_contiguous: argument 'a': expected a "
                                                      "CUDA tensor"):
        g.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout)
    with pytest.raises(tessera.InvalidArgument, match="argument 'a': expected 3 dimensions"):
        g.m_grouped_bf16_gemm_nt_masked(a, b, d, layout[:2], 64)


def test_k_grouped_arguments_are_checked_before_the_kernel():
    a, b = bf16(256, 64), bf16(256, 32)
    d = torch.zeros(2, 64, 32)
    ks, layout = [128, 128], torch.tensor([128, 128], dtype=torch.int32)
    f = g.k_grouped_bf16_gemm_tn_contiguous
    with pytest.raises(tessera.InvalidArgument, match="argument 'c': expected a tensor"):
        f(a, b, d, ks, layout)
    with pytest.raises(tessera.InvalidArgument, match="psum layout is SM100-only"):
        f(a, b, d, ks, layout, c=d, use_psum_layout=True)
    with pytest.raises(tessera.InvalidArgument, match="argument 'ks_cpu': expected a non-empty list"):
        f(a, b, d, [], layout, c=d)
    with pytest.raises(tessera.TypeMismatch, match="argument 'd': expected dtype float32 or bfloat16, got float16"):
        f(a, b, d.to(torch.float16), ks, layout, c=d)
    with pytest.raises(tessera.TypeMismatch, match="argument 'c': expected dtype bfloat16, got float32"):
        f(a, b, d.to(torch.bfloat16), ks, layout, c=d)
    with pytest.raises(tessera.InvalidArgument, match="k_grouped_bf16_gemm_tn_contiguous: argument 'a': expected a "
                                                      "CUDA tensor"):
        f(a, b, d, ks, layout, c=d)


def test_cublaslt_arguments_are_checked_before_the_library():
    from tessera import cublaslt as lt
    with pytest.raises(tessera.TypeMismatch, match="argument 'b': expected dtype bfloat16, got float8_e4m3fn"):
        lt.cublaslt_gemm_nt(bf16(4, 8), torch.zeros(4, 8).to(torch.float8_e4m3fn), bf16(4, 4))
    with pytest.raises(tessera.TypeMismatch, match="argument 'a': expected dtype bfloat16 or float8_e4m3fn"):
        lt.cublaslt_gemm_nt(torch.zeros(4, 8), bf16(4, 8), bf16(4, 4))
    with pytest.raises(tessera.InvalidArgument, match="cublaslt_gemm_nt: argument 'a': expected a CUDA tensor"):
        lt.cublaslt_gemm_nt(bf16(4, 8), bf16(4, 8), bf16(4, 4))


def test_a_rejected_call_with_c_leaves_d_untouched():
    # c is copied into d by the op itself, after every check: here the op refuses host memory, so d keeps its values.
    from tessera import cublaslt as lt
    c = torch.ones(4, 4, dtype=torch.bfloat16)
    for fn in (g.bf16_gemm_nt, lt.cublaslt_gemm_nt):
        d = torch.full((4, 4), 7.0, dtype=torch.bfloat16)
        with pytest.raises(tessera.InvalidArgument, match="expected a CUDA tensor"):
            fn(bf16(4, 8), bf16(4, 8), d, c=c)
        assert torch.equal(d, torch.full_like(d, 7.0))
    d3 = torch.full((2, 64, 32), 7.0)
    with pytest.raises(tessera.InvalidArgument, match="expected a CUDA tensor"):
        g.k_grouped_bf16_gemm_tn_contiguous(bf16(256, 64), bf16(256, 32), d3, [128, 128],
                                             torch.tensor([128, 128], dtype=torch.int32), c=torch.ones(2, 64, 32))
    assert torch.equal(d3, torch.full_like(d3, 7.0))
