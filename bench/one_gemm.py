"""Runs one FP8 GEMM shape a few times, for a profiler to wrap (ncu --launch-skip / --launch-count):

    ncu --kernel-name tessera_sm90_fp8_gemm_kernel --launch-skip 2 --launch-count 1 \
        python bench/one_gemm.py 1 7168 2048 [--1d1d] [--calls 3] [--cublas] [--masked G]

--masked G: m_grouped_fp8_gemm_nt_masked with G groups of M rows each (masked_m = M, M_max = 4096, expected_m = M),
as the deepgemm-masked suite lays them out. Prints the config tessera picked. Inputs are random (never zeros)."""
import argparse

import torch

import tessera
from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("m", type=int)
    parser.add_argument("n", type=int)
    parser.add_argument("k", type=int)
    parser.add_argument("--1d1d", dest="one_d_one_d", action="store_true", help="FP32 out, per-row B scales")
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--cublas", action="store_true", help="cuBLASLt FP8 per-tensor (torch._scaled_mm) instead")
    parser.add_argument("--masked", type=int, metavar="G", help="masked grouped GEMM: G groups of M rows")
    args = parser.parse_args()
    m, n, k = args.m, args.n, args.k
    if args.masked:
        return run_masked(args.masked, m, n, k, args.calls)
    a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    if args.one_d_one_d:
        b8, sfb = per_token_cast_to_fp8(b, use_ue8m0=False)
        d = torch.zeros(m, n, device="cuda", dtype=torch.float32)
    else:
        b8, sfb = per_block_cast_to_fp8(b, use_ue8m0=False)
        d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    if args.cublas:
        one = torch.ones((), device="cuda", dtype=torch.float32)
        for _ in range(args.calls):
            torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        torch.cuda.synchronize()
        return
    print(tessera._C.fp8_gemm_config(m, n, k, int(args.one_d_one_d), torch.cuda.current_device()), flush=True)
    for _ in range(args.calls):
        if args.one_d_one_d:
            tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=d, recipe=(1, 1, 128))
        else:
            tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
    torch.cuda.synchronize()


def run_masked(groups, m, n, k, calls, m_max=4096):
    a8, sfa = per_token_cast_to_fp8(torch.randn(groups * m_max, k, device="cuda", dtype=torch.bfloat16),
                                    use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(torch.randn(groups * n, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    a8, sfa = a8.view(groups, m_max, k), tessera.get_mn_major_tma_aligned_tensor(sfa.view(groups, m_max, -1))
    b8, sfb = b8.view(groups, n, k), sfb.view(groups, n // 128, -1)
    d = torch.empty(groups, m_max, n, device="cuda", dtype=torch.bfloat16)
    masked_m = torch.full((groups,), m, device="cuda", dtype=torch.int32)
    print(tessera._C.fp8_grouped_gemm_config("masked", m_max, n, k, groups, m, torch.cuda.current_device()),
          flush=True)
    for _ in range(calls):
        tessera.m_grouped_fp8_gemm_nt_masked((a8, sfa), (b8, sfb), d, masked_m, m)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
