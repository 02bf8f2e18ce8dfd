"""Is the card power-capped while a big FP8 GEMM runs? Runs each case back to back for a few seconds (optionally with the
suite's 2 GB memset flush between calls) while nvidia-smi samples power, SM clock, temperature and the clock-event
reasons, then prints per case: time per call (CUDA events), median power and clock of the samples taken while it ran,
and how often each throttle reason was active.

    python3 dev/power_probe.py [--seconds 3] [--shape 4096 7168 16384] [--flush]

Why (docs/perf/fp8_gemm.md v15): our 256x128 kernel runs at 1.60-1.64 GHz where cuBLASLt runs at 1.46 with fewer
cycles. If the card sits at its power limit, time is energy over the cap and cycle efficiency alone is not the lever."""
import argparse
import os
import subprocess
import threading
import time

import torch

import tessera
from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

FIELDS = ["power.draw.instant", "power.limit", "clocks.sm", "temperature.gpu",
          "clocks_event_reasons.sw_power_cap", "clocks_event_reasons.hw_slowdown",
          "clocks_event_reasons.sw_thermal_slowdown", "clocks_event_reasons.hw_power_brake_slowdown"]


class Sampler:
    """nvidia-smi in the background, one line per ~50 ms, each tagged with the host time it was read."""

    def __init__(self, fields):
        self.fields = fields
        self.rows = []
        gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
        self.proc = subprocess.Popen(["nvidia-smi", "-i", gpu, "--query-gpu=" + ",".join(fields),
                                      "--format=csv,noheader,nounits", "-lms", "50"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            self.rows.append((time.monotonic(), [v.strip() for v in line.split(",")]))

    def between(self, t0, t1):
        return [r for t, r in self.rows if t0 <= t <= t1]

    def stop(self):
        self.proc.terminate()


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def run_case(name, fn, seconds, sampler, flush):
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.monotonic()
    calls = 0
    total_ms = 0.0
    while time.monotonic() - t0 < seconds:
        for _ in range(20):
            if flush is not None:
                flush.zero_()
            start.record()
            fn()
            end.record()
            end.synchronize()
            total_ms += start.elapsed_time(end)
            calls += 1
    t1 = time.monotonic()
    rows = sampler.between(t0 + 0.3, t1)  # skip the first samples: the card settles
    def col(i):
        out = []
        for r in rows:
            try:
                out.append(float(r[i]))
            except (ValueError, IndexError):
                pass
        return out
    reasons = [sum(1 for r in rows if len(r) > i and r[i].lower() == "active") for i in range(4, len(FIELDS))]
    print(f"{name:42s} {1e3 * total_ms / calls:8.1f} us/call  power {median(col(0)):6.1f} W (limit {median(col(1)):.0f})"
          f"  sm {median(col(2)):6.0f} MHz  temp {median(col(3)):4.0f} C  samples {len(rows):3d}  "
          f"active: pwr_cap {reasons[0]} hw_slow {reasons[1]} thermal {reasons[2]} brake {reasons[3]}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--shape", type=int, nargs=3, default=[4096, 7168, 16384])
    parser.add_argument("--flush", action="store_true", help="2 GB memset before each call, as the suites do")
    args = parser.parse_args()
    m, n, k = args.shape
    torch.manual_seed(0)
    a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    a16 = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b16 = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    one = torch.ones((), device="cuda", dtype=torch.float32)
    flush = torch.empty(2 << 30, dtype=torch.uint8, device="cuda") if args.flush else None
    print(f"shape {m}x{n}x{k}, flush {'2 GB memset' if args.flush else 'none'}, config "
          f"{tessera._C.fp8_gemm_config(m, n, k, 0, torch.cuda.current_device())}", flush=True)
    sampler = Sampler(FIELDS)
    time.sleep(0.5)
    if not sampler.rows:
        print("nvidia-smi gave no samples with the full field list; falling back", flush=True)
        sampler.stop()
        sampler = Sampler(FIELDS[:4])
        time.sleep(0.5)
    print("idle:", sampler.rows[-1][1] if sampler.rows else "no samples", flush=True)
    cases = [
        ("tessera fp8_gemm_nt (heuristic)", lambda: tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d)),
        ("cuBLASLt FP8 per-tensor (torch._scaled_mm)",
         lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)),
        ("cuBLAS BF16 (torch.mm)", lambda: torch.mm(a16, b16.t())),
        ("tessera fp8_gemm_nt (heuristic), again", lambda: tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d)),
    ]
    for name, fn in cases:
        run_case(name, fn, args.seconds, sampler, flush)
        time.sleep(0.5)
    time.sleep(0.3)
    print("after:", sampler.rows[-1][1] if sampler.rows else "no samples", flush=True)
    sampler.stop()


if __name__ == "__main__":
    main()
