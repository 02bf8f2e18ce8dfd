"""Would a dense GEMM whose last wave is partial run faster as two launches: the rows that fill whole waves with the
heuristic's tile, then the remaining rows planned as a problem of their own? (docs/perf/fp8_gemm.md v10)

4096x2112x7168 plans 128x192: 352 tiles, 2.67 waves of 132, the last wave a third idle. Rows [0, 3072) are 264 tiles
(two whole waves); rows [3072, 4096) are a 1024-row problem the heuristic plans again (narrower tiles, one wave).

    python dev/tail_split_probe.py [M N K SPLIT_ROW ...]     (default: 4096 2112 7168 3072)

Prints, per shape: the whole problem in one launch, and the two launches (kernel-time sum, and span from the first
kernel's start to the last one's end, which includes the gap between them), with and without PDL. Kineto, L2
flushed, median. Each variant's output is checked against the FP32 product first (NaN-poisoned)."""
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import run as bench  # noqa: E402


def spans_us(fn, reps):
    """Median of (kernel-time sum, first start -> last end) over the calls between flushes."""
    flush = bench.flush_buffer()
    for _ in range(3):
        fn()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        flush.zero_()
        torch.cuda.synchronize()
    flush_names = {e.name for e in bench.gpu_activities(prof)}
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            flush.zero_()
            fn()
        torch.cuda.synchronize()
    calls, in_flush = [], False
    for e in bench.gpu_activities(prof):
        if e.name in flush_names:
            if not in_flush:
                calls.append([0.0, None, None])
            in_flush = True
            continue
        in_flush = False
        if not calls:
            continue
        c = calls[-1]
        c[0] += e.time_range.elapsed_us()
        c[1] = e.time_range.start if c[1] is None else c[1]
        c[2] = e.time_range.end
    assert len(calls) == reps, (len(calls), reps)
    return statistics.median(c[0] for c in calls), statistics.median(c[2] - c[1] for c in calls)


def probe(m, n, k, split_row, reps=30):
    tessera = bench.tessera
    a, b = bench.randn(m, k), bench.randn(n, k)
    a8, sfa = bench.fp8_rows(a)
    b8, sfb = bench.fp8_blocks(b)
    sfa_all = bench.mn_major(sfa)
    parts = [(a8[lo:hi], bench.mn_major(sfa[lo:hi].contiguous()), lo, hi)
             for lo, hi in ((0, split_row), (split_row, m))]
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    whole = lambda: tessera.fp8_gemm_nt((a8, sfa_all), (b8, sfb), d)  # noqa: E731

    def two():
        for pa, psf, lo, hi in parts:
            tessera.fp8_gemm_nt((pa, psf), (b8, sfb), d[lo:hi])

    ref = a.float() @ b.float().T
    from tessera.testing import calc_diff
    dev = torch.cuda.current_device()
    print(f"== {m}x{n}x{k}, rows split at {split_row}")
    for label, r in (("whole", m), ("head", split_row), ("tail", m - split_row)):
        print(f"   {label:5} {r:5} rows: {tessera._C.fp8_gemm_config(r, n, k, 0, dev)}")
    for pdl in (False, True):
        tessera.set_pdl(pdl)
        for label, fn in (("one launch", whole), ("two launches", two)):
            d.fill_(float("nan"))
            fn()
            diff = float(calc_diff(d.float(), ref))
            total, span = spans_us(fn, reps)
            verdict = "ok" if diff < 1e-3 else f"WRONG({diff:.1e})"
            print(f"   pdl={int(pdl)} {label:13} kernels {total:7.1f} us   span {span:7.1f} us   {verdict}", flush=True)
    tessera.set_pdl(False)
    base = bench.time_us(bench.cublas_per_tensor(a8, b8, torch.bfloat16), reps)
    print(f"   cuBLASLt per-tensor {base:.1f} us")


def main():
    bench.import_tessera()
    args = [int(x) for x in sys.argv[1:]] or [4096, 2112, 7168, 3072]
    for i in range(0, len(args), 4):
        probe(*args[i:i + 4])


if __name__ == "__main__":
    main()
