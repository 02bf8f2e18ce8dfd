"""deepgemm-dense benchmark: tessera FP8 GEMM vs cuBLASLt FP8 per-tensor (torch._scaled_mm) in the same run.

Kernel times come from CUDA events around each call, L2 flushed before each call by a memset larger than L2,
median of 30 after warm-up. Prints a table, then JSON lines.
"""
import json
import statistics

import torch

import tessera
from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
FLUSH = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")


def time_us(fn, reps=30):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        FLUSH.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times)


def main():
    rows = []
    for m in (1, 128, 4096):
        for n, k in NK:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
            a8, sfa = per_token_cast_to_fp8(a, use_ue8m0=False)
            b8, sfb = per_block_cast_to_fp8(b, use_ue8m0=False)
            sfa = tessera.get_mn_major_tma_aligned_tensor(sfa)
            d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            ours = time_us(lambda: tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d))
            one = torch.ones((), device="cuda")
            try:
                mp = max(16, (m + 15) // 16 * 16)
                a_pad = torch.zeros(mp, k, device="cuda", dtype=torch.float8_e4m3fn)
                a_pad[:m] = a8
                blas = time_us(lambda: torch._scaled_mm(a_pad, b8.T, one, one, out_dtype=torch.bfloat16))
            except RuntimeError:
                blas = float("nan")
            flops = 2 * m * n * k
            bytes_ = m * k + n * k + m * n * 2
            rows.append(dict(m=m, n=n, k=k, tessera_us=ours, cublaslt_pt_us=blas, tflops=flops / ours / 1e6,
                             gbps=bytes_ / ours / 1e3, ratio_vs_cublaslt=ours / blas))
    print(f"{'m':>5} {'n':>6} {'k':>6} {'tessera_us':>11} {'TFLOPS':>8} {'GB/s':>8} {'cuBLASLt_us':>12} {'ours/cublas':>11}")
    for r in rows:
        print(f"{r['m']:>5} {r['n']:>6} {r['k']:>6} {r['tessera_us']:>11.1f} {r['tflops']:>8.0f} {r['gbps']:>8.0f} "
              f"{r['cublaslt_pt_us']:>12.1f} {r['ratio_vs_cublaslt']:>11.2f}")
    for r in rows:
        print(json.dumps({"suite": "deepgemm-dense", **{k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}}))


if __name__ == "__main__":
    main()
