"""tessera.mqa_logits's argument checks that run before a kernel is reached (CPU tensors suffice): the SM100-only
features raise NotImplementedError, bad shapes, dtypes and layouts are named, every error is a RuntimeError (as
DeepGEMM's are), valid arguments get as far as the device check; and the output buffer's geometry."""
import pytest

torch = pytest.importorskip("torch")
import tessera  # noqa: E402
from tessera import _C  # noqa: E402
from tessera import mqa_logits as ml  # noqa: E402


def fp8(*shape):
    return torch.zeros(*shape, dtype=torch.float8_e4m3fn)


def call(s=4, h=32, d=64, s_kv=16, q=None, kv=None, kv_sf=None, weights=None, ks=None, ke=None, **kwargs):
    q = fp8(s, h, d) if q is None else q
    kv = fp8(s_kv, d) if kv is None else kv
    kv_sf = torch.ones(s_kv) if kv_sf is None else kv_sf
    weights = torch.zeros(s, h) if weights is None else weights
    ks = torch.zeros(s, dtype=torch.int32) if ks is None else ks
    ke = torch.zeros(s, dtype=torch.int32) if ke is None else ke
    return ml.fp8_fp4_mqa_logits((q, None) if isinstance(q, torch.Tensor) else q, (kv, kv_sf), weights, ks, ke,
                                  **kwargs)


def test_valid_arguments_reach_the_device_check():
    with pytest.raises(tessera.InvalidArgument, match="fp8_mqa_logits: argument 'q': expected a CUDA tensor"):
        call()
    with pytest.raises(tessera.InvalidArgument, match="expected a CUDA tensor"):
        call(h=64, d=128, max_seqlen_k=7, clean_logits=False, logits_dtype=torch.bfloat16)
    with pytest.raises(tessera.InvalidArgument, match="expected a CUDA tensor"):
        ml.fp8_mqa_logits(fp8(4, 32, 32), (fp8(16, 32), torch.ones(16)), torch.zeros(4, 32),
                           torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32))


@pytest.mark.parametrize("case,match", [
    (dict(q=(fp8(4, 32, 32), torch.ones(4, 32))), "FP4 queries and KV .* are SM100-only"),
    (dict(h=16), "16 heads are SM100-only; SM90 takes 32 or 64"),
    (dict(h=8), "8 heads are SM100-only"),
    (dict(q=torch.zeros(4, 32, 32, dtype=torch.int8)), "FP4 .* SM100-only"),
    (dict(weights=torch.zeros(4, 32, dtype=torch.bfloat16)), "BF16 weights are SM100-only"),
])
def test_sm100_features_raise_not_implemented(case, match):
    with pytest.raises(NotImplementedError, match=match) as info:
        call(**case)
    assert isinstance(info.value, RuntimeError)


@pytest.mark.parametrize("case,match", [
    (dict(h=48), r"expected 32 or 64 heads, got shape \[4, 48, 64\]"),
    (dict(d=256), "expected a head dim of 32, 64 or 128"),
    (dict(q=fp8(32, 4, 64).transpose(0, 1)), "argument 'q': expected \\[S, H, D\\] with D and H packed"),
    (dict(kv=fp8(16, 32)), r"argument 'kv': expected \[S_kv, 64\] \(D from q\)"),
    (dict(kv=fp8(64, 16).T), "argument 'kv': expected row-major"),
    (dict(kv_sf=torch.ones(15)), r"argument 'kv_sf': expected a contiguous \[16\]"),
    (dict(kv_sf=torch.ones(32)[::2]), "argument 'kv_sf': expected a contiguous"),
    (dict(weights=torch.zeros(4, 64)), r"argument 'weights': expected shape \[4, 32\]"),
    (dict(weights=torch.zeros(4, 33)[:, :32]), "a row stride of a multiple of 16 bytes"),
    (dict(ks=torch.zeros(5, dtype=torch.int32)), "argument 'cu_seq_len_k_start': expected a contiguous int32"),
    (dict(ke=torch.zeros(8, dtype=torch.int32)[::2]), "argument 'cu_seq_len_k_end': expected a contiguous int32"),
    (dict(max_seqlen_k=-1), "argument 'max_seqlen_k': expected 0"),
    (dict(max_seqlen_k=8), r"argument 'clean_logits': expected False with the compressed layout"),
])
def test_bad_arguments_are_named(case, match):
    with pytest.raises(tessera.InvalidArgument, match=match) as info:
        call(**case)
    assert isinstance(info.value, RuntimeError)


