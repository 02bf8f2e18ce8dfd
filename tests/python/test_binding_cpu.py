"""The nanobind module on a machine without torch or a GPU: errors map to Python exceptions with clear messages,
DLPack (numpy) tensors convert, and nothing crashes without a driver.

tessera/__init__.py needs torch, so _C is loaded here straight from the package folder.
"""
import importlib.util
import pathlib

import pytest

np = pytest.importorskip("numpy")


def load_c():
    import sys
    if "tessera._C" in sys.modules:  # already imported through the package: never load a second copy
        return sys.modules["tessera._C"]
    spec = importlib.util.find_spec("tessera")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("tessera package not on the path")
    folder = pathlib.Path(list(spec.submodule_search_locations)[0])
    candidates = sorted(folder.glob("_C*.so"))
    if not candidates:
        pytest.skip("tessera._C not built")
    module_spec = importlib.util.spec_from_file_location("tessera._C", candidates[0])
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


C = load_c()


def test_tma_aligned_size_and_errors():
    assert C.get_tma_aligned_size(4097, 4) == 4100
    assert C.get_tma_aligned_size(7, 1) == 16
    with pytest.raises(ValueError, match="element_size.*divisor of 16.*got 3"):
        C.get_tma_aligned_size(7, 3)


def test_cpu_tensor_is_a_value_error_naming_the_argument():
    sf = np.ones((8, 4), dtype=np.float32)
    out = np.ones((4, 8), dtype=np.float32).T
    with pytest.raises(ValueError, match="argument 'sf': expected a CUDA tensor, got a tensor on cpu"):
        C.transpose_sf_to_mn_major(sf, out)


def test_wrong_dtype_is_a_type_error():
    sf = np.ones((8, 4), dtype=np.int32)
    with pytest.raises(TypeError, match="expected dtype float32, got int32"):
        C.plan_mn_major_tma_aligned(sf)


def test_non_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="argument 'sf'"):
        C.plan_mn_major_tma_aligned("not a tensor")


def test_plan_reports_layout_without_a_gpu():
    sf = np.ones((4097, 57), dtype=np.float32)
    pass_through, shape, strides = C.plan_mn_major_tma_aligned(sf)
    assert not pass_through and shape == (4097, 57) and strides == (1, 4100)
    mn_major = np.ones((57, 4100), dtype=np.float32).T[:4097]
    assert C.plan_mn_major_tma_aligned(mn_major)[0]


@pytest.mark.parametrize("shape,strides", [((4096, 1), (1, 4096)), ((4097, 1), (1, 4100)), ((1, 56), (1, 4)),
                                           ((3, 4097, 1), (4100, 1, 4100))])
def test_single_column_or_row_still_gets_the_aligned_strides(shape, strides):
    # A contiguous [MN, 1] has strides (1, 1): usable by a kernel, but DeepGEMM's contract returns a new tensor with
    # the TMA-aligned column stride (its test_layout.py checks the strides), so the plan is not a pass-through.
    pass_through, planned_shape, planned_strides = C.plan_mn_major_tma_aligned(np.ones(shape, dtype=np.float32))
    assert not pass_through and planned_shape == shape and planned_strides == strides


def test_system_info_without_a_driver_does_not_crash():
    info = C.system_info()
    assert isinstance(info["driver_loaded"], bool)
    if not info["driver_loaded"]:
        assert "no CUDA" in info["driver_error"] or "CUDA driver" in info["driver_error"]
    assert info["nvrtc"]


def test_grouped_config_query_checks_its_arguments_before_the_driver():
    C = load_c()
    with pytest.raises(ValueError, match="argument 'kind'.*'contiguous'.*got 'dense'"):
        C.fp8_grouped_gemm_config("dense", 4096, 4096, 7168, 4, 0, 0)
    with pytest.raises(ValueError, match="expected positive m, n, k, groups"):
        C.fp8_grouped_gemm_config("masked", 0, 4096, 7168, 4, 0, 0)
    with pytest.raises(ValueError, match="argument 'k': expected K > 0 and a multiple of 16.*got K = 3000"):
        C.fp8_grouped_gemm_config("masked", 4096, 4096, 3000, 4, 0, 0)
    with pytest.raises(ValueError, match="argument 'n': expected N > 0 and a multiple of 8.*got N = 3900"):
        C.fp8_grouped_gemm_config("contiguous", 4096, 3900, 7168, 4, 0, 0)


def test_dense_config_query_refuses_shapes_the_gemm_refuses_before_the_driver():
    """A K or N the GEMM cannot take is an error naming the argument, not an NVRTC failure of a kernel never launched."""
    C = load_c()
    with pytest.raises(ValueError, match="argument 'k': expected K > 0 and a multiple of 16.*got K = 3000"):
        C.fp8_gemm_config(4000, 3896, 3000, 0, 0)
    with pytest.raises(ValueError, match="argument 'n': expected N > 0 and a multiple of 8.*got N = 3900"):
        C.fp8_gemm_config(4000, 3900, 2992, 0, 0)
    with pytest.raises(ValueError, match="argument 'n': expected N > 0 and a multiple of 4.*got N = 3902"):
        C.fp8_gemm_config(4000, 3902, 2992, 1, 0)
