"""tessera.testing: metrics, decorators, and the benchmark helpers (CUDA parts skip without a GPU)."""
import os
import types

import pytest

torch = pytest.importorskip('torch')

import tessera.testing as testing  # noqa: E402  (module import: keeps pytest off `test_filter`)



def needs_cuda(fn):
    # `gpu` is the marker tests/run_pytest.py selects on; skipif covers a plain pytest run.
    skip = pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA device')
    return pytest.mark.gpu(skip(fn))


def test_namespace_shape():
    # As in DeepGEMM, the star-import makes `testing.bench` the function, not the sub-module.
    assert isinstance(testing.bench, types.FunctionType)
    assert isinstance(testing.numeric, types.ModuleType) and isinstance(testing.utils, types.ModuleType)
    assert testing.calc_diff is testing.numeric.calc_diff
    for name in ('bench_kineto', 'count_bytes', 'assert_bitwise_equal', 'empty_suppress',
                 'suppress_stdout_stderr', 'get_arch_major', 'test_filter', 'ignore_env'):
        assert callable(getattr(testing, name)), name


def test_calc_diff_known_values():
    x = torch.randn(1000)
    assert abs(float(testing.calc_diff(x, x))) < 1e-12
    assert float(testing.calc_diff(x, -x)) == pytest.approx(2.0, abs=1e-12)
    assert float(testing.calc_diff(x, torch.zeros(1000))) == pytest.approx(1.0, abs=1e-12)
    # 1 - 2*1 / (2 + 1) = 1/3
    d = testing.calc_diff(torch.tensor([1.0, 1.0]), torch.tensor([1.0, 0.0]))
    assert isinstance(d, torch.Tensor) and d.dtype == torch.float64 and d.dim() == 0
    assert float(d) == pytest.approx(1 / 3, abs=1e-15)
    # Computed in float64 even for low-precision inputs.
    b = torch.tensor([3.0, 4.0], dtype=torch.bfloat16)
    assert float(testing.calc_diff(b, b * 2)) == pytest.approx(1 - 2 * 50 / 125, abs=1e-15)


def test_calc_diff_all_zero_and_nan():
    z = testing.calc_diff(torch.zeros(4, 4), torch.zeros(4, 4))
    assert type(z) is float and z == 0.0
    nan = testing.calc_diff(torch.tensor([1.0, float('nan')]), torch.tensor([1.0, 2.0]))
    assert torch.isnan(nan)


def test_count_bytes():
    tensors = (torch.empty(3, 4), None, [torch.empty(10, dtype=torch.bfloat16),
               (torch.empty(5, dtype=torch.int8), torch.empty(2, 2, dtype=torch.float8_e4m3fn))])
    assert testing.count_bytes(*tensors) == 48 + 20 + 5 + 4
    assert testing.count_bytes() == 0 and testing.count_bytes(None) == 0


def test_assert_bitwise_equal():
    x = torch.randn(4, 5)
    testing.assert_bitwise_equal(x, x.clone())
    nan = torch.tensor([float('nan'), 1.0])
    testing.assert_bitwise_equal(nan, nan.clone())  # same bits, even though nan != nan

    y = x.clone()
    y[2, 3] = y[2, 3].item() + 1
    with pytest.raises(AssertionError, match=r'\(2, 3\)'):
        testing.assert_bitwise_equal(x, y, label='d')
    with pytest.raises(AssertionError):
        testing.assert_bitwise_equal(torch.tensor([0.0]), torch.tensor([-0.0]))
    with pytest.raises(AssertionError, match='dtype'):
        testing.assert_bitwise_equal(x, x.double())
    with pytest.raises(AssertionError, match='shape'):
        testing.assert_bitwise_equal(x, x.t())


@pytest.mark.parametrize('var', ['DG_USE_NVIDIA_TOOLS', 'TESSERA_USE_NVIDIA_TOOLS'])
def test_bench_kineto_nvidia_tools_short_circuit(monkeypatch, var):
    def fn():
        raise RuntimeError('must not be called')
    monkeypatch.setenv(var, '1')
    assert testing.bench_kineto(fn, 'gemm') == 1
    assert testing.bench_kineto(fn, ('gemm', 'clean_logits')) == (1, 1)


def test_suppress_stdout_stderr(capfd):
    with testing.suppress_stdout_stderr():
        print('hidden-python')
        os.write(1, b'hidden-fd1\n')
        os.write(2, b'hidden-fd2\n')
    with testing.empty_suppress():
        print('shown')
    out, err = capfd.readouterr()
    assert 'hidden' not in out + err
    assert 'shown' in out


def test_test_filter(capsys):
    calls = []

    @testing.test_filter(lambda: False)
    def skipped():
        calls.append('skipped')

    @testing.test_filter(lambda: True)
    def kept(v):
        calls.append('kept')
        return v

    assert skipped() is None
    assert kept(7) == 7
    assert calls == ['kept']
    out = capsys.readouterr().out
    assert 'skipped:' in out and 'Filtered by' in out


def test_ignore_env(monkeypatch):
    monkeypatch.setenv('TESSERA_TEST_IGNORED', 'x')

    @testing.ignore_env('TESSERA_TEST_IGNORED', lambda: True)
    def removed():
        return os.environ.get('TESSERA_TEST_IGNORED')

    @testing.ignore_env('TESSERA_TEST_IGNORED', lambda: False)
    def kept():
        return os.environ.get('TESSERA_TEST_IGNORED')

    assert removed() is None
    assert os.environ['TESSERA_TEST_IGNORED'] == 'x'  # restored afterwards
    assert kept() == 'x'


@needs_cuda
def test_get_arch_major():
    assert testing.get_arch_major() == torch.cuda.get_device_capability()[0]


@needs_cuda
def test_bench_events():
    a = torch.randn(4096, 4096, device='cuda', dtype=torch.bfloat16)
    t = testing.bench(lambda: a @ a)
    # 137 GFLOP at <= 1 PFLOP/s takes >= 0.1 ms; anything over 100 ms means the timer is wrong.
    assert 1e-4 < t < 0.1
    assert 1e-4 < testing.bench(lambda: a @ a, high_precision=True) < 0.1


@needs_cuda
def test_bench_kineto_matches_by_substring():
    x = torch.randn(1 << 24, device='cuda')

    def mul():
        x.mul_(1.0)

    # Only one elementwise kernel per call when the flush is off.
    t = testing.bench_kineto(mul, 'elementwise', num_tests=10, flush_l2=False)
    assert isinstance(t, float) and 1e-6 < t < 1e-2
    # With the L2 flush on, its fill kernel is elementwise too: name the functor instead.
    t, missing = testing.bench_kineto(mul, ('MulFunctor', 'no_such_kernel_name'), num_tests=10)
    assert 1e-6 < t < 1e-2 and missing == 0

    def mul_and_add():
        x.mul_(1.0)
        x.add_(1.0)

    # Two distinct kernels match: an assertion unless several kernels are allowed.
    with pytest.raises(AssertionError):
        testing.bench_kineto(mul_and_add, 'elementwise', num_tests=5, flush_l2=False)
    t = testing.bench_kineto(mul_and_add, 'elementwise', num_tests=5, flush_l2=False,
                             with_multiple_kernels=True)
    assert 1e-6 < t < 1e-2
