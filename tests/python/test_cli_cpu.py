"""`tessera compile --fp8 KIND:MxNxK[:G[:E]]` (one problem's planned kernel, no GPU) and the TESSERA_FP8_CONFIG text it
honours, through the command itself: a forced stage count (:pP), A multicast (:1x2) and split-K (:sS) reach the
kernel, and bad text fails with the expectation named. `--bf16` problems and 'bf16 ' lines of a shapes file: planned,
compiled once each, refused before compiling when they could not run."""
import os
import subprocess

import pytest

from test_sass_cpu import find_tessera_cli


def compile_fp8(tmp_path, problem, config=None, extra=()):
    cli = find_tessera_cli()
    if cli is None:
        pytest.skip("needs the tessera command")
    env = dict(os.environ, TESSERA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TESSERA_FP8_CONFIG", None)
    if config is not None:
        env["TESSERA_FP8_CONFIG"] = config
    return subprocess.run([cli, "compile", "--compiler", "nvrtc", "--fp8", problem, *extra], env=env,
                          capture_output=True, text=True, timeout=300)


def test_forced_stage_count_reaches_the_kernel(tmp_path):
    # 128 tiles on 132 CTAs: one wave, so D goes over the ring and its bytes make a sixth stage.
    default = compile_fp8(tmp_path, "dense:4096x576x7168", "128x144")
    assert default.returncode == 0, default.stdout + default.stderr
    assert "kBlockN=144," in default.stdout and "kNumStages=6," in default.stdout, default.stdout
    assert "kDInRing=1" in default.stdout, default.stdout
    forced = compile_fp8(tmp_path, "dense:4096x576x7168", "128x144:p4")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert "kNumStages=4," in forced.stdout and "kSplitK" not in forced.stdout, forced.stdout
    assert "kDInRing" not in forced.stdout, forced.stdout


def test_forced_multicast_and_split_reach_the_kernel(tmp_path):
    pair = compile_fp8(tmp_path, "dense:4096x576x7168", "128x144:1x2")
    assert pair.returncode == 0 and "kClusterN=2," in pair.stdout, pair.stdout + pair.stderr
    split = compile_fp8(tmp_path, "dense:4096x576x7168", "128x144:s2")
    assert split.returncode == 0 and "kSplitK=2" in split.stdout, split.stdout + split.stderr


def test_masked_plan_stages_d_in_halves(tmp_path):
    # Masked 128x256 at K = 2048: D in halves makes the ring 4 stages, and the kernel builds without spilling (the
    # command fails on a spill).
    out = compile_fp8(tmp_path, "masked:192x4096x2048:32:4096")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "kBlockN=256," in out.stdout and "kNumStages=4," in out.stdout, out.stdout
    assert "kDHalves=1" in out.stdout, out.stdout


GRAMMAR = "expected 'BMxBN[:1x2][:sS][:pP]'"


@pytest.mark.parametrize("problem,config,expected", [
    ("dense:4096x576x7168", "128x144:p9", "takes 2 to 6 stages here, got 9"),
    ("dense:4096x576x7168", "128x144:p0", GRAMMAR),
    ("dense:4096x576x7168", "128x144:p4:s2", GRAMMAR),
    ("dense:4096x576x7168", "128x144:d", GRAMMAR),   # D over the ring is the planner's call, not a switch
    ("dense:4096x576x7168", "128x144:2x1", GRAMMAR),  # B multicast is not built
    ("dense:4096x576x7168", "128x144:o2", GRAMMAR),   # two CTAs per SM are not built
    ("dense:4096x576", None, "(sizes MxNxK)"),
    ("blah:1x2x128", None, "(an unknown KIND)"),
])
def test_bad_text_fails_naming_the_expectation(tmp_path, problem, config, expected):
    out = compile_fp8(tmp_path, problem, config)
    assert out.returncode != 0 and expected in out.stdout + out.stderr, out.stdout + out.stderr


def test_suite_and_problem_exclude_each_other(tmp_path):
    out = compile_fp8(tmp_path, "dense:4096x576x7168", extra=("--suite", "fp8_gemm"))
    assert out.returncode != 0 and "expected --suite or --fp8, got both" in out.stdout + out.stderr


def compile_cli(tmp_path, *args):
    cli = find_tessera_cli()
    if cli is None:
        pytest.skip("needs the tessera command")
    env = dict(os.environ, TESSERA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TESSERA_FP8_CONFIG", None)
    return subprocess.run([cli, "compile", "--compiler", "nvrtc", *args], env=env, capture_output=True, text=True,
                          timeout=300)


def test_bf16_problems_and_shapes_files(tmp_path):
    # --bf16 and 'bf16 ' lines of a shapes file beside FP8 lines: each planned kernel once (the decode problem
    # appears twice), the layout's majors, FP32 D and C in the spec.
    shapes = tmp_path / "shapes.txt"
    shapes.write_text("# a model's GEMMs\nbf16 nt:1x4096x7168\nbf16 tn-f32-c:2112x4096x7168  # wgrad\n"
                      "dense:128x576x7168\n")
    out = compile_cli(tmp_path, "--bf16", "nt:1x4096x7168", "--shapes", str(shapes))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "compiling 3 kernels" in out.stdout, out.stdout
    lines = [line for line in out.stdout.splitlines() if " compiled " in line]
    assert len(lines) == 3, out.stdout
    wgrad = next(line for line in lines if "tn-f32-c:2112x4096x7168" in line)
    assert "kMajorA=1,kMajorB=1,kOutF32=1,kAccumulate=1" in wgrad, wgrad
    assert any("dense:128x576x7168" in line and "fp8_gemm{" in line for line in lines), out.stdout


@pytest.mark.parametrize("problem,expected", [
    ("nt:1x4096x7100", "nt:1x4096x7100: argument 'k': expected > 0 and a multiple of 8"),
    ("masked:64x4096x2000:2", "argument 'k': expected > 0 and a multiple of 64"),
    ("dense:128x128x128", "(an unknown KIND)"),
])
def test_bad_bf16_problems_fail_before_compiling(tmp_path, problem, expected):
    out = compile_cli(tmp_path, "--bf16", problem)
    assert out.returncode == 2 and expected in out.stdout + out.stderr, out.stdout + out.stderr
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.cubin"))
