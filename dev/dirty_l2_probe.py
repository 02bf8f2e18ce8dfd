"""Does the benchmark's L2 flush (a 2 GB memset) leave dirty lines that the next GEMM must write back to HBM?
(docs/perf/fp8_gemm.md v10: a read flush made the memory-bound rows 0.3-6 us faster.) Runs 1x7168x16384 after a
memset flush twice, then after a read flush twice, for ncu to count each GEMM's DRAM bytes without its own cache
control:

    ncu --cache-control none --kernel-name regex:tessera --metrics dram__bytes_read.sum,dram__bytes_write.sum,\
gpu__time_duration.sum python dev/dirty_l2_probe.py

Inputs are random."""
import torch

import tessera
from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

m, n, k = 1, 7168, 16384
a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
sfa = tessera.get_mn_major_tma_aligned_tensor(sfa)
d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
flush = torch.zeros(2 << 30, dtype=torch.int8, device="cuda")
for kind in ("memset", "memset", "read", "read"):
    if kind == "memset":
        flush.zero_()
    else:
        flush.sum()
    tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
    print(kind, flush=True)
torch.cuda.synchronize()
