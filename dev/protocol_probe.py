"""Does the timing method or the card's power state decide how ours compares with cuBLASLt? One process times each
case, interleaved and twice (forward, then backward order, to cancel thermal drift), four ways: the suites'
protocol (2 GB memset before each call) with the kineto timer and with CUDA events, the same call as the 2nd of a
pair after the memset (events), and a 1.5 s sustained loop (events; NVML power and SM clock).

    python3 dev/protocol_probe.py CASE [CASE ...]      (CASE as in dev/energy_probe.py, without @ENV)

Why (docs/perf/fp8_gemm.md v15): the flushed suite had ours 3.3 % behind cuBLASLt at 4096x7168x16384 (kineto,
684.9 against ~663 us), a memset-then-8-calls chain on another machine had ours 2 % ahead (events, 693 against 707),
and a sustained loop at the 700 W cap had them equal (819.5 / 817.1)."""
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "bench"))


def main():
    import torch

    import run as bench
    from energy_probe import Nvml, make_fn, timed_loop

    bench.import_tessera()
    nvml = Nvml(torch.cuda.current_device())
    cases = []
    for spec in sys.argv[1:]:
        kind, *dims = spec.split(":")
        m, n, k = (int(x) for x in dims[:3])
        fn, what = make_fn(kind, m, n, k, int(dims[3]) if len(dims) > 3 else 0)
        fn()
        cases.append((spec, fn))
    flush = bench.flush_buffer()
    s0, s1, e1 = (torch.cuda.Event(enable_timing=True) for _ in range(3))

    def second_of_pair(fn, reps=20):
        out = []
        for _ in range(reps):
            flush.zero_()
            fn()
            s1.record()
            fn()
            e1.record()
            e1.synchronize()
            out.append(1e3 * s1.elapsed_time(e1))
        return statistics.median(out)

    def sustained(fn, seconds=1.5):
        samples = []
        torch.cuda.synchronize()
        calls = timed_loop(fn, seconds, s0, e1, lambda: samples.append((nvml.power_w(), nvml.sm_mhz())))
        tail = samples[len(samples) // 2:]
        return (1e3 * s0.elapsed_time(e1) / calls, statistics.median(p for p, _ in tail),
                statistics.median(c for _, c in tail))

    print(f"{'case':28s} {'kineto':>8s} {'events':>8s} {'2nd':>8s} {'sustain':>8s} {'W':>5s} {'MHz':>5s}", flush=True)
    for order in (cases, cases[::-1]):
        for spec, fn in order:
            bench.TIMER = "kineto"
            kin = bench.time_us(fn, 30)
            bench.TIMER = "events"
            ev = bench.time_us(fn, 30)
            sec = second_of_pair(fn)
            us, w, mhz = sustained(fn)
            print(f"{spec:28s} {kin:8.1f} {ev:8.1f} {sec:8.1f} {us:8.1f} {w:5.0f} {mhz:5.0f}", flush=True)
            time.sleep(1.0)


if __name__ == "__main__":
    main()
