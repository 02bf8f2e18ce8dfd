"""Host time per cached Python call, with the GPU kept busy so launches queue and only the host path is timed.

Prints one JSON line per entry point. Usage: python bench/python_overhead.py
"""
import json
import os
import subprocess
import sys
import time

import torch

import tessera
from tessera import _C


def host_us_per_call(fn, calls=300, repeats=5):
    fn()
    torch.cuda.synchronize()
    best = []
    for _ in range(repeats):
        # ~50 ms of GPU work ahead of the launches; `calls` stays below the launch-queue depth so that no launch waits
        # for a free slot (a full queue would time the GPU, not the host).
        torch.cuda._sleep(100_000_000)
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    best.sort()
    return best[len(best) // 2]


def measure():
    """[(entry, median host µs per call)] for each entry point; bench/run.py --suite host-overhead calls this."""
    sf = torch.randn(4096, 56, device="cuda")
    out = torch.empty_strided(sf.shape, (1, 4096), device="cuda")
    from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
    a8, sfa = per_token_cast_to_fp8(torch.randn(128, 7168, device="cuda"), use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(torch.randn(2112, 7168, device="cuda"), use_ue8m0=False)
    sfa = tessera.get_mn_major_tma_aligned_tensor(sfa)
    d = torch.empty(128, 2112, device="cuda", dtype=torch.bfloat16)
    rows = {
        "tessera.fp8_gemm_nt 128x2112x7168 (cached)": lambda: tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d),
        "_C.fp8_gemm_nt (binding + launch)": lambda: _C.fp8_gemm_nt(a8, sfa, b8, sfb, d, 0),
        "_C._probe_tensor_refs (5 tensor reads + stream, no launch)": lambda: _C._probe_tensor_refs(a8, sfa, b8, sfb, d),
        "_C.transpose_sf_to_mn_major (binding + launch)": lambda: _C.transpose_sf_to_mn_major(sf, out),
        "tessera.get_mn_major_tma_aligned_tensor (pass-through)": lambda: tessera.get_mn_major_tma_aligned_tensor(out),
        "torch.empty_strided (reference point)": lambda: torch.empty_strided(sf.shape, (1, 4096), device="cuda"),
    }
    return [(name, host_us_per_call(fn)) for name, fn in rows.items()]


def main():
    # The binding reads torch tensors through torch's DLPack exchange table where torch has one (the default), or
    # (TESSERA_DLPACK_EXCHANGE=0) through their attributes. A child process with the table off gives those rows in the
    # same run.
    turned_off = os.environ.get("TESSERA_DLPACK_EXCHANGE") == "0"
    table = "off" if turned_off else ("on" if _C._dlpack_exchange_active() else "absent")
    for name, us in measure():
        print(json.dumps({"bench": "python_host_overhead", "entry": name, "dlpack_exchange": table,
                          "host_us_per_call": round(us, 3)}), flush=True)
    if not turned_off:
        subprocess.run([sys.executable, __file__], env={**os.environ, "TESSERA_DLPACK_EXCHANGE": "0"}, check=True)


if __name__ == "__main__":
    main()
