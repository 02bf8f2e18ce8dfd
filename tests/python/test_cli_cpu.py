"""`tessera compile --fp8 KIND:MxNxK[:G[:E]]` (one problem's planned kernel, no GPU) and the TESSERA_FP8_CONFIG text it
honours, through the command itself: a forced stage count (:pP) reaches the kernel, and bad text fails with the
expectation named."""
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
    default = compile_fp8(tmp_path, "dense:4096x576x7168", "128x144")
    assert default.returncode == 0, default.stdout + default.stderr
    assert "kBlockN=144," in default.stdout and "kNumStages=5," in default.stdout, default.stdout
    forced = compile_fp8(tmp_path, "dense:4096x576x7168", "128x144:p4")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert "kNumStages=4," in forced.stdout and "kSplitK" not in forced.stdout, forced.stdout


@pytest.mark.parametrize("problem,config,expected", [
    ("dense:4096x576x7168", "128x144:p9", "takes 2 to 5 stages here, got 9"),
    ("dense:4096x576x7168", "128x144:p0", "expected 'BMxBN[:CMxCN][:sS][:o2][:pP]'"),
    ("dense:4096x576x7168", "128x144:p4:s2", "expected 'BMxBN[:CMxCN][:sS][:o2][:pP]'"),
    ("dense:4096x576", None, "(sizes MxNxK)"),
    ("blah:1x2x128", None, "(an unknown KIND)"),
])
def test_bad_text_fails_naming_the_expectation(tmp_path, problem, config, expected):
    out = compile_fp8(tmp_path, problem, config)
    assert out.returncode != 0 and expected in out.stdout + out.stderr, out.stdout + out.stderr


def test_suite_and_problem_exclude_each_other(tmp_path):
    out = compile_fp8(tmp_path, "dense:4096x576x7168", extra=("--suite", "fp8_gemm"))
    assert out.returncode != 0 and "expected --suite or --fp8, got both" in out.stdout + out.stderr
