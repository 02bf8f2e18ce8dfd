"""Energy per GEMM on a power-capped card. Each case runs back to back for a few seconds in its own process (plans
are memoized per process, so forced configs and kernel variants need one each) while NVML reads the card's energy
counter, power and SM clock; prints per case: time per call, energy per call (mJ), mean power and SM clock, and
both ratios against the first case.

    python3 dev/energy_probe.py CASE [CASE ...] [--seconds 2]
    CASE = KIND:M:N:K[:G][@ENV=VALUE[,ENV=VALUE]]   KIND: ours, cublas (FP8 per-tensor), bf16, contig (G experts of
                                                    M rows), memset (2 GB, the suites' flush)
    e.g. ours:4096:7168:16384 cublas:4096:7168:16384 ours:4096:7168:16384@TESSERA_FP8_CONFIG=128x192

Why (docs/perf/fp8_gemm.md v15): nvidia-smi shows the H200 at its 700 W cap (sw_power_cap active) while any of the
M = 4096 GEMMs runs, ours, cuBLASLt FP8 and cuBLAS BF16 alike; then time is about energy over the cap, and a change
that saves cycles but not energy buys little."""
import ctypes
import os
import subprocess
import sys
import threading
import time


class Nvml:
    def __init__(self, index=0):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        self.lib.nvmlInit_v2()
        self.handle = ctypes.c_void_p()
        self.lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self.handle))

    def energy_mj(self):
        v = ctypes.c_ulonglong()
        self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(v))
        return v.value

    def power_w(self):
        v = ctypes.c_uint()
        self.lib.nvmlDeviceGetPowerUsage(self.handle, ctypes.byref(v))
        return v.value / 1e3

    def sm_mhz(self):
        v = ctypes.c_uint()
        self.lib.nvmlDeviceGetClockInfo(self.handle, 1, ctypes.byref(v))  # NVML_CLOCK_SM
        return v.value


def make_fn(kind, m, n, k, groups):
    import torch

    import tessera
    from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

    torch.manual_seed(0)
    if kind == "memset":
        buf = torch.empty(2 << 30, dtype=torch.uint8, device="cuda")
        return lambda: buf.zero_(), "2 GB memset"
    if kind == "bf16":
        a, b = (torch.randn(r, k, device="cuda", dtype=torch.bfloat16) for r in (m, n))
        return lambda: torch.mm(a, b.t()), "torch.mm BF16"
    rows = m * groups if kind == "contig" else m
    a8, sfa = per_token_cast_to_fp8(torch.randn(rows, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(torch.randn(n * max(groups, 1), k, device="cuda", dtype=torch.bfloat16),
                                    use_ue8m0=False)
    sfa = tessera.get_mn_major_tma_aligned_tensor(sfa)  # the fast path's layout: no transpose inside the timing
    d = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
    if kind == "cublas":
        one = torch.ones((), device="cuda", dtype=torch.float32)
        return lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16), "cuBLASLt"
    if kind == "contig":
        ids = torch.arange(groups, device="cuda", dtype=torch.int32).repeat_interleave(m)
        b8, sfb = b8.view(groups, n, k), sfb.view(groups, n // 128, -1)
        fn = lambda: tessera.m_grouped_fp8_gemm_nt_contiguous((a8, sfa), (b8, sfb), d, ids)  # noqa: E731
        fn()
        return fn, "contiguous"
    return (lambda: tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d),
            tessera._C.fp8_gemm_config(m, n, k, 0, torch.cuda.current_device()))


def timed_loop(fn, seconds, start, end, after_batch=None):
    """Calls fn back to back in batches of 10 for `seconds` between CUDA events `start` and `end` (each batch is
    synchronized on `end`, then after_batch runs); returns the number of calls."""
    calls = 0
    start.record()
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        for _ in range(10):
            fn()
        calls += 10
        end.record()
        end.synchronize()
        if after_batch is not None:
            after_batch()
    return calls


def worker(spec, seconds):
    import torch

    kind, *dims = spec.split(":")
    m, n, k = (int(x) for x in dims[:3])
    groups = int(dims[3]) if len(dims) > 3 else 0
    fn, what = make_fn(kind, m, n, k, groups)
    nvml = Nvml(torch.cuda.current_device())
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    samples = []
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            samples.append((nvml.power_w(), nvml.sm_mhz()))
            time.sleep(0.02)

    # settle: the first half second brings the card to its steady clock
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.5:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    e0 = nvml.energy_mj()
    calls = timed_loop(fn, seconds, start, end)
    e1 = nvml.energy_mj()
    stop.set()
    thread.join()
    us = 1e3 * start.elapsed_time(end) / calls
    power = sum(p for p, _ in samples) / max(len(samples), 1)
    mhz = sum(c for _, c in samples) / max(len(samples), 1)
    print(f"RESULT {us:.2f} {(e1 - e0) / calls:.4f} {power:.1f} {mhz:.0f} {calls} | {what}")


def main():
    args = sys.argv[1:]
    if args and args[0] == "--worker":
        return worker(args[1], float(args[2]))
    seconds = 2.0
    if "--seconds" in args:
        i = args.index("--seconds")
        seconds = float(args[i + 1])
        del args[i:i + 2]
    first = None
    print(f"{'case':58s} {'us/call':>9s} {'mJ/call':>9s} {'W':>6s} {'MHz':>5s} {'t/first':>8s} {'E/first':>8s}")
    for case in args:
        spec, _, env_text = case.partition("@")
        env = dict(os.environ)
        for pair in filter(None, env_text.split(",")):
            name, _, value = pair.partition("=")
            env[name] = value
        proc = subprocess.run([sys.executable, __file__, "--worker", spec, str(seconds)], env=env,
                              capture_output=True, text=True, timeout=120)
        line = next((l for l in proc.stdout.splitlines() if l.startswith("RESULT")), None)
        if line is None:
            print(f"{case:58s} failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}", flush=True)
            continue
        head, _, what = line.partition(" | ")
        us, mj, w, mhz, _ = (float(x) for x in head.split()[1:])
        first = first or (us, mj)
        print(f"{case:58s} {us:9.1f} {mj:9.1f} {w:6.0f} {mhz:5.0f} {us / first[0]:8.3f} {mj / first[1]:8.3f}  {what}",
              flush=True)


if __name__ == "__main__":
    main()
