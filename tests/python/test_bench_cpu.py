"""bench/run.py pieces that need no GPU (the module imports without torch)."""
import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def run():
    spec = importlib.util.spec_from_file_location("bench_run", os.path.join(HERE, "..", "..", "bench", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_canary_steady_within_tolerance(run):
    assert run.canary_verdict([1500.0, 1540.0]) is None  # 2.7 % apart
    assert run.canary_verdict([1500.0]) is None          # a suite that stopped early: nothing to compare
    assert run.canary_verdict([]) is None


def test_canary_flags_a_speed_change_in_either_direction(run):
    slower = run.canary_verdict([1500.0, 3000.0])
    assert slower is not None and "1500 -> 3000" in slower and "100%" in slower and "suspect" in slower
    faster = run.canary_verdict([1600.0, 1500.0], tolerance=0.05)
    assert faster is not None and "7%" in faster
    assert run.canary_verdict([1600.0, 1500.0], tolerance=0.10) is None


def test_flush_kind_picks_memset_or_read(run, monkeypatch):
    calls = []

    class Buffer:  # stands in for the flush tensor: records which operation the flush ran
        def zero_(self):
            calls.append("memset")

        def sum(self):
            calls.append("read")

    monkeypatch.setattr(run, "_flush", Buffer())
    monkeypatch.setattr(run, "FLUSH_KIND", "memset")
    run.flush_l2()
    monkeypatch.setattr(run, "FLUSH_KIND", "read")
    run.flush_l2()
    assert calls == ["memset", "read"]
