"""bench/ pieces that need no GPU (the modules import without torch): the timer's call splitting, the canary, the
row measurement with stand-in timers (interleaving, ratios live or recorded, statuses), the summaries, compare.py; and
the suites of the other families (registration, DeepGEMM's case counts, and, with torch, a dry run on the CPU)."""
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


# ---- the suites of the BF16, einsum and indexer families: registration, and a dry run on the CPU with
# small shapes, stand-in libraries that log their calls, and the real tensor-building code.

NEW_SUITES = ("bf16-grouped", "einsum", "fp8-einsum", "hc-prenorm", "indexer", "cublaslt")


def test_new_suites_are_registered_and_in_all():
    import run
    for name in NEW_SUITES:
        assert name in run.SUITES and run.SUITES[name].needs_gpu, name
    assert set(NEW_SUITES) <= set(run.parse_args(["--suite", "all"]).suites)
    assert run.parse_args(["--suite", "indexer", "--suite", "einsum"]).suites == ["indexer", "einsum"]
    assert not set(NEW_SUITES) & set(run.FP8_SUITES)  # "fp8" still means the five FP8 GEMM suites
    out = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and all(name in out.stdout for name in NEW_SUITES), out.stdout


def test_new_suites_enumerate_deepgemms_cases():
    """Full runs hold DeepGEMM's SM90 case counts; quick runs a non-empty strict subset of them."""
    import suites_bf16 as b
    import suites_bf16_grouped as g
    import suites_einsum as e
    import suites_indexer as i
    counts = {g.contiguous_cases: 32, g.masked_cases: 32, g.kgrouped_cases: 6, e.bmk_cases: 18, e.head_cases: 20,
              e.fp8_cases: 5, e.hc_cases: 24, i.skip_cases: 4, i.mqa_cases: 192, i.paged_cases: 24,
              b.cublaslt_cases: 21}
    for cases, full in counts.items():
        every, quick = cases(False), cases(True)
        assert len(every) == full and len(set(every)) == full, cases.__name__
        assert quick and set(quick) < set(every), cases.__name__
    assert (2048, 65536) not in {(s, skv) for _, _, s, skv, *_ in i.mqa_cases(False) if s * 2 > skv}
    assert {(b, avg) for _, b, avg, _, _ in i.paged_cases(False)} == {(256, 8192), (256, 65536), (4096, 8192)}


def test_grouped_layouts_and_sizes():
    torch = pytest.importorskip("torch")
    import suites_bf16_grouped as g
    counts = [100, 0, 128, 1]
    m, ids, valid = g.contiguous_layout(counts, psum=False, device="cpu")
    assert m == 128 + 0 + 128 + 128 and ids.dtype == torch.int32 and int(valid.sum()) == sum(counts)
    assert ids[:100].eq(0).all() and ids[100:128].eq(-1).all() and ids[128:256].eq(2).all() and ids[256] == 3
    assert g.contiguous_layout(counts, psum=True, device="cpu")[1].tolist() == [100, 128, 256, 257]
    assert g.psum_ends([5, 130, 0, 7]) == [5, 258, 384, 391]  # each group starts at the next 128-row boundary
    sizes = g.group_sizes(("case",), 1000, 64, granule=128)
    assert sizes == g.group_sizes(("case",), 1000, 64, granule=128) != g.group_sizes(("other",), 1000, 64, 128)
    assert all(s % 128 == 0 and 640 <= s <= 1408 for s in sizes)


