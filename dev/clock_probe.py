"""The SM clock our kernel runs at, read inside the kernel: in the suites' bursts (a 2 GB memset before each call)
and in a sustained back-to-back loop. A kernel variant (made here from the working tree's kernels) has CTA 0's
producer thread read %clock64 and %globaltimer around its produce loop and write the two differences into the first
8 bytes of D (a probe: D is then wrong there). The clock is cycles / ns over the producer's life, which spans the
kernel but its last few k-blocks.

    python3 dev/clock_probe.py [M N K ...] [--rounds 20]      (default 4096 7168 16384 and 6144 6144 7168)

Why (docs/perf/fp8_gemm.md v15): sustained, the card holds its 700 W cap and NVML reads ~1440 MHz for our kernel.
Bursts run 15-20 % faster. Whether they run at the 1980 MHz boost clock, where cycles count one for one, or under
another limit, decides which lens the suites' numbers need."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MARK = "            if (warp == kProducerWarp && ptx::elect_one()) produce(p, smem);"
PROBE = """            if (warp == kProducerWarp && ptx::elect_one()) {
                uint64_t g0, g1;
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
                const long long c0 = clock64();
                produce(p, smem);
                const long long c1 = clock64();
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
                if (blockIdx.x == 0) {  // CTA 0 stored D's first tile long before its producer ends
                    static_cast<uint32_t*>(p.d)[0] = static_cast<uint32_t>(c1 - c0);
                    static_cast<uint32_t*>(p.d)[1] = static_cast<uint32_t>(g1 - g0);
                }
            }"""


def make_variant(dst):
    shutil.copytree(os.path.join(ROOT, "kernels"), dst)
    path = os.path.join(dst, "tessera", "sm90", "fp8_gemm.cuh")
    text = open(path).read()
    if MARK not in text:
        sys.exit("clock_probe: the producer launch line moved; update MARK")
    open(path, "w").write(text.replace(MARK, PROBE))


def worker(m, n, k, rounds):
    import torch

    import tessera
    from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

    a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    sfa = tessera.get_mn_major_tma_aligned_tensor(sfa)
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    words = d.view(torch.int32)
    flush = torch.empty(2 << 30, dtype=torch.uint8, device="cuda")
    fn = lambda: tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d)  # noqa: E731

    def read():
        cycles, ns = (int(x) & 0xFFFFFFFF for x in words[0, :2].tolist())
        return cycles, ns

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    burst = []
    for _ in range(rounds):
        flush.zero_()
        fn()
        torch.cuda.synchronize()
        burst.append(read())
    t0 = time.monotonic()
    while time.monotonic() - t0 < 1.5:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
    sustained = []
    for _ in range(rounds):
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        sustained.append(read())
    for name, marks in (("burst", burst), ("sustained", sustained)):
        ghz = sorted(c / ns for c, ns in marks if ns > 0)
        us = sorted(ns / 1e3 for _, ns in marks)
        print(f"{m}x{n}x{k} {name:9s} producer life {us[len(us) // 2]:8.1f} us  SM clock {ghz[len(ghz) // 2]:.3f} GHz "
              f"(min {ghz[0]:.3f}, max {ghz[-1]:.3f})", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("shape", type=int, nargs="*", help="M N K triples")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    shapes = args.shape or [4096, 7168, 16384, 6144, 6144, 7168]
    if len(shapes) % 3:
        parser.error("shapes come as M N K triples")
    if args.worker:
        return worker(*shapes[:3], args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        variant = os.path.join(tmp, "kernels")
        make_variant(variant)
        env = dict(os.environ, TESSERA_KERNEL_DIR=variant)
        for i in range(0, len(shapes), 3):
            subprocess.run([sys.executable, __file__, "--worker", *map(str, shapes[i:i + 3]),
                            "--rounds", str(args.rounds)], env=env, check=False, timeout=300)


if __name__ == "__main__":
    main()
