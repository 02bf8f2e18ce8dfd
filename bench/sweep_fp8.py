"""Tuning sweep for the dense FP8 GEMM: times one shape under several forced configs (TESSERA_FP8_CONFIG, one
subprocess each, since plans are memoized per process) next to the heuristic's own pick and cuBLASLt per-tensor.

    python bench/sweep_fp8.py 4096 7168 16384 256x128:1x2 256x128:2x1 128x160:2x1 [--reps 30] [--1d1d]
    python bench/sweep_fp8.py 4096 7168 16384 --variant TESSERA_FP8_PIPELINE=0 --variant TESSERA_FP8_MATH_ORDER=0

--variant runs every config again under extra environment settings (comma-separated NAME=VALUE pairs), for A/B
comparisons of the kernel's tuning knobs in one call.

Timing is bench/run.py's (kineto, L2 flushed by a 2048 MiB memset, median). Prints one line per config, fastest
first; a config the kernel cannot take is reported, not fatal. Each config's output is checked once against the
BF16 inputs' FP32 product (calc_diff < 1e-3: ok, else WRONG) before it is timed."""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def time_one(m, n, k, fp32_out, reps):
    sys.path.insert(0, HERE)
    import torch

    import run as bench  # bench/run.py: its timer and input helpers

    bench.import_tessera()
    tessera = bench.tessera
    a, b = bench.randn(m, k), bench.randn(n, k)
    (a8, sfa) = bench.fp8_rows(a)
    (b8, sfb) = bench.fp8_rows(b) if fp32_out else bench.fp8_blocks(b)
    sfa = bench.mn_major(sfa)
    if fp32_out:
        sfb = bench.mn_major(sfb)
        d = torch.zeros(m, n, device="cuda", dtype=torch.float32)
        fn = lambda: tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=d, recipe=(1, 1, 128))  # noqa: E731
    else:
        d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        fn = lambda: tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d)  # noqa: E731
    config = tessera._C.fp8_gemm_config(m, n, k, int(fp32_out), torch.cuda.current_device())
    # One checked call first, into an output poisoned with NaN (1D1D accumulates, so C = 0 there): a forced config
    # that computes a wrong answer is reported as such, not timed as a win.
    if fp32_out:
        d.zero_()
    else:
        d.fill_(float("nan"))
    fn()
    from tessera.testing import calc_diff
    diff = float(calc_diff(d.float(), a.float() @ b.float().T))
    verdict = "ok" if diff < 1e-3 else f"WRONG(diff={diff:.2e})"
    us = bench.time_us(fn, reps)
    base = bench.time_us(bench.cublas_per_tensor(a8, b8, torch.float32 if fp32_out else torch.bfloat16), reps)
    print(f"RESULT {us:.2f} {base:.2f} {verdict} {config}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("m", type=int)
    parser.add_argument("n", type=int)
    parser.add_argument("k", type=int)
    parser.add_argument("configs", nargs="*", help="BMxBN[:CMxCN][:sS][:pP][:d] (sS: split-K S, pP: P stages, d: D over the ring); the heuristic's pick is always "
                        "included")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--1d1d", dest="fp32_out", action="store_true")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=VALUE[,NAME=VALUE]",
                        help="also time every config with these environment settings (repeatable)")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return time_one(args.m, args.n, args.k, args.fp32_out, args.reps)
    results = []
    variants = [("", {})] + [(v, dict(kv.split("=", 1) for kv in v.split(","))) for v in args.variant]
    for (label, extra), forced in [(v, f) for v in variants for f in ["heuristic"] + args.configs]:
        env = dict(os.environ, **extra)
        env.pop("TESSERA_FP8_CONFIG", None)
        if forced != "heuristic":
            env["TESSERA_FP8_CONFIG"] = forced
        name = f"{forced} {label}".strip()
        cmd = [sys.executable, __file__, str(args.m), str(args.n), str(args.k), "--one", "--reps", str(args.reps)]
        if args.fp32_out:
            cmd.append("--1d1d")
        out = subprocess.run(cmd, env=env, capture_output=True, text=True)
        line = next((s for s in out.stdout.splitlines() if s.startswith("RESULT ")), None)
        if line is None:
            err = (out.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"  {name:>16}: failed: {err[:160]}", flush=True)
            continue
        us, base, verdict, config = line.split(" ", 4)[1:]
        results.append((float(us), float(base), name, verdict, config))
        print(f"  {name:>16}: {float(us):8.1f} us  (cuBLASLt pt {float(base):.1f}, ratio {float(us) / float(base):.3f})"
              f"  {verdict}  {config}", flush=True)
    print(f"== {args.m}x{args.n}x{args.k} fastest first")
    for us, base, forced, verdict, config in sorted(results):
        print(f"  {us:8.1f} us  ratio {us / base:.3f}  {verdict:>2}  {forced:>16}  {config}")


if __name__ == "__main__":
    main()
