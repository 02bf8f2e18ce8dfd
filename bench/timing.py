"""How bench/run.py times one call: an L2 flush before every timed call, then the profiler's GPU durations of every
kernel, memset and copy the call launches, summed per call (--timer kineto, DeepGEMM's own method), or CUDA events
around the call (--timer events, which also counts the launch gap), or the mean of a back-to-back loop without flushes
(--timer sustained, as a training loop runs: the H200 then sits at its power cap). Plus a steadiness canary."""
import statistics
import time

try:
    import torch
except ImportError:  # the CPU tests import this module without torch
    torch = None


class Timer:
    """One timing protocol: `kind` in (kineto, events, sustained), an L2 flush of `flush_bytes` by `flush_kind`
    (memset, the published baselines' protocol, leaves L2 full of dirty lines the timed call writes back; read sums
    the buffer and leaves clean lines)."""

    SUSTAINED_SECONDS = 1.0
    SUSTAINED_WARMUP_SECONDS = 0.5

    def __init__(self, kind="kineto", flush_bytes=2048 << 20, flush_kind="memset"):
        if kind not in ("kineto", "events", "sustained"):
            raise ValueError(f"timer: expected kineto, events or sustained, got {kind!r}")
        if flush_kind not in ("memset", "read"):
            raise ValueError(f"flush kind: expected memset or read, got {flush_kind!r}")
        self.kind, self.flush_bytes, self.flush_kind = kind, flush_bytes, flush_kind
        self._buffer = None
        self._flush_names = None

    def flush(self):
        if self._buffer is None:
            self._buffer = torch.zeros(self.flush_bytes, dtype=torch.int8, device="cuda")
        if self.flush_kind == "read":
            self._buffer.sum()
        else:
            self._buffer.zero_()

    def samples(self, fn, reps, warmup=3):
        """µs per call of `fn`: `reps` samples (kineto, events) or one mean (sustained)."""
        for _ in range(warmup):
            fn()
        if self.kind == "sustained":
            return [self._sustained(fn, reps)]
        return self._kineto(fn, reps) if self.kind == "kineto" else self._events(fn, reps)

    def median_us(self, fn, reps, warmup=3):
        return statistics.median(self.samples(fn, reps, warmup))

    def _kineto(self, fn, reps):
        """Sum of the GPU activities between consecutive flushes, per call. The flush is recognized by the names its
        own profile shows; consecutive flush activities are one separator (torch splits a memset of 2^31 bytes)."""
        activity = torch.profiler.ProfilerActivity.CUDA
        if self._flush_names is None:
            self.flush()
            torch.cuda.synchronize()
            with torch.profiler.profile(activities=[activity]) as prof:
                self.flush()
                torch.cuda.synchronize()
            self._flush_names = {e.name for e in gpu_events(prof)}
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[activity]) as prof:
            for _ in range(reps):
                self.flush()
                fn()
            torch.cuda.synchronize()
        events = gpu_events(prof)
        calls = split_calls(events, self._flush_names)
        if len(calls) != reps or min(calls) <= 0.0:
            raise RuntimeError(f"kineto timer: expected {reps} flush-separated calls, found {len(calls)} "
                               f"(GPU activities: {sorted({e.name for e in events})[:6]})")
        return calls

    def _events(self, fn, reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(reps):
            self.flush()
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) * 1e3)
        return times

    def _sustained(self, fn, reps):
        """Mean µs per call over a loop of at least `reps` calls and SUSTAINED_SECONDS, after a warm-up loop that
        brings the card to the clock it can hold. Short kernels time the host, and small operands stay in L2."""
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def loop(seconds, min_calls):
            calls = 0
            t0 = time.perf_counter()
            while calls < min_calls or time.perf_counter() - t0 < seconds:
                for _ in range(10):
                    fn()
                calls += 10
                stop.record()
                stop.synchronize()  # keeps the queue short, so the host clock tracks the GPU's work
            return calls

        loop(self.SUSTAINED_WARMUP_SECONDS, 0)
        start.record()
        calls = loop(self.SUSTAINED_SECONDS, reps)
        return start.elapsed_time(stop) * 1e3 / calls


def gpu_events(prof):
    return sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                  key=lambda e: e.time_range.start)


def split_calls(events, flush_names):
    """Per-call sums (µs) of the activities that follow each run of flush activities."""
    calls = []
    in_flush = False
    for e in events:
        if e.name in flush_names:
            if not in_flush:
                calls.append(0.0)
            in_flush = True
        else:
            in_flush = False
            if calls:
                calls[-1] += e.time_range.elapsed_us()
    return calls


# A long, heavy GEMM that involves no library under test, timed before and after every suite: a card whose speed
# changes inside a suite makes that suite's absolute times suspect (same-run ratios may survive).
CANARY_MNK = (8192, 8192, 8192)
CANARY_TOLERANCE = 0.05


def canary_us(timer, reps=10):
    m, n, k = CANARY_MNK
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    return timer.median_us(lambda: torch.mm(a, b), reps)


def canary_verdict(times_us, tolerance=CANARY_TOLERANCE):
    """None when the canary times (µs, in run order) agree within `tolerance`; else a warning line."""
    times = [t for t in times_us if t]
    if len(times) < 2:
        return None
    spread = max(times) / min(times) - 1.0
    if spread <= tolerance:
        return None
    shown = " -> ".join(f"{t:.0f}" for t in times)
    return (f"WARNING: the card's speed changed during this suite: canary torch.mm bf16 "
            f"{'x'.join(map(str, CANARY_MNK))} {shown} us ({spread:.0%} apart, tolerance {tolerance:.0%}); this suite's "
            f"absolute times are suspect")
