"""What programmatic dependent launch (tessera.set_pdl) buys a chain of small GEMMs: each kernel's launch and prologue
overlap the tail of the one before, instead of starting after it drains.

Times `--chain` back-to-back launches of one decode GEMM (same inputs, same output: each waits for the previous one,
as consecutive layers do) with CUDA events, PDL off and on, alternating, and prints one JSON line per setting: µs per
GEMM, the median over --repeats chains. L2 stays warm, so these times sit below bench/run.py's flushed kernel times.
Usage: python bench/pdl_chain.py [M N K] [--chain 200]
"""
import argparse
import json
import statistics

import torch

import tessera
from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8


def chain_us(fn, chain, repeats):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        torch.cuda._sleep(20_000_000)  # launches queue up behind ~10 ms of GPU work: the host is not timed
        start.record()
        for _ in range(chain):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / chain)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("shape", nargs="*", type=int, default=[1, 2112, 7168])
    parser.add_argument("--chain", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    m, n, k = args.shape
    a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda"), use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda"), use_ue8m0=False)
    sfa = tessera.get_mn_major_tma_aligned_tensor(sfa)
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    fn = lambda: tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d)  # noqa: E731
    previous = tessera.get_pdl()
    results = {False: [], True: []}
    try:
        for _ in range(3):
            for pdl in (False, True):
                tessera.set_pdl(pdl)
                fn()
                torch.cuda.synchronize()
                results[pdl].append(chain_us(fn, args.chain, args.repeats))
    finally:
        tessera.set_pdl(previous)
    for pdl, values in results.items():
        print(json.dumps({"bench": "pdl_chain", "shape": f"{m}x{n}x{k}", "pdl": pdl, "chain": args.chain,
                          "us_per_gemm": round(statistics.median(values), 3)}))


if __name__ == "__main__":
    main()