def test_indexer_ranges_and_paged_layout():
    torch = pytest.importorskip("torch")
    import suites_indexer as i
    ks, ke = i.mqa_ranges(8, 16, cp=False, device="cpu")
    assert ks.tolist() == [0] * 8 and ke.tolist() == list(range(8, 16))
    ks, ke = i.mqa_ranges(4, 24, cp=True, device="cpu")  # 6 ranks of 2 rows: halves end in ranks 2 and 9
    assert ke.tolist() == [4, 5, 18, 19] and int(ke.max()) <= 24
    ctx2d, table, blocks, max_len = i.paged_layout(7, 5, 300, 2, device="cpu")
    pages = (ctx2d[:, -1] + 63) // 64
    assert ctx2d.dtype == table.dtype == torch.int32 and table.shape == (5, int(pages.max()))
    assert blocks == int(pages.sum()) and max_len == table.shape[1] * 64 and int(ctx2d.max()) <= max_len
    assert (ctx2d[:, 0] <= ctx2d[:, 1]).all() and (ctx2d[:, -1] >= 210).all()
    used = torch.cat([table[b, :int(p)] for b, p in enumerate(pages)])
    assert sorted(used.tolist()) == list(range(blocks))  # every block of the pool used once
    kv = i.paged_kv_cache(3, 32, device="cpu", chunk=2)
    assert kv.shape == (3, 64, 1, 36) and kv.dtype == torch.uint8
    scales = kv.view(3, -1)[:, 64 * 32:].contiguous().view(torch.float32)
    values = kv.view(3, -1)[:, :64 * 32].contiguous().view(torch.float8_e4m3fn).float().view(3, 64, 32)
    assert (scales > 0).all() and values.abs().amax(-1).sub(448).abs().max() <= 32  # each token scaled to its amax


FUNCTIONS = {"bf16_gemm": ("m_grouped_bf16_gemm_nt_contiguous", "m_grouped_bf16_gemm_nn_contiguous",
                         "m_grouped_bf16_gemm_nt_masked", "k_grouped_bf16_gemm_tn_contiguous"),
           "einsum_gemm": ("einsum", "fp8_einsum"), "hc_prenorm": ("tf32_hc_prenorm_gemm",),
           "fp8_gemm": ("fp8_gemm_nt_skip_head_mid",), "mqa_logits": ("fp8_fp4_mqa_logits",),
           "paged_mqa_logits": ("get_paged_mqa_logits_metadata", "fp8_fp4_paged_mqa_logits"),
           "cublaslt": ("cublaslt_gemm_nt",)}
SMALL = {"suites_bf16": dict(NK=[(128, 256), (64, 64), (32, 96), (16, 128)]),
         "suites_bf16_grouped": dict(NK=[(128, 256)], CONTIGUOUS_GROUPS=[(2, 100), (3, 50)], MASKED_M_MAX=256,
                                     MASKED_GROUPS=[(2, 20), (3, 10)], KGROUPED=[(2, 32, 64, 200), (3, 16, 32, 128)]),
         "suites_einsum": dict(BMK_S=(3, 5), BMK_MNK=[(16, 24, 32), (8, 8, 8)], HEAD_HRD=[(2, 64, 32)], HEAD_B=(3, 4),
                               FP8_HRD=[(2, 256, 128)], HC_M=(5, 7), HC_NK=[(24, 64)]),
         "suites_indexer": dict(SKIP_M=(4, 8), SKIP_NK=[(512, 128)], MQA_S=(8,), MQA_SKV=(16, 32), MQA_H=(2,),
                                MQA_D=(32,), PAGED_B=(2, 3), PAGED_AVG=(100, 200), PAGED_H=(2, 4),
                                PAGED_POOL_TOKENS=500, PAGED_D=32)}


