"""What a suite yields (Row), what it gets (Context), and how a row is measured: every library of the row timed on
the same inputs, in two interleaved passes (forward, then reverse order), each sample after the same L2 flush; the
median of all of a library's samples is its time."""
import statistics
from dataclasses import dataclass, field
from typing import Callable, Optional

OURS, PEER = "tessera", "deep_gemm"


@dataclass
class Suite:
    name: str
    rows: Callable  # (Context) -> generator of Row
    needs_gpu: bool = True


@dataclass
class Row:
    """One shape of one suite. Suites yield rows and the runner measures each before the generator resumes, so the
    calls may refer to the generator's current tensors."""
    label: str
    shape: dict
    flops: int = 0
    nbytes: int = 0                                # bytes that must move at least once
    calls: dict = field(default_factory=dict)      # library -> zero-argument call: tessera, deep_gemm (if live)
    baselines: dict = field(default_factory=dict)  # name -> zero-argument call (cuBLASLt through torch)
    recorded_us: Optional[float] = None            # the peer's recorded time, used only when it is not live
    bucket: str = ""                               # rows summarized together
    config: str = ""                               # the plan tessera picks
    result: dict = field(default_factory=dict)
    suite: str = ""


class Context:
    """What a suite needs: the tessera module, the live peer module (or None), --quick."""

    def __init__(self, tessera, peer, quick):
        self.tessera, self.peer, self.quick = tessera, peer, quick

    def both(self, call):
        """{library: zero-argument call} for `call(lib)` on tessera and, when live, on DeepGEMM."""
        calls = {OURS: lambda: call(self.tessera)}
        if self.peer is not None:
            calls[PEER] = lambda: call(self.peer)
        return calls

    def config(self, kind, m, n, k, groups=1, expected_m=0):
        """tessera's plan for the row (tile, stages, cluster, split-K), or why the query failed."""
        import torch
        c = self.tessera._C
        device = torch.cuda.current_device()
        try:
            if kind in ("dense", "dense_1d1d"):
                return str(c.fp8_gemm_config(m, n, k, 1 if kind == "dense_1d1d" else 0, device))
            return str(c.fp8_grouped_gemm_config(kind, m, n, k, groups, expected_m, device))
        except Exception as e:  # noqa: BLE001  (a failing query must not cost the row its timing)
            return f"(config query failed: {type(e).__name__}: {str(e)[:80]})"


def ceil_div(a, b):
    return -(-a // b)


def align(a, b):
    return ceil_div(a, b) * b


def split_total(total, parts, rng, lo=0.7, hi=1.3):
    """`parts` non-negative ints summing to `total`, each drawn as mean x U(lo, hi) then scaled to the total."""
    w = [rng.uniform(lo, hi) for _ in range(parts)]
    out = [int(total * x / sum(w)) for x in w]
    for i in range(total - sum(out)):
        out[i] += 1
    return out


def try_samples(timer, name, fn, reps):
    """(samples, status): 'ok'; 'unavailable' (NotImplementedError / AttributeError: the library lacks it);
    'unsupported' (a baseline refusing the layout: RuntimeError / ValueError from torch); 'error'. Never raises."""
    try:
        return timer.samples(fn, reps), "ok"
    except Exception as e:  # noqa: BLE001  (one shape must not stop the run)
        if isinstance(e, (NotImplementedError, AttributeError)):
            status = "unavailable"
        elif name not in (OURS, PEER) and isinstance(e, (RuntimeError, ValueError)):
            status = "unsupported"
        else:
            status = "error"
        print(f"    {name}: {status}: {type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:200]}", flush=True)
        try:
            import torch
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001  (a sticky CUDA error: later rows report it too)
            pass
        return None, status


def measure(row, timer, reps, passes=2):
    """Times every library of the row, `passes` times in alternating order, reps/passes samples each time."""
    r = row.result
    fns = {**row.calls, **row.baselines}
    names = list(fns)
    samples = {name: [] for name in names}
    status = dict.fromkeys(names, "ok")
    per_pass = max(1, reps // passes)
    for p in range(passes):
        for name in (names if p % 2 == 0 else names[::-1]):
            if status[name] != "ok":
                continue
            got, status[name] = try_samples(timer, name, fns[name], per_pass)
            samples[name] += got or []
    for name in names:
        r[f"{name}_us"] = statistics.median(samples[name]) if status[name] == "ok" and samples[name] else None
        r[f"{name}_status"] = status[name]
    row.calls, row.baselines = dict.fromkeys(row.calls), dict.fromkeys(row.baselines)  # free the inputs
    ours = r[f"{OURS}_us"]
    r["tflops"] = row.flops / ours / 1e6 if ours and row.flops else None
    r["gbps"] = row.nbytes / ours / 1e3 if ours and row.nbytes else None
    peer = r.get(f"{PEER}_us")
    if PEER in row.calls:
        r["peer"] = "live"
        r["ours_over_peer"] = ours / peer if ours and peer else None
    elif row.recorded_us:
        r["peer"] = "recorded, not live"
        r["peer_recorded_us"] = row.recorded_us
        r["ours_over_peer"] = ours / row.recorded_us if ours else None
    for name in row.baselines:
        base = r[f"{name}_us"]
        r[f"ours_over_{name}"] = ours / base if ours and base else None
