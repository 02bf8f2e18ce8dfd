"""Where the masked kernel's extra time comes from (docs/perf/fp8_grouped.md v7: masked g6 e1024 6144x7168 runs
10-34 % longer than dense 6144x6144x7168 on the same tile and FLOPs). Times the same 6144 x 6144 x 7168 work under
one forced tile, in one process, as:

    dense        fp8_gemm_nt 6144x6144x7168
    contig-g1    contiguous, one expert, 6144 rows        (contiguous code path, one B)
    contig-g6    contiguous, six experts of 1024 rows     (contiguous code path, six Bs: first touch per expert)
    psum-g6      the same six experts as a psum layout    (psum code path: group walk, rows stored by TMA)
    masked-g1    masked, one group of 6144 rows (M_max 6144)  (masked code path, one B)
    masked-g6    masked, six groups of 1024 rows, M_max 1024  (masked code path, six Bs, no gaps between groups)
    masked-g6-4k masked, six groups of 1024 rows, M_max 4096  (the suite's layout)

If masked-g1 matches dense, the masked loss is in the per-group B first touch (then contig-g6 shows it too); if
masked-g1 is as slow as masked-g6, it is in the masked code path (registers, scheduler).

    python dev/masked_probe.py 128x144 128x192 [--reps 20]    (each tile in its own process: plans are memoized)
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
M, N, K, G = 6144, 6144, 7168, 6


def run_one(reps):
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))
    import torch

    import run as bench

    bench.import_tessera()
    t = bench.tessera
    from tessera.testing import calc_diff

    a, b = bench.randn(M, K), bench.randn(G * N, K)
    a8, sfa = bench.fp8_rows(a)
    b8, sfb = bench.fp8_blocks(b)
    b8g, sfbg = b8.view(G, N, K), sfb.view(G, N // 128, -1)
    ref0 = a.float() @ b[:N].float().T  # every case's first group (or the whole product) uses B[0]
    cases = {}
    d = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    sfa_mn = bench.mn_major(sfa)
    cases["dense"] = (lambda: t.fp8_gemm_nt((a8, sfa_mn), (b8[:N], sfb[:N // 128]), d), d, M)
    one = torch.zeros(M, dtype=torch.int32, device="cuda")
    six = torch.arange(M, dtype=torch.int32, device="cuda") // (M // G)
    cases["contig-g1"] = (lambda: t.m_grouped_fp8_gemm_nt_contiguous((a8, sfa_mn), (b8g, sfbg), d, one), d, M)
    cases["contig-g6"] = (lambda: t.m_grouped_fp8_gemm_nt_contiguous((a8, sfa_mn), (b8g, sfbg), d, six), d, M // G)
    ends = torch.arange(1, G + 1, dtype=torch.int32, device="cuda") * (M // G)
    cases["psum-g6"] = (lambda: t.m_grouped_fp8_gemm_nt_contiguous((a8, sfa_mn), (b8g, sfbg), d, ends,
                                                                    use_psum_layout=True,
                                                                    expected_m_for_psum_layout=M // G), d, M // G)

    def masked(groups, m_max):
        rows = M // groups
        a3 = torch.zeros(groups, m_max, K, device="cuda", dtype=torch.bfloat16)
        a3[:, :rows] = a.view(groups, rows, K)
        a83, sfa3 = bench.fp8_rows(a3.view(-1, K))
        a83, sfa3 = a83.view(groups, m_max, K), bench.mn_major(sfa3.view(groups, m_max, -1))
        d3 = torch.empty(groups, m_max, N, device="cuda", dtype=torch.bfloat16)
        mm = torch.full((groups,), rows, device="cuda", dtype=torch.int32)
        fn = lambda: t.m_grouped_fp8_gemm_nt_masked((a83, sfa3), (b8g[:groups], sfbg[:groups]), d3, mm, rows)  # noqa
        return fn, d3.view(-1, N), rows

    cases["masked-g1"] = masked(1, M)
    cases["masked-g6"] = masked(G, M // G)
    cases["masked-g6-4k"] = masked(G, 4096)
    for name, (fn, out, rows) in cases.items():
        out.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        diff = float(calc_diff(out[:rows].float(), ref0[:rows]))
        us = bench.time_us(fn, reps)
        print(f"  {name:13s} {us:8.1f} us  {'ok' if diff < 1e-3 else f'WRONG({diff:.1e})'}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tiles", nargs="*")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--child", action="store_true")
    args = p.parse_args()
    if args.child:
        return run_one(args.reps)
    for tile in args.tiles or ["heuristic"]:
        env = dict(os.environ)
        if tile != "heuristic":
            env["TESSERA_FP8_CONFIG"] = tile
        print(f"== {tile}", flush=True)
        subprocess.run([sys.executable, __file__, "--child", "--reps", str(args.reps)], env=env, timeout=240)


if __name__ == "__main__":
    main()
