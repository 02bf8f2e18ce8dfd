"""Runs one FP8 GEMM shape a few times, for a profiler to wrap (ncu --launch-skip / --launch-count):

    ncu --kernel-name tessera_sm90_fp8_gemm_kernel --launch-skip 2 --launch-count 1 \
        python bench/one_gemm.py 1 7168 2048 [--1d1d] [--calls 3] [--cublas] [--masked G]

--masked G: m_grouped_fp8_gemm_nt_masked with G groups of M rows each (masked_m = M, M_max = 4096, expected_m = M),
as the deepgemm-masked suite lays them out. --contiguous G: m_grouped_fp8_gemm_nt_contiguous with G experts of M rows
each (per-row expert ids, M a multiple of 128, no padding rows). Prints the config tessera picked. Inputs are random (never zeros)."""
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
    parser.add_argument("--contiguous", type=int, metavar="G", help="contiguous grouped GEMM: G experts of M rows")
    args = parser.parse_args()
    m, n, k = args.m, args.n, args.k
    if args.masked:
        return run_masked(args.masked, m, n, k, args.calls)
    if args.contiguous:
        return run_contiguous(args.contiguous, m, n, k, args.calls)
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


def grouped_inputs(rows, groups, n, k):
    """A [rows, K] with 1x128 scales, B [groups, N, K] with 128x128 scales (views of [groups * N, K])."""
    a8, sfa = per_token_cast_to_fp8(torch.randn(rows, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(torch.randn(groups * n, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    return a8, sfa, b8.view(groups, n, k), sfb.view(groups, n // 128, -1)


def run_masked(groups, m, n, k, calls, m_max=4096):
    a8, sfa, b8, sfb = grouped_inputs(groups * m_max, groups, n, k)
    a8, sfa = a8.view(groups, m_max, k), tessera.get_mn_major_tma_aligned_tensor(sfa.view(groups, m_max, -1))
    d = torch.empty(groups, m_max, n, device="cuda", dtype=torch.bfloat16)
    masked_m = torch.full((groups,), m, device="cuda", dtype=torch.int32)
    print(tessera._C.fp8_grouped_gemm_config("masked", m_max, n, k, groups, m, torch.cuda.current_device()),
          flush=True)
    for _ in range(calls):
        tessera.m_grouped_fp8_gemm_nt_masked((a8, sfa), (b8, sfb), d, masked_m, m)
    torch.cuda.synchronize()


def run_contiguous(groups, m, n, k, calls):
    if m % 128:
        raise SystemExit(f"--contiguous: M per expert must be a multiple of 128 (the segment alignment), got {m}")
    a8, sfa, b8, sfb = grouped_inputs(groups * m, groups, n, k)
    sfa = tessera.get_mn_major_tma_aligned_tensor(sfa)
    d = torch.empty(groups * m, n, device="cuda", dtype=torch.bfloat16)
    ids = torch.arange(groups, device="cuda", dtype=torch.int32).repeat_interleave(m)
    print(tessera._C.fp8_grouped_gemm_config("contiguous", groups * m, n, k, groups, 0, torch.cuda.current_device()),
          flush=True)
    for _ in range(calls):
        tessera.m_grouped_fp8_gemm_nt_contiguous((a8, sfa), (b8, sfb), d, ids)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
