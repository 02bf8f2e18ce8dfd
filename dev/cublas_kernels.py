"""Which cuBLASLt kernel torch._scaled_mm runs for FP8 per-tensor GEMMs (its name gives tile, stages and cluster), and
its kineto time next to tessera's kernels, each call after a 2 GB memset flush; median of 20 per kernel name. For
finding the configuration cuBLASLt uses where it beats us.

    python3 dev/cublas_kernels.py 4096x576x7168 4096x4096x7168
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import tessera


def main():
    flush = torch.empty(2 << 30, dtype=torch.uint8, device="cuda")
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        flush.zero_()
        torch.cuda.synchronize()
    flush_names = {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
    for shape in sys.argv[1:]:
        m, n, k = (int(x) for x in shape.split("x"))
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
        one = torch.ones((), device="cuda")
        sfa = torch.ones(m, k // 128, device="cuda")
        sfb = torch.ones((n + 127) // 128, k // 128, device="cuda")
        d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        calls = {"cublaslt": lambda: torch._scaled_mm(a, b.t(), one, one, out_dtype=torch.bfloat16),
                 "tessera": lambda: tessera.fp8_gemm_nt((a, sfa), (b, sfb), d)}
        for name, fn in calls.items():
            fn()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA], record_shapes=False) as prof:
                for _ in range(20):
                    flush.zero_()
                    fn()
                torch.cuda.synchronize()
            times = {}
            for e in prof.events():
                if e.device_type == torch.autograd.DeviceType.CUDA and e.name not in flush_names:
                    times.setdefault(e.name, []).append(e.time_range.elapsed_us())
            for kname, ts in times.items():
                ts.sort()
                print(f"{shape} {name}: {ts[len(ts) // 2]:.1f} us x{len(ts)}  {kname[:160]}")


if __name__ == "__main__":
    main()
