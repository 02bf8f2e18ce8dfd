"""bench/ pieces that need no GPU (the modules import without torch): the timer's call splitting, the canary, the
row measurement with stand-in timers (interleaving, ratios live or recorded, statuses), the summaries, compare.py."""
import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH)

import compare  # noqa: E402
import report  # noqa: E402
import rows  # noqa: E402
import timing  # noqa: E402


def test_canary_steady_within_tolerance():
    assert timing.canary_verdict([1500.0, 1540.0]) is None  # 2.7 % apart
    assert timing.canary_verdict([1500.0]) is None
    assert timing.canary_verdict([]) is None


def test_canary_flags_a_speed_change_in_either_direction():
    slower = timing.canary_verdict([1500.0, 3000.0])
    assert slower is not None and "1500 -> 3000" in slower and "100%" in slower and "suspect" in slower
    assert timing.canary_verdict([1600.0, 1500.0], tolerance=0.05) is not None
    assert timing.canary_verdict([1600.0, 1500.0], tolerance=0.10) is None


def event(name, us):
    return SimpleNamespace(name=name, time_range=SimpleNamespace(elapsed_us=lambda: us))


def test_split_calls_sums_every_activity_between_flushes():
    # a flush split in two memsets, then a transpose and a GEMM: one call of 3 + 10 µs
    events = [event("memset", 50), event("memset", 50), event("transpose", 3), event("gemm", 10),
              event("memset", 100), event("gemm", 12)]
    assert timing.split_calls(events, {"memset"}) == [13.0, 12.0]
    assert timing.split_calls([event("gemm", 5)], {"memset"}) == []  # nothing before the first flush counts


def test_timer_rejects_unknown_protocols():
    with pytest.raises(ValueError, match="timer: expected kineto, events or sustained, got 'fast'"):
        timing.Timer("fast")
    with pytest.raises(ValueError, match="flush kind: expected memset or read"):
        timing.Timer(flush_kind="write")


class FakeTimer:
    """Returns `us[name]` for every sample and logs the order in which the calls were timed."""

    def __init__(self, us):
        self.us, self.order = us, []

    def samples(self, fn, reps):
        name = fn()
        self.order.append(name)
        if isinstance(self.us[name], Exception):
            raise self.us[name]
        return [self.us[name]] * reps


def make_row(names, baselines=(), recorded=None):
    return rows.Row("r", {}, flops=2e12, nbytes=1e9, calls={n: (lambda n=n: n) for n in names},
                    baselines={b: (lambda b=b: b) for b in baselines}, recorded_us=recorded)


def test_measure_interleaves_and_takes_the_live_ratio(monkeypatch):
    timer = FakeTimer({"tessera": 90.0, "deep_gemm": 100.0, "cublas": 120.0})
    row = make_row(["tessera", "deep_gemm"], ["cublas"], recorded=50.0)
    rows.measure(row, timer, reps=30)
    assert timer.order == ["tessera", "deep_gemm", "cublas", "cublas", "deep_gemm", "tessera"]
    r = row.result
    assert r["peer"] == "live" and r["ours_over_peer"] == pytest.approx(0.9)  # the recorded 50 µs is not used
    assert r["ours_over_cublas"] == pytest.approx(0.75)
    assert r["tflops"] == pytest.approx(2e12 / 90.0 / 1e6)


def test_measure_without_the_peer_labels_the_recorded_ratio():
    row = make_row(["tessera"], recorded=100.0)
    rows.measure(row, FakeTimer({"tessera": 80.0}), reps=10)
    assert row.result["peer"] == "recorded, not live" and row.result["ours_over_peer"] == pytest.approx(0.8)


def test_measure_reports_statuses_and_never_raises(monkeypatch):
    fake_torch = SimpleNamespace(cuda=SimpleNamespace(synchronize=lambda: None))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    timer = FakeTimer({"tessera": NotImplementedError("no"), "deep_gemm": 100.0, "cublas": ValueError("layout"),
                       "other": KeyError("x")})
    row = make_row(["tessera", "deep_gemm"], ["cublas", "other"])
    rows.measure(row, timer, reps=10)
    r = row.result
    assert (r["tessera_status"], r["cublas_status"], r["other_status"]) == ("unavailable", "unsupported", "error")
    assert r["tessera_us"] is None and r["ours_over_peer"] is None and r["deep_gemm_us"] == 100.0
    assert timer.order.count("tessera") == 1  # a failed library is not timed again in the second pass


def test_summaries_count_rows_slower_than_the_peer():
    members = []
    for ours, peer in ((90.0, 100.0), (110.0, 100.0), (100.0, 100.0)):
        row = make_row(["tessera", "deep_gemm"], ["cublas"])
        rows.measure(row, FakeTimer({"tessera": ours, "deep_gemm": peer, "cublas": 100.0}), reps=10)
        row.bucket = "M=1"
        members.append(row)
    (s,) = report.summaries(members)
    assert s["rows"] == 3 and s["rows_slower_than_peer"] == 1 and s["peer"] == "live"
    assert s["ours_over_peer"] == pytest.approx((0.9 * 1.1 * 1.0) ** (1 / 3))


def test_compare_divides_b_by_a_with_the_peer_as_control(tmp_path):
    files = []
    for name, ours, peer in (("a", [100.0, 200.0], [100.0, 100.0]), ("b", [90.0, 220.0], [100.0, 101.0])):
        path = tmp_path / f"{name}.jsonl"
        with open(path, "w") as f:
            for shape, o, p in zip(("x", "y"), ours, peer):
                f.write(json.dumps({"suite": "s", "shape": shape, "tessera_us": o, "deep_gemm_us": p}) + "\n")
            f.write(json.dumps({"suite": "s", "summary": {}}) + "\n")
        files.append(str(path))
    table = compare.compare(compare.load(files[0]), compare.load(files[1]))
    assert [(r[0], round(r[3], 3)) for r in table["s"]] == [("x", 0.9), ("y", 1.1)]
    out = subprocess.run([sys.executable, os.path.join(BENCH, "compare.py"), *files], capture_output=True, text=True,
                         check=True).stdout
    assert "geomean B/A: ours 0.9950, DeepGEMM (control) 1.0050" in out


def test_run_help_and_bad_arguments():
    run = os.path.join(BENCH, "run.py")
    ok = subprocess.run([sys.executable, run, "--help"], capture_output=True, text=True)
    assert ok.returncode == 0 and "fp8-masked" in ok.stdout
    bad = subprocess.run([sys.executable, run, "--reps", "3"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--reps must be at least 10" in bad.stderr


def test_compile_suite_reads_the_commands_kernel_lines(tmp_path):
    """The compile suite parses `tessera compile`'s per-kernel lines: a change of that format must fail here."""
    import suites_host
    from test_sass_cpu import find_tessera_cli
    cli = find_tessera_cli()
    if cli is None:
        pytest.skip("needs the tessera command")
    out = subprocess.run([cli, "compile", "--compiler", "nvrtc", "--fp8", "dense:128x2112x7168"], capture_output=True,
                         text=True, env=dict(os.environ, TESSERA_CACHE_DIR=str(tmp_path)), timeout=300)
    assert out.returncode == 0, out.stderr
    found = [m for m in map(suites_host.COMPILED.search, out.stdout.splitlines()) if m]
    assert len(found) == 1, out.stdout
    compiler, seconds, regs, spills, problem, spec = found[0].groups()
    assert compiler == "nvrtc" and float(seconds) > 0 and problem == "dense:128x2112x7168" and spec.startswith("fp8_gemm{")