@pytest.mark.parametrize("case,match", [
    (dict(q=torch.zeros(4, 32, 64)), "argument 'q': expected dtype float8_e4m3fn, got float32"),
    (dict(kv=torch.zeros(16, 64, dtype=torch.bfloat16)), "argument 'kv': expected dtype float8_e4m3fn"),
    (dict(kv_sf=torch.ones(16, dtype=torch.float64)), "argument 'kv_sf': expected dtype float32"),
    (dict(ks=torch.zeros(4, dtype=torch.int64)), "argument 'cu_seq_len_k_start': expected dtype int32"),
    (dict(logits_dtype=torch.float16), "argument 'logits_dtype': expected torch.float32 or torch.bfloat16"),
])
def test_dtypes_are_named(case, match):
    with pytest.raises(tessera.TypeMismatch, match=match) as info:
        call(**case)
    assert isinstance(info.value, RuntimeError)


def test_pairs_are_required():
    with pytest.raises(tessera.TypeMismatch, match="argument 'q': expected a pair"):
        ml.fp8_fp4_mqa_logits(fp8(4, 32, 64), (fp8(16, 64), torch.ones(16)), torch.zeros(4, 32),
                               torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32))
    with pytest.raises(tessera.TypeMismatch, match="argument 'kv': expected a pair"):
        ml.fp8_fp4_mqa_logits((fp8(4, 32, 64), None), fp8(16, 64), torch.zeros(4, 32),
                               torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32))
    with pytest.raises(tessera.TypeMismatch, match="fp8_mqa_logits: argument 'q': expected a torch.Tensor"):
        ml.fp8_mqa_logits((fp8(4, 32, 64), None), (fp8(16, 64), torch.ones(16)), torch.zeros(4, 32),
                           torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32))


def test_raw_op_checks_its_output_and_workspace():
    q, kv, sf, w = fp8(4, 32, 64), fp8(16, 64), torch.ones(16), torch.zeros(4, 32)
    ks = ke = torch.zeros(4, dtype=torch.int32)
    ws = torch.zeros(1, dtype=torch.int32)
    with pytest.raises(tessera.InvalidArgument, match=r"argument 'logits': expected shape \[4, 16\] \(S, S_kv\)"):
        _C.mqa_logits(q, kv, sf, w, ks, ke, torch.zeros(4, 17), ws, True, 0)
    with pytest.raises(tessera.InvalidArgument, match=r"expected shape \[4, 9\] \(S, max_seqlen_k\)"):
        _C.mqa_logits(q, kv, sf, w, ks, ke, torch.zeros(4, 16), ws, False, 9)
    with pytest.raises(tessera.TypeMismatch, match="argument 'logits': expected dtype float32 or bfloat16"):
        _C.mqa_logits(q, kv, sf, w, ks, ke, torch.zeros(4, 16, dtype=torch.float16), ws, True, 0)
    with pytest.raises(tessera.InvalidArgument, match="argument 'logits': expected row-major"):
        _C.mqa_logits(q, kv, sf, w, ks, ke, torch.zeros(16, 4).T, ws, True, 0)
    with pytest.raises(tessera.TypeMismatch, match="argument 'workspace': expected dtype int32"):
        _C.mqa_logits(q, kv, sf, w, ks, ke, torch.zeros(4, 16), torch.zeros(1), True, 0)
    with pytest.raises(tessera.InvalidArgument, match="argument 'workspace': expected a contiguous int32 tensor"):
        _C.mqa_logits(q, kv, sf, w, ks, ke, torch.zeros(4, 16), torch.zeros(0, dtype=torch.int32), True, 0)
    with pytest.raises(tessera.InvalidArgument, match="argument 'q': expected a CUDA tensor"):
        _C.mqa_logits(q, kv, sf, w, ks, ke, torch.zeros(4, 16), ws, True, 0)


def test_clean_op_checks_its_arguments():
    ke = torch.zeros(4, dtype=torch.int32)
    with pytest.raises(tessera.InvalidArgument, match="clean_logits: argument 'cu_seq_len_k_end': expected a contiguous "
                                                       "int32 tensor of 5 elements"):
        _C.clean_logits(torch.zeros(5, 8), None, ke)
    with pytest.raises(tessera.TypeMismatch, match="clean_logits: argument 'logits': expected dtype float32 or"):
        _C.clean_logits(torch.zeros(4, 8, dtype=torch.int32), None, ke)
    with pytest.raises(tessera.InvalidArgument, match="clean_logits: argument 'logits': expected a CUDA tensor"):
        _C.clean_logits(torch.zeros(4, 8), ke, ke)


def test_buffer_geometry_is_deepgemms():
    # Rows 1024-byte aligned: align(S_kv + 256, 1024 / element) normal, align(align(width, 256), ...) compressed.
    assert _C.mqa_logits_row_stride(8192, 0, False) == 8448
    assert _C.mqa_logits_row_stride(8192, 0, True) == 8704
    assert _C.mqa_logits_row_stride(65536, 0, True) == 66048
    assert _C.mqa_logits_row_stride(65536, 7000, False) == 7168
    assert _C.mqa_logits_row_stride(65536, 1, True) == 512
    assert _C.mqa_logits_buffer_rows(2047, 32) == 2048
    assert _C.mqa_logits_buffer_rows(2047, 64) == 2048
    assert _C.mqa_logits_buffer_rows(13, 64) == 14
