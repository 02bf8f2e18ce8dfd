"""tessera.einsum_gemm's argument checks, which run before any kernel (CPU tensors suffice): the expressions, dtypes,
shapes, c and use_cublaslt per expression, and the C++ ops' refusal of host memory."""
import pytest

torch = pytest.importorskip("torch")
import tessera  # noqa: E402
from tessera.einsum_gemm import einsum  # noqa: E402


def bf16(*shape):
    return torch.zeros(*shape, dtype=torch.bfloat16)


def test_unsupported_expression_is_named():
    with pytest.raises(tessera.InvalidArgument, match="unsupported einsum expression 'ij,jk->ik'"):
        einsum("ij,jk->ik", bf16(2, 2), bf16(2, 2), bf16(2, 2))
    with pytest.raises(RuntimeError):  # DeepGEMM's callers catch RuntimeError
        einsum("bhd,bhr->hdr", bf16(2, 2, 2), bf16(2, 2, 2), bf16(2, 2, 2))


def test_spaces_are_allowed_and_host_memory_refused():
    with pytest.raises(tessera.InvalidArgument, match="einsum: argument 'a': expected a CUDA tensor"):
        einsum("bmk, bnk -> mn", bf16(2, 64, 64), bf16(2, 64, 64), torch.zeros(64, 64))
    with pytest.raises(tessera.InvalidArgument, match="einsum: argument 'a': expected a CUDA tensor"):
        einsum("bhr,hdr->bhd", bf16(3, 2, 16), bf16(2, 8, 16), bf16(3, 2, 8))


def test_bmk_checks():
    with pytest.raises(tessera.TypeMismatch, match="argument 'a': expected dtype bfloat16, got float32"):
        einsum("bmk,bnk->mn", torch.zeros(2, 64, 64), bf16(2, 64, 64), torch.zeros(64, 64))
    with pytest.raises(tessera.InvalidArgument, match="argument 'd': expected 2 dimensions"):
        einsum("bmk,bnk->mn", bf16(2, 64, 64), bf16(2, 64, 64), torch.zeros(1, 64, 64))
    with pytest.raises(tessera.TypeMismatch, match="argument 'c': expected dtype float32"):
        einsum("bmk,bnk->mn", bf16(2, 64, 64), bf16(2, 64, 64), torch.zeros(64, 64), c=bf16(64, 64))
    with pytest.raises(tessera.InvalidArgument, match="use_cublaslt"):
        einsum("bmk,bnk->mn", bf16(2, 64, 64), bf16(2, 64, 64), torch.zeros(64, 64), use_cublaslt=True)


def test_per_head_checks():
    with pytest.raises(tessera.InvalidArgument, match="argument 'c': expected None for 'bhr,hdr->bhd'"):
        einsum("bhr,hdr->bhd", bf16(3, 2, 16), bf16(2, 8, 16), bf16(3, 2, 8), c=bf16(3, 2, 8))
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'b': expected 2 heads \(from a\)"):
        einsum("bhr,hdr->bhd", bf16(3, 2, 16), bf16(3, 8, 16), bf16(3, 2, 8))
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'b': expected \[H, D, 16\]"):
        einsum("bhr,hdr->bhd", bf16(3, 2, 16), bf16(2, 8, 15), bf16(3, 2, 8))
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'b': expected \[H, 16, R\]"):
        einsum("bhd,hdr->bhr", bf16(3, 2, 16), bf16(2, 8, 15), bf16(3, 2, 15))
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'd': expected shape \(3, 2, 8\)"):
        einsum("bhr,hdr->bhd", bf16(3, 2, 16), bf16(2, 8, 16), bf16(3, 2, 9))
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'a': expected stride\(2\) == 1"):
        einsum("bhr,hdr->bhd", bf16(3, 16, 2).transpose(1, 2), bf16(2, 8, 16), bf16(3, 2, 8))
    with pytest.raises(tessera.TypeMismatch, match="argument 'd': expected dtype bfloat16, got float32"):
        einsum("bhr,hdr->bhd", bf16(3, 2, 16), bf16(2, 8, 16), torch.zeros(3, 2, 8))


def test_empty_contraction_needs_no_gpu():
    z = torch.full((3, 2, 8), 1.0, dtype=torch.bfloat16)
    einsum("bhr,hdr->bhd", bf16(3, 2, 0), bf16(2, 8, 0), z)
    assert (z == 0).all()


def test_fp8_einsum_checks():
    from tessera.einsum_gemm import fp8_einsum
    e4m3 = torch.float8_e4m3fn
    x = (torch.zeros(2, 8, 256, dtype=e4m3), torch.ones(2, 8, 2))
    y = (torch.zeros(8, 128, 256, dtype=e4m3), torch.ones(8, 1, 2))
    z = torch.zeros(2, 8, 128, dtype=torch.bfloat16)
    with pytest.raises(NotImplementedError, match="SM100-only"):
        fp8_einsum("bhd,hdr->bhr", x, y, z)
    with pytest.raises(tessera.InvalidArgument, match="unsupported einsum expression"):
        fp8_einsum("bmk,bnk->mn", x, y, z)
    with pytest.raises(NotImplementedError, match="recipe"):
        fp8_einsum("bhr,hdr->bhd", x, y, z, recipe=(1, 1, 128))
    with pytest.raises(tessera.TypeMismatch, match="argument 'a': expected a pair"):
        fp8_einsum("bhr,hdr->bhd", x[0], y, z)
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'd': expected shape \(2, 8, 128\)"):
        fp8_einsum("bhr,hdr->bhd", x, y, z[:, :, :64])
    with pytest.raises(tessera.InvalidArgument, match="fp8_einsum: argument 'a': expected a CUDA tensor"):
        fp8_einsum("bhr,hdr->bhd", x, y, z)
