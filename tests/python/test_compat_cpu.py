"""DeepGEMM compatibility without a GPU: the install_as_deep_gemm opt-in, a namespace without stray names, argument
errors that are also RuntimeError (DeepGEMM's kind), and a clear message for a tensor where a pair belongs."""
import sys

import pytest

torch = pytest.importorskip("torch")
import tessera  # noqa: E402

DEEP_GEMM_MODULES = ["deep_gemm", "deep_gemm.testing", "deep_gemm.utils", "deep_gemm.utils.layout",
                     "deep_gemm.utils.math", "deep_gemm.utils.dist", "deep_gemm.legacy"]


@pytest.fixture
def clean_modules():
    saved = {name: sys.modules.pop(name) for name in list(sys.modules) if name.split(".")[0] == "deep_gemm"}
    yield
    for name in [n for n in sys.modules if n.split(".")[0] == "deep_gemm"]:
        del sys.modules[name]
    sys.modules.update(saved)


def test_install_as_deep_gemm_resolves_every_submodule(clean_modules):
    assert tessera.install_as_deep_gemm() is tessera
    import deep_gemm
    import deep_gemm.utils.layout
    from deep_gemm.legacy import m_grouped_bf16_gemm_nt_contiguous_tl
    from deep_gemm.testing import bench_kineto, calc_diff, count_bytes
    from deep_gemm.utils import align, get_mn_major_tma_aligned_tensor, per_token_cast_to_fp8
    from deep_gemm.utils.dist import init_dist
    from deep_gemm.utils.math import per_block_cast_to_fp8
    assert deep_gemm is tessera and deep_gemm.utils.layout is tessera.layout
    assert calc_diff is tessera.testing.calc_diff and per_block_cast_to_fp8 is tessera.utils.per_block_cast_to_fp8
    assert all(callable(f) for f in (bench_kineto, count_bytes, align, get_mn_major_tma_aligned_tensor,
                                     per_token_cast_to_fp8, init_dist))
    assert m_grouped_bf16_gemm_nt_contiguous_tl is tessera.legacy.m_grouped_bf16_gemm_nt_contiguous_tl
    assert all(name in sys.modules for name in DEEP_GEMM_MODULES)
    assert tessera.install_as_deep_gemm() is tessera  # twice is fine


def test_install_does_not_shadow_another_deep_gemm_unasked(clean_modules):
    other = type(sys)("deep_gemm")
    sys.modules["deep_gemm"] = other
    with pytest.raises(RuntimeError, match="a module 'deep_gemm' is already imported.*replace=True"):
        tessera.install_as_deep_gemm()
    assert sys.modules["deep_gemm"] is other
    tessera.install_as_deep_gemm(replace=True)
    assert sys.modules["deep_gemm"] is tessera


def test_no_stray_names_in_the_namespace():
    public = {name for name in dir(tessera) if not name.startswith("_")}
    assert not public & {"torch", "math", "os", "dist", "subprocess"}, public & {"torch", "math", "os", "dist"}
    assert not set(tessera.utils.__all__) & {"torch", "math", "os", "dist", "layout"}


def test_argument_errors_are_also_runtime_errors():
    assert issubclass(tessera.InvalidArgument, ValueError) and issubclass(tessera.InvalidArgument, RuntimeError)
    assert issubclass(tessera.TypeMismatch, TypeError) and issubclass(tessera.TypeMismatch, RuntimeError)
    with pytest.raises(RuntimeError, match="set_block_size_multiple_of: argument 'new_value'"):
        tessera.set_block_size_multiple_of(0)
    for bad in ((1, 2, 3), (8, 0), True, "16"):
        with pytest.raises(tessera.InvalidArgument, match="expected a positive int or a pair"):
            tessera.set_block_size_multiple_of(bad)
    tessera.set_block_size_multiple_of(1)  # 1 lifts the constraint
    with pytest.raises(RuntimeError, match="expected dtype float32"):
        tessera.get_mn_major_tma_aligned_tensor(torch.ones(8, 4, dtype=torch.int32))


@pytest.mark.parametrize("fn", ["fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt"])
def test_a_tensor_where_a_pair_belongs_names_the_argument(fn):
    x = torch.zeros(2, 128, dtype=torch.float8_e4m3fn)  # a first dimension of 2 would unpack silently
    pair = (x, torch.ones(2, 1))
    d = torch.empty(2, 2, dtype=torch.bfloat16)
    with pytest.raises(tessera.TypeMismatch, match=r"argument 'a': expected a pair \(tensor, scale factors\), got "
                                                   r"a single tensor of shape \(2, 128\)"):
        getattr(tessera, fn)(x, pair, d)
    with pytest.raises(TypeError, match="argument 'b': expected a pair"):
        getattr(tessera, fn)(pair, 5, d)


def run_deepgemm_tests_tool(tmp_path, *args):
    """tools/deepgemm_tests.py on a stand-in test file whose functions append their names to a log."""
    import os
    import subprocess
    (tmp_path / "test_stub.py").write_text(
        "import sys\n"
        "def mark(name):\n    open('ran.txt', 'a').write(name + ' ' + ' '.join(sys.argv[1:]) + '\\n')\n"
        "def test_a():\n    mark('a')\n"
        "def test_b():\n    mark('b')\n"
        "if __name__ == '__main__':\n    test_a()\n    test_b()\n")
    tool = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "deepgemm_tests.py")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, tool, str(tmp_path), *args], env=env, capture_output=True, text=True)
    ran = (tmp_path / "ran.txt").read_text().splitlines() if (tmp_path / "ran.txt").exists() else []
    return proc, ran


@pytest.mark.parametrize("order", ["only_after_file", "only_before_file"])
def test_deepgemm_tests_tool_runs_only_the_named_functions(tmp_path, order):
    args = ["test_stub.py", "--only", "test_b"] if order == "only_after_file" else ["--only", "test_b", "test_stub.py"]
    proc, ran = run_deepgemm_tests_tool(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    assert ran == ["b "]


def test_deepgemm_tests_tool_passes_arguments_after_dashes(tmp_path):
    proc, ran = run_deepgemm_tests_tool(tmp_path, "test_stub.py", "--", "--num-processes", "2")
    assert proc.returncode == 0, proc.stderr
    assert ran == ["a --num-processes 2", "b --num-processes 2"]
    proc, _ = run_deepgemm_tests_tool(tmp_path, "test_stub.py", "--only", "test_c")
    assert proc.returncode != 0 and "no test function 'test_c'" in proc.stderr
