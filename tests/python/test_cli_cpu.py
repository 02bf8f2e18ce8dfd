"""`tessera compile --fp8 KIND:MxNxK[:G[:E]]` (one problem's planned kernel, no GPU) and the TESSERA_FP8_CONFIG text it
honours, through the command itself: a forced stage count (:pP) and D over the ring (:d) reach the kernel, and bad
text fails with the expectation named."""
import os
import subprocess

import pytest

from test_sass_cpu import find_tessera_cli


def compile_fp8(tmp_path, problem, config=None, extra=(), d_in_ring=None, d_halves=None):
    cli = find_tessera_cli()
    if cli is None:
        pytest.skip("needs the tessera command")
    env = dict(os.environ, TESSERA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TESSERA_FP8_CONFIG", None)
    env.pop("TESSERA_FP8_D_IN_RING", None)
    env.pop("TESSERA_FP8_D_HALVES", None)
    if d_halves is not None:
        env["TESSERA_FP8_D_HALVES"] = d_halves
    if d_in_ring is not None:
        env["TESSERA_FP8_D_IN_RING"] = d_in_ring
    if config is not None:
        env["TESSERA_FP8_CONFIG"] = config
    return subprocess.run([cli, "compile", "--compiler", "nvrtc", "--fp8", problem, *extra], env=env,
                          capture_output=True, text=True, timeout=300)


def test_forced_stage_count_reaches_the_kernel(tmp_path):
    # 128 tiles on 132 CTAs: D goes over the ring, and its bytes make a sixth stage.
    default = compile_fp8(tmp_path, "dense:4096x576x7168", "128x144")
    assert default.returncode == 0, default.stdout + default.stderr
    assert "kBlockN=144," in default.stdout and "kNumStages=6," in default.stdout, default.stdout
    assert "kDInRing=1" in default.stdout, default.stdout
    off = compile_fp8(tmp_path, "dense:4096x576x7168", "128x144", d_in_ring="0")
    assert off.returncode == 0, off.stdout + off.stderr
    assert "kNumStages=5," in off.stdout and "kDInRing" not in off.stdout, off.stdout
    forced = compile_fp8(tmp_path, "dense:4096x576x7168", "128x144:p4")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert "kNumStages=4," in forced.stdout and "kSplitK" not in forced.stdout, forced.stdout
    assert "kDInRing" not in forced.stdout, forced.stdout


def test_d_halves_switch_reaches_the_masked_plan(tmp_path):
    # Masked 128x256 at K = 2048: D in halves makes the ring 4 stages, and the kernel builds without spilling (the
    # command fails on a spill); TESSERA_FP8_D_HALVES=0 keeps the whole D tile and 3 stages.
    default = compile_fp8(tmp_path, "masked:192x4096x2048:32:4096")
    assert default.returncode == 0, default.stdout + default.stderr
    assert "kBlockN=256," in default.stdout and "kNumStages=4," in default.stdout, default.stdout
    assert "kDHalves=1" in default.stdout, default.stdout
    off = compile_fp8(tmp_path, "masked:192x4096x2048:32:4096", d_halves="0")
    assert off.returncode == 0, off.stdout + off.stderr
    assert "kNumStages=3," in off.stdout and "kDHalves" not in off.stdout, off.stdout


def test_forced_d_in_ring_with_several_tiles_per_cta(tmp_path):
    plain = compile_fp8(tmp_path, "dense:4096x2112x7168", "128x144")  # 352 tiles: no D over the ring unasked
    assert plain.returncode == 0 and "kDInRing" not in plain.stdout, plain.stdout + plain.stderr
    forced = compile_fp8(tmp_path, "dense:4096x2112x7168", "128x144:p6:d")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert "kNumStages=6," in forced.stdout and "kDInRing=1" in forced.stdout, forced.stdout


@pytest.mark.parametrize("problem,config,expected", [
    ("dense:4096x576x7168", "128x144:p9", "takes 2 to 6 stages here, got 9"),
    ("dense:4096x2112x7168", "128x144:p9:d", "with D over the ring takes 3 to 6 stages here, got 9"),
    ("dense:4096x576x7168", "128x144:p0", "expected 'BMxBN[:CMxCN][:sS][:o2][:pP][:d]'"),
    ("dense:4096x576x7168", "128x144:p4:s2", "expected 'BMxBN[:CMxCN][:sS][:o2][:pP][:d]'"),
    ("dense:4096x576x7168", "128x144:d:p4", "expected 'BMxBN[:CMxCN][:sS][:o2][:pP][:d]'"),
    ("dense:4096x2112x7168", "128x144:1x2:d", "':d' (D over the ring) needs a dense 1D2D plan"),
    ("contiguous:4096x2112x7168:4", "128x144:d", "':d' (D over the ring) needs a dense 1D2D plan"),
    ("dense:4096x576", None, "(sizes MxNxK)"),
    ("blah:1x2x128", None, "(an unknown KIND)"),
])
def test_bad_text_fails_naming_the_expectation(tmp_path, problem, config, expected):
    out = compile_fp8(tmp_path, problem, config)
    assert out.returncode != 0 and expected in out.stdout + out.stderr, out.stdout + out.stderr


def test_suite_and_problem_exclude_each_other(tmp_path):
    out = compile_fp8(tmp_path, "dense:4096x576x7168", extra=("--suite", "fp8_gemm"))
    assert out.returncode != 0 and "expected --suite or --fp8, got both" in out.stdout + out.stderr
