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


def test_events_and_sustained_timers(run, monkeypatch):
    """--timer events: its CUDA events are its own (it once named two that no code defined, so the option crashed);
    --timer sustained: a back-to-back loop without flushes."""
    log = []

    class FakeEvent:  # a CUDA event whose elapsed time is the number of calls recorded between the two
        def __init__(self, enable_timing=False):
            self.at = None

        def record(self):
            self.at = len(log)

        def synchronize(self):
            pass

        def elapsed_time(self, other):
            return (other.at - self.at) / 1e3  # ms

    class Cuda:
        Event = FakeEvent

    class Torch:
        cuda = Cuda

    monkeypatch.setattr(run, "torch", Torch)
    monkeypatch.setattr(run, "flush_l2", lambda: log.append("flush"))
    assert run.time_us_events(lambda: log.append("call"), 5) == 1.0  # 1 call between the events = 1 "µs"
    assert log == ["flush", "call"] * 5
    # --timer sustained: back to back, no flush, at least `reps` calls (whole batches of 10), the mean per call
    log.clear()
    monkeypatch.setattr(run, "SUSTAINED_SECONDS", 0.0)
    monkeypatch.setattr(run, "SUSTAINED_WARMUP_SECONDS", 0.0)
    monkeypatch.setattr(run, "TIMER", "sustained")
    assert run.time_us(lambda: log.append("call"), 25, warmup=0) == 1.0
    assert log == ["call"] * 30


def test_calibration_factors_compare_with_the_file(run):
    file_gemm_us = 2 * 8192 ** 3 / (run.PEAK_TFLOPS * 1e6)
    file_copy_us = 2 * run.CAL_COPY_BYTES / (run.PEAK_TBPS * 1e6)
    f = run.calibration_factors(file_gemm_us * 1.05, file_copy_us * 0.98)
    assert abs(f["compute"] - 1.05) < 1e-9 and abs(f["memory"] - 0.98) < 1e-9


def test_calibrated_dg_uses_the_rows_bound(run):
    factors = {"compute": 1.05, "memory": 0.98}
    # masked g32 e192 6144x7168 (compute-bound) and g6 e20 4096x2048 (the active experts' weights: memory-bound)
    dg, bound = run.calibrated_dg_us(540.4, 2 * 6221 * 6144 * 7168, 6221 * 7168 + 32 * 6144 * 7168, factors)
    assert bound == "compute" and abs(dg - 540.4 * 1.05) < 1e-9
    dg, bound = run.calibrated_dg_us(23.7, 2 * 118 * 4096 * 2048, 118 * 2048 + 6 * 4096 * 2048, factors)
    assert bound == "memory" and abs(dg - 23.7 * 0.98) < 1e-9


def test_suite_ab_table_divides_the_variant_by_the_tree_runs_mean(tmp_path):
    """dev/suite_ab.py, the table of dev/suite_ab.sh: rows keep their order, a row the variant lacks has no ratio."""
    import json
    import subprocess
    import sys
    runs = {"tree": [100.0, 400.0, 50.0], "variant": [90.0, 420.0, None], "tree2": [110.0, 400.0, 50.0]}
    path = tmp_path / "ab.jsonl"
    with open(path, "w") as f:
        for run, times in runs.items():
            for shape, us in zip(["b", "a", "c"], times):
                f.write(json.dumps({"ab_run": run.rstrip("2"), "suite": "s", "shape": shape, "ours_us": us}) + "\n")
    out = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "dev", "suite_ab.py"), str(path)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "== s"
    assert [line.split()[0] for line in out[2:5]] == ["b", "a", "c"]
    assert out[2].split()[-1] == "0.857" and out[3].split()[-1] == "1.050"  # 90 / 105, 420 / 400
    assert out[4].split()[1:] == ["50.0", "-", "50.0", "-"]  # c: no variant time, no ratio
    assert out[5].strip() == "geomean variant / tree: variant 0.9487 (n=2)"


def test_suite_ab_table_has_a_column_and_a_ratio_per_variant(tmp_path):
    """dev/suite_ab.py with two variants labelled by dev/suite_ab.sh (tree, a, b, tree2)."""
    import json
    import subprocess
    import sys
    runs = {"tree": 100.0, "a": 90.0, "b": 110.0, "tree2": 100.0}
    path = tmp_path / "ab.jsonl"
    with open(path, "w") as f:
        for run, us in runs.items():
            f.write(json.dumps({"ab_run": run, "suite": "s", "shape": "x", "ours_us": us}) + "\n")
    out = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "dev", "suite_ab.py"), str(path)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[1].split() == ["shape", "tree", "a", "b", "tree2", "a", "b"]
    assert out[2].split() == ["x", "100.0", "90.0", "110.0", "100.0", "0.900", "1.100"]
    assert out[3].strip() == "geomean variant / tree: a 0.9000 (n=1), b 1.1000 (n=1)"