def fake_libraries(monkeypatch, log, without=()):
    """A stand-in tessera (package 'fake_tessera' with the functions, minus those of the modules in `without`) and
    DeepGEMM, every function logging (library, name, args, kwargs); the metadata functions return
    a schedule naming their library."""
    import types
    tessera_utils = pytest.importorskip("tessera.utils")

    def logger(lib, name):
        result = f"schedule:{lib}" if "metadata" in name else None
        return lambda *args, **kwargs: log.append((lib, name, args, kwargs)) or result

    ours = types.ModuleType("fake_tessera")
    ours.__path__ = []
    ours.utils, ours.get_num_sms = tessera_utils, lambda: 132
    ours.fp8_gemm_nt = logger("tessera", "fp8_gemm_nt")
    ours._C = SimpleNamespace(clean_logits=logger("tessera", "clean_logits"),
                              mqa_logits_row_stride=lambda s_kv, max_seqlen_k, bf16: s_kv + 256)
    monkeypatch.setitem(sys.modules, "fake_tessera", ours)
    for module, names in FUNCTIONS.items():
        if module not in without:
            for name in names:
                setattr(ours, name, logger("tessera", name))
    peer = SimpleNamespace(get_num_sms=lambda: 132,
                           **{n: logger("deep_gemm", n) for names in FUNCTIONS.values() for n in names})
    return ours, peer


