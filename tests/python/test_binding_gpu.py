"""How the binding reads PyTorch CUDA tensors and the current stream: through torch's DLPack C exchange table where
torch has one (the default), and with TESSERA_DLPACK_EXCHANGE=0 through their attributes. The table is checked
against the attributes (the binding compares its first conversions and turns the table off, with a warning, on any
difference; these tests turn that warning into a failure). The option is read once per process: the attribute path's
run is a subprocess that repeats this file's checks."""
import os
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

from tessera import _C  # noqa: E402

DTYPE_IDS = {}  # torch dtype -> the binding's dtype id, learned from plain tensors below


def cuda_tensors():
    """Views the GEMM entry points meet: offsets, transposes, broadcasts, FP8, empty and 0-d tensors."""
    base = torch.randn(96, 160, device="cuda")
    return {
        "contiguous": base,
        "offset view": base[7:, 33:],
        "transposed": base.t(),
        "column slice": base[:, 16:48],
        "expanded": torch.randn(1, 160, device="cuda").expand(96, 160),
        "size-1 dim": torch.randn(1, 256, device="cuda").as_strided((1, 128), (512, 1)),
        "fp8": torch.randn(64, 128, device="cuda").to(torch.float8_e4m3fn),
        "fp8 offset": torch.randn(64, 256, device="cuda").to(torch.float8_e4m3fn)[3:, 128:],
        "bf16 3-d": torch.randn(4, 8, 16, device="cuda", dtype=torch.bfloat16),
        "int32": torch.arange(17, device="cuda", dtype=torch.int32),
        "0-d": torch.tensor(2.0, device="cuda"),
        "empty": torch.empty(0, 64, device="cuda"),
        "requires grad": torch.randn(8, 8, device="cuda", requires_grad=True),
        "parameter": torch.nn.Parameter(torch.randn(16, 32, device="cuda").to(torch.float8_e4m3fn),
                                        requires_grad=False),
    }


def expected_info(t):
    return t.data_ptr(), list(t.shape), list(t.stride()), t.device.index


def test_tensor_views_match_torch_attributes(rounds=3):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the binding's "table disagrees" warning fails the test
        # More conversions than the binding checks against the attributes, so the unchecked path runs too.
        for _ in range(rounds):
            for name, t in cuda_tensors().items():
                data, dtype, shape, strides, kind, index = _C._tensor_ref_info(t)
                want_data, want_shape, want_strides, want_index = expected_info(t)
                assert data == want_data, name
                assert shape == want_shape, name
                for got, want, n in zip(strides, want_strides, want_shape):
                    assert n <= 1 or got == want, name
                assert kind == 1 and index == want_index, name  # DeviceKind::kCuda
                assert DTYPE_IDS.setdefault(t.dtype, dtype) == dtype, name
    if os.environ.get("TESSERA_DLPACK_EXCHANGE") == "0":
        assert not _C._dlpack_exchange_active(), "TESSERA_DLPACK_EXCHANGE=0 must keep the attribute path"
    elif hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        assert _C._dlpack_exchange_active(), "torch has the exchange table but the binding is not using it"


def test_current_stream_follows_torch():
    a = torch.randn(4, 4, device="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(20):  # past the binding's checked queries
            side = torch.cuda.Stream()
            with torch.cuda.stream(side):
                assert _C._probe_tensor_refs(a, a, a, a, a) == side.cuda_stream
            assert _C._probe_tensor_refs(a, a, a, a, a) == torch.cuda.current_stream().cuda_stream


def test_unsupported_and_non_cuda_tensors_take_the_attribute_path():
    with pytest.raises(TypeError, match="argument 't': unsupported tensor dtype torch.bool"):
        _C._tensor_ref_info(torch.zeros(3, device="cuda", dtype=torch.bool))
    # A meta tensor never reaches torch's table (an is_cuda read guards it); the attribute path reports it as not CUDA.
    _, _, shape, _, kind, _ = _C._tensor_ref_info(torch.empty(3, 5, device="meta"))
    assert shape == [3, 5] and kind != 1
    _, _, _, _, kind, _ = _C._tensor_ref_info(torch.zeros(2, 2))
    assert kind != 1


def test_a_cuda_tensor_without_memory_is_rejected_before_any_launch():
    # torch's functional-tensor wrappers have no storage: the exchange table (torch 2.11) and data_ptr() (torch 2.15)
    # both give address 0. The GEMM must refuse it rather than read or write there.
    if not hasattr(torch, "_to_functional_tensor"):
        pytest.skip("this torch has no functional tensors")
    import tessera
    from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

    a, sfa = per_token_cast_to_fp8(torch.randn(128, 256, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    b, sfb = per_block_cast_to_fp8(torch.randn(128, 256, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    d = torch.full((128, 128), float("nan"), device="cuda", dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="argument 'b': expected a tensor with device memory"):
        tessera.fp8_gemm_nt((a, sfa), (torch._to_functional_tensor(b), sfb), d)
    torch.cuda.synchronize()
    assert torch.isnan(d).all(), "the output was touched"


def test_checks_again_through_the_attribute_path():
    if os.environ.get("TESSERA_DLPACK_EXCHANGE") == "0":
        pytest.skip("this process already runs without the table")
    env = dict(os.environ, TESSERA_DLPACK_EXCHANGE="0")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.abspath(__file__)],
                         env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert " passed" in out.stdout and " failed" not in out.stdout, out.stdout[-3000:]
