"""FP8 GEMM on the GPU: every SM90 dense shape DeepGEMM's test enumerates plus odd shapes, against a float64
reference on the dequantized inputs, calc_diff against the unquantized product, outputs poisoned (NaN) first."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

import tessera  # noqa: E402
from tessera.testing import calc_diff  # noqa: E402
from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402
from fp8_reference import dequant_blocks, dequant_rows  # noqa: E402

NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]


def check_1d2d(m, n, k, sfb_col_major=False):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a8, sfa = per_token_cast_to_fp8(a, use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(b, use_ue8m0=False)
    if sfb_col_major:
        sfb = sfb.T.contiguous().T
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
    assert not torch.isnan(d).any(), "unwritten or NaN outputs"
    ref = dequant_rows(a8, sfa) @ dequant_blocks(b8, sfb).T
    rel = ((d.double() - ref).norm() / ref.norm()).item()
    assert rel < 8e-3, f"relative error {rel} vs the dequantized reference (BF16 output rounding is ~2e-3)"
    # Against the unquantized product the FP8 rounding noise dominates; with a few dozen outputs its spread alone can
    # exceed DeepGEMM's 1e-3 bound (seen at 1x24x4096), so that check needs enough outputs to average over.
    if m * n >= 4096:
        assert calc_diff(d, a.double() @ b.double().T) < 1e-3


@pytest.mark.parametrize("m", [1, 128, 4096])
@pytest.mark.parametrize("n,k", NK)
def test_deepgemm_dense_shapes(m, n, k):
    check_1d2d(m, n, k)


@pytest.mark.parametrize("m,n,k", [(7, 2112, 7168), (65, 576, 7168), (129, 4096, 2048), (1000, 7168, 2048),
                                   (4097, 2112, 576), (4096, 7168, 2112), (33, 136, 1552), (4096, 576, 2112)])
def test_odd_shapes(m, n, k):
    check_1d2d(m, n, k)


# Shapes whose first heuristic pick spills with CUDA 13.0 (two-row-block 64x144 / 64x136 plans, found by a compile
# scan): the planner excludes the tile and plans again, so the call runs (it raised a CompileError before) and stays
# correct.
@pytest.mark.parametrize("m,n,k", [(128, 9216, 1024), (256, 4608, 2048), (128, 8704, 1536)])
def test_spilling_picks_are_replanned(m, n, k):
    check_1d2d(m, n, k)


def split_k_of(m, n, k):
    config = tessera._C.fp8_gemm_config(m, n, k, 0, torch.cuda.current_device())
    return int(config.split("split-K ")[1].split(",")[0])


# Decode shapes plan split-K (the CTAs of a cluster share each tile along K and reduce through distributed shared
# memory). Uneven K shares (K = 7296: 57 k-blocks over 8 or 4), a partial last k-block (K = 3216), N not a multiple
# of the tile, rows that end inside a wave (77, 100 rows of a 128-row tile) and a D with a row stride wider than N.
@pytest.mark.parametrize("m,n,k", [(1, 2112, 7296), (1, 2112, 3216), (33, 576, 7296), (100, 2112, 7296),
                                   (77, 2112, 7168), (64, 7168, 16384), (1, 24, 4096)])
def test_split_k_decode_shapes(m, n, k):
    assert split_k_of(m, n, k) > 1, "the heuristic was expected to split K here"
    check_1d2d(m, n, k)


# 64 < M <= 128 with enough columns: two 64-row blocks of one-wave tiles, no split-K (the second block's rows end
# early or inside the tile, K with a partial last block).
@pytest.mark.parametrize("m,n,k", [(100, 4096, 7296), (128, 7168, 16384), (65, 7168, 2048)])
def test_two_row_block_decode_shapes(m, n, k):
    config = tessera._C.fp8_gemm_config(m, n, k, 0, torch.cuda.current_device())
    assert config.startswith("block 64x") and split_k_of(m, n, k) == 1, config
    check_1d2d(m, n, k)


def test_split_k_strided_output_leaves_the_gap_alone():
    m, n, k = 3, 576, 7168
    assert split_k_of(m, n, k) > 1
    a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    wide = torch.full((m, n + 64), float("nan"), device="cuda", dtype=torch.bfloat16)
    tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), wide[:, :n])
    ref = dequant_rows(a8, sfa) @ dequant_blocks(b8, sfb).T
    assert ((wide[:, :n].double() - ref).norm() / ref.norm()).item() < 8e-3
    assert torch.isnan(wide[:, n:]).all(), "split-K wrote outside D"


def test_split_k_repeated_calls_are_deterministic():
    m, n, k = 1, 2112, 7168
    a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
    outs = []
    for _ in range(3):
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
        outs.append(d)
    assert torch.equal(outs[0], outs[1]) and torch.equal(outs[1], outs[2])


def test_col_major_sfb_and_unaligned_sfa_are_transformed():
    check_1d2d(300, 1024, 1024, sfb_col_major=True)


@pytest.mark.parametrize("m,n,k", [(7168, 4096, 2112), (2112, 4096, 7168), (576, 4096, 1536), (4096, 2048, 512),
                                   (100, 264, 1024)])
@pytest.mark.parametrize("in_place", [True, False])
def test_1d1d_wgrad_accumulates(m, n, k, in_place):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a8, sfa = per_token_cast_to_fp8(a, use_ue8m0=False)
    b8, sfb = per_token_cast_to_fp8(b, use_ue8m0=False)
    c = torch.randn(m, n, device="cuda", dtype=torch.float32)
    d = c.clone() if in_place else torch.full((m, n), float("nan"), device="cuda")
    tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=d if in_place else c, recipe=(1, 1, 128))
    assert not torch.isnan(d).any()
    ref = c.double() + dequant_rows(a8, sfa) @ dequant_rows(b8, sfb).T
    rel = ((d.double() - ref).norm() / ref.norm()).item()
    # Within each 128-K block the FP8 tensor cores accumulate with ~2^-13 relative precision (the reason scales are
    # promoted to FP32 registers every 128 K), so FP32 output lands near 1.3e-4 of the float64 reference.
    assert rel < 5e-4, rel
    assert calc_diff(d, c.double() + a.double() @ b.double().T) < 1e-3


def test_m_zero_returns_and_bad_inputs_raise_before_launch():
    a8, sfa = per_token_cast_to_fp8(torch.randn(64, 256, device="cuda"), use_ue8m0=False)
    b8, sfb = per_block_cast_to_fp8(torch.randn(128, 256, device="cuda"), use_ue8m0=False)
    empty = torch.empty(0, 128, device="cuda", dtype=torch.bfloat16)
    tessera.fp8_gemm_nt((a8[:0], sfa[:0]), (b8, sfb), empty)
    d = torch.full((64, 128), 7.0, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="argument 'a': expected dtype float8_e4m3fn"):
        tessera.fp8_gemm_nt((a8.bfloat16(), sfa), (b8, sfb), d)
    with pytest.raises(ValueError, match="argument 'b': expected \\[N, K\\]"):
        tessera.fp8_gemm_nt((a8, sfa), (b8[:, :128], sfb), d)
    with pytest.raises(ValueError, match="argument 'd': expected shape"):
        tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d[:, :64])
    with pytest.raises(ValueError, match="argument 'sfa': expected shape"):
        tessera.fp8_gemm_nt((a8, sfa[:, :1]), (b8, sfb), d)
    with pytest.raises(ValueError, match="K-major"):
        tessera.fp8_gemm_nn((a8, sfa), (b8.T.contiguous(), sfb.T), d)
    with pytest.raises(ValueError, match="CUDA tensor"):
        tessera.fp8_gemm_nt((a8.cpu(), sfa), (b8, sfb), d)
    with pytest.raises(NotImplementedError, match="recipe"):
        tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d, recipe=(1, 32, 32))
    with pytest.raises(NotImplementedError, match="BF16 output"):
        tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=d)
    assert (d == 7.0).all(), "a rejected call must not touch the output"


FORCED_CHECK = """
import sys, torch, tessera
sys.path.insert(0, {tests!r})
from fp8_reference import dequant_blocks, dequant_rows
from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
m, n, k = {m}, {n}, {k}
a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
tessera.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
ref = dequant_rows(a8, sfa) @ dequant_blocks(b8, sfb).T
rel = ((d.double() - ref).norm() / ref.norm()).item()
print(tessera._C.fp8_gemm_config(m, n, k, 0, 0), "rel", rel)
assert not torch.isnan(d).any() and rel < 8e-3, rel
"""


# Configs the heuristic rarely picks, forced through TESSERA_FP8_CONFIG (read once per process: one subprocess
# each): A multicast over an odd number of n-blocks (the one-wide strip), split-K with 2-warpgroup tiles and an uneven
# K share; the pipelined mainloop (one-wave tiles) with an odd and an even number of k-blocks, a single k-block, and
# multicast. Tail-N blocks (the last n-block's wgmma at its own width) whose columns straddle a 128-wide B-scale block:
# 560 = 2 x 192 + 176 (columns 384-559 over two scale blocks), 536 = 3 x 144 + 104 (columns 432-535). The dense serial
# loop unrolled over the ring's passes (tiles of more than two passes) entered at every stage: 517 tiles of 9 k-blocks
# on 132 CTAs, so the tiles of one CTA start at stages 0, 1, 2 and 3. Tiles of one pass (K = 512 at 4 stages: no loop,
# the ring back at stage 0 after each), with second tiles and a tail-N block. One-wave plans stage D over the A ring
# unasked (128x144 and 64x128 below). 128x256 runs in two N halves (3 stages), with a narrower last n-block (N = 4000,
# 1288) and several tiles per CTA.
@pytest.mark.parametrize("forced,m,n,k", [("256x128:1x2", 1000, 4224, 2048), ("128x144", 1000, 576, 1152),
                                          ("128x192:p5", 1000, 2104, 1152), ("64x128", 2000, 384, 128),
                                          ("128x192", 300, 560, 1024), ("128x192", 6000, 2104, 1152),
                                          ("128x192", 1000, 4000, 512), ("128x144", 70, 536, 1536),
                                          ("128x96:s4", 200, 1000 // 8 * 8, 1664), ("64x64:1x2", 300, 576, 512),
                                          ("128x128", 129, 256, 1536), ("64x128", 65, 384, 128),
                                          ("128x112:1x2", 300, 448, 2944), ("128x256", 1000, 4000, 2048),
                                          ("128x256", 4100, 1288, 640)])
def test_forced_configs(forced, m, n, k):
    import os
    import subprocess
    import sys
    env = dict(os.environ, TESSERA_FP8_CONFIG=forced)
    script = FORCED_CHECK.format(tests=os.path.dirname(os.path.abspath(__file__)), m=m, n=n, k=k)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    cm, cn = forced.split(":")[1].split("x") if ":" in forced and "x" in forced.split(":")[1] else ("1", "1")
    assert f"cluster {cm}x{cn}" in out.stdout, out.stdout


# Programmatic dependent launch: each GEMM may start before the kernel ahead of it has finished, and must still see
# its inputs complete. A chain where every GEMM reads what the launch before it wrote (a row-major SFA that tessera
# first transposes into its layout, then the previous GEMM's output re-quantized by torch) checks that; outputs are
# poisoned, inputs fresh each round.
def test_pdl_chain_reads_complete_inputs():
    m, n, k = 256, 2048, 2048
    previous = tessera.get_pdl()
    tessera.set_pdl(True)
    try:
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        b8, sfb = per_block_cast_to_fp8(b, use_ue8m0=False)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        for _ in range(4):
            a8, sfa = per_token_cast_to_fp8(x, use_ue8m0=False)
            sfa_row_major = sfa.contiguous()  # transformed by a tessera layout kernel right before the GEMM
            d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            tessera.fp8_gemm_nt((a8, sfa_row_major), (b8, sfb), d)
            ref = dequant_rows(a8, sfa) @ dequant_blocks(b8, sfb).T
            assert not torch.isnan(d).any()
            rel = ((d.double() - ref).norm() / ref.norm()).item()
            assert rel < 8e-3, rel
            x = (d[:, :k] / d[:, :k].abs().amax().clamp(min=1)).to(torch.bfloat16)  # next round's input
    finally:
        tessera.set_pdl(previous)