def check_contract(name, args, kw):
    """The shapes DeepGEMM's function `name` requires of its arguments (shared/reference/api-contract.md)."""
    import torch
    sf_cols = lambda k: -(-k // 128)  # noqa: E731
    if name.startswith("m_grouped_bf16_gemm_n") and name.endswith("contiguous"):
        a, b, d, layout = args
        b = b if "_nt_" in name else b.mT  # [G, N, K]
        assert a.shape[1] == b.shape[2] and d.shape == (a.shape[0], b.shape[1]) and layout.dtype == torch.int32
        if kw["use_psum_layout"]:
            assert layout.numel() == b.shape[0] and int(layout.max()) <= a.shape[0]
        else:
            assert layout.numel() == a.shape[0] and -1 <= int(layout.min()) and int(layout.max()) < b.shape[0]
    elif name == "m_grouped_bf16_gemm_nt_masked":
        a, b, d, masked_m, expected = args
        assert d.shape == (*a.shape[:2], b.shape[1]) and a.shape[0] == b.shape[0] == masked_m.numel() and expected > 0
        assert a.shape[2] == b.shape[2] and int(masked_m.max()) <= a.shape[1]
    elif name == "k_grouped_bf16_gemm_tn_contiguous":
        a, b, d, ks, layout = args
        assert sum(ks) == a.shape[0] == b.shape[0] and d.shape == (len(ks), a.shape[1], b.shape[1])
        assert kw["c"] is d and layout.tolist() == ks and all(k % 128 == 0 for k in ks)
    elif name == "cublaslt_gemm_nt":
        a, b, d = args
        assert a.dtype == b.dtype == d.dtype == torch.bfloat16 and a.shape[1] == b.shape[1]
        assert d.shape == (a.shape[0], b.shape[0]) and kw.get("c") is None
    elif name == "einsum":
        expr, a, b, d = args
        assert torch.einsum(expr, a.float(), b.float()).shape == d.shape
        assert kw.get("c") is None or kw["c"] is d
    elif name == "fp8_einsum":
        expr, (x, sx), (y, sy), z = args
        assert torch.einsum(expr, x.float(), y.float()).shape == z.shape
        assert sx.shape == (*x.shape[:2], sf_cols(x.shape[2])) and sx.dtype == sy.dtype == torch.float32
        assert sy.shape == (y.shape[0], sf_cols(y.shape[1]), sf_cols(y.shape[2]))
    elif name == "tf32_hc_prenorm_gemm":
        a, b, d, sqr_sum = args
        lead = () if kw["num_splits"] is None else (kw["num_splits"],)
        assert (a.dtype, b.dtype) == (torch.bfloat16, torch.float32) and a.shape[1] == b.shape[1]
        assert d.shape == (*lead, a.shape[0], b.shape[0]) and sqr_sum.shape == (*lead, a.shape[0])
    elif name == "fp8_gemm_nt_skip_head_mid":
        (a, sfa), (b, sfb), d, (left, mid, right) = args
        assert d.shape == (a.shape[0], b.shape[0] // (left + right) * (left + mid + right)) and a.shape[1] == b.shape[1]
        assert sfa.shape == (a.shape[0], sf_cols(a.shape[1]))
        assert sfb.shape == (sf_cols(b.shape[0]), sf_cols(b.shape[1]))
    elif name == "fp8_fp4_mqa_logits":
        (q, q_sf), (kv, kv_sf), weights, ks, ke = args
        assert q_sf is None and q.shape[2] == kv.shape[1] and kv_sf.shape == (kv.shape[0],)
        assert weights.shape == q.shape[:2] and ks.shape == ke.shape == (q.shape[0],)
        assert (0 <= ks).all() and (ks <= ke).all() and (ke <= kv.shape[0]).all()
        assert kw["clean_logits"] != (kw["max_seqlen_k"] > 0)
    elif name == "fp8_fp4_paged_mqa_logits":
        (q, q_sf), kv, weights, context_lens, table, _, max_len = args
        assert q_sf is None and kv.dtype == torch.uint8 and kv.shape[1:] == (64, 1, q.shape[3] + 4)
        assert weights.shape == (q.shape[0] * q.shape[1], q.shape[2]) and context_lens.shape == q.shape[:2]
        assert table.shape[0] == q.shape[0] and int(table.max()) < kv.shape[0] and int(context_lens.max()) <= max_len
    else:
        raise AssertionError(f"no contract check for {name}")


def same_inputs(ours, peer):
    """The two calls got the very same tensors (schedules excepted: each library's own)."""
    if isinstance(ours, (tuple, list)):
        return len(ours) == len(peer) and all(same_inputs(a, b) for a, b in zip(ours, peer))
    if isinstance(ours, str) and ours.startswith("schedule:"):
        return (ours, peer) == ("schedule:tessera", "schedule:deep_gemm")
    return ours is peer or (not hasattr(ours, "shape") and ours == peer)


@pytest.mark.parametrize("quick", [False, True])
@pytest.mark.parametrize("suite_name", NEW_SUITES)
def test_new_suite_dry_run_calls_both_libraries_on_the_same_tensors(monkeypatch, suite_name, quick):
    pytest.importorskip("torch")
    import run
    import suites_bf16
    monkeypatch.setattr(suites_bf16, "DEVICE", "cpu")
    for module, values in SMALL.items():
        for key, value in values.items():
            monkeypatch.setattr(sys.modules[module], key, value)
    log = []
    ours, peer = fake_libraries(monkeypatch, log)
    seen = set()
    for row in run.SUITES[suite_name].rows(rows.Context(ours, peer, quick)):
        assert set(row.calls) == {"tessera", "deep_gemm"} and row.flops > 0 and row.nbytes > 0, row.label
        for _ in range(2):  # a second call reuses what the first set up (the paged schedules)
            for call in row.calls.values():
                call()
        (_, our_name, our_args, our_kw), (_, peer_name, peer_args, peer_kw) = [e for e in log if "metadata" not in
                                                                               e[1]][-2:]
        assert our_name == peer_name, (our_name, peer_name)
        assert same_inputs(our_args, peer_args) and same_inputs(tuple(our_kw.items()), tuple(peer_kw.items())), \
            row.label
        seen.add(peer_name)
        check_contract(peer_name, peer_args, peer_kw)
        if "paged" in peer_name:
            assert [e[0] for e in log if "metadata" in e[1]] == ["tessera", "deep_gemm"]  # once each, then reused
        for call in row.baselines.values():
            call()
        log.clear()
    assert seen == DRY_RUN_NAMES[suite_name]


DRY_RUN_NAMES = {"bf16-grouped": set(FUNCTIONS["bf16_gemm"]), "einsum": {"einsum"}, "fp8-einsum": {"fp8_einsum"},
                 "hc-prenorm": {"tf32_hc_prenorm_gemm"},
                 "indexer": {"fp8_gemm_nt_skip_head_mid", "fp8_fp4_mqa_logits", "fp8_fp4_paged_mqa_logits"},
                 "cublaslt": {"cublaslt_gemm_nt"}}


def test_clean_rows_time_the_clean_kernel_beside_a_copy_of_its_bytes(monkeypatch):
    torch = pytest.importorskip("torch")
    import report
    import run
    import suites_bf16
    monkeypatch.setattr(suites_bf16, "DEVICE", "cpu")
    for key, value in SMALL["suites_indexer"].items():
        monkeypatch.setattr(sys.modules["suites_indexer"], key, value)
    log = []
    ours, peer = fake_libraries(monkeypatch, log)
    clean_rows = 0
    for row in run.SUITES["indexer"].rows(rows.Context(ours, peer, False)):
        if not row.label.startswith("mqa"):
            continue
        if "compressed" in row.label:
            assert "clean" not in row.baselines, row.label
            continue
        clean_rows += 1
        assert set(row.baselines) == {"clean", "clean_copy"}, row.label
        row.baselines["clean"]()
        (lib, name, args, kw), = [e for e in log if e[1] == "clean_logits"]
        logits, ks, ke = args
        assert lib == "tessera" and logits.shape == (row.shape["s"], row.shape["s_kv"])
        assert logits.stride(0) == row.shape["s_kv"] + 256 and ks.shape == ke.shape == (row.shape["s"],)
        log.clear()
        row.result.update({"tessera_us": 10.0, "clean_us": 4.0, "clean_copy_us": 3.0})
        assert report.derived(row)["clean_bw_frac"] == pytest.approx(0.75)
    assert clean_rows > 0


def test_a_function_a_library_lacks_reports_unavailable(monkeypatch):
    import suites_bf16
    log = []
    ours, peer = fake_libraries(monkeypatch, log, without=("mqa_logits",))
    ctx = rows.Context(ours, peer, True)
    calls = suites_bf16.paired_calls(ctx, "fp8_fp4_mqa_logits", lambda fn: fn(1, 2))
    with pytest.raises(AttributeError, match="tessera.fp8_fp4_mqa_logits: not available"):
        calls["tessera"]()
    calls["deep_gemm"]()
    assert log == [("deep_gemm", "fp8_fp4_mqa_logits", (1, 2), {})]
    timer = SimpleNamespace(samples=lambda fn, reps: [fn()])
    assert rows.try_samples(timer, "tessera", calls["tessera"], 10) == (None, "unavailable")
    no_peer = suites_bf16.paired_calls(rows.Context(ours, SimpleNamespace(), True), "einsum", lambda fn: fn())
    assert rows.try_samples(timer, "deep_gemm", no_peer["deep_gemm"], 10) == (None, "unavailable")


def test_report_shows_every_baseline_and_the_copy_bandwidth_share(capsys):
    copy_row = rows.Row("paged", {"b": 256}, nbytes=1e9, calls={"tessera": lambda: "tessera"},
                        baselines={"hbm_copy": lambda: "hbm_copy"})
    gemm_row = make_row(["tessera"], ["fp8_gemm_nt"])
    rows.measure(copy_row, FakeTimer({"tessera": 125.0, "hbm_copy": 100.0}), reps=10)
    rows.measure(gemm_row, FakeTimer({"tessera": 90.0, "fp8_gemm_nt": 100.0}), reps=10)
    report.print_table("indexer", [gemm_row, copy_row])
    out = capsys.readouterr().out
    assert all(h in out for h in ("fp8_gemm_nt_us", "ours/fp8_gemm_nt", "hbm_copy_us", "ours/hbm_copy", "copy_bw"))
    assert "80%" in out and "1.25" in out
    line = report.json_row(copy_row, {"commit": "x"})
    assert line["copy_bw_frac"] == pytest.approx(0.8) and line["ours_over_hbm_copy"] == pytest.approx(1.25)
    assert line["hbm_copy_us"] == 100.0 and line["b"] == 256 and json.loads(json.dumps(line)) == line
    assert "copy_bw_frac" not in report.json_row(gemm_row, {})
    assert "80% of copy bandwidth" in report.row_line(copy_row)
