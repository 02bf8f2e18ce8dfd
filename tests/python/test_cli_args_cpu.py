"""The `tessera` command's arguments, through the command itself (no GPU): a usage mistake exits 2 with one message
line and the usage line on stderr and compiles nothing; --help and --version answer on stdout; a problem that could
not run is refused in one line before any compile; --fp8 (repeatable), --shapes and --num-sms choose what is
compiled, one progress line per kernel."""
import os
import re
import subprocess

import pytest

from test_sass_cpu import ROOT, find_tessera_cli


def run(tmp_path, *args, env_extra=None):
    cli = find_tessera_cli()
    if cli is None:
        pytest.skip("needs the tessera command")
    env = dict(os.environ, TESSERA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TESSERA_FP8_CONFIG", None)
    env.update(env_extra or {})
    return subprocess.run([cli, *args], env=env, capture_output=True, text=True, timeout=300)


def cache_files(tmp_path):
    cache = tmp_path / "cache"
    return [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []


COMPILE_USAGE = "usage: tessera compile [--compiler nvrtc|nvcc|both]"


@pytest.mark.parametrize("args,message", [
    (["compile", "--bogus-flag"], "tessera compile: unknown option '--bogus-flag'"),
    (["compile", "--suite=layoutt"],
     "tessera compile: option '--suite': expected one of layout, fp8_gemm, fp8_grouped, bf16, hc_prenorm, indexer, all, got 'layoutt'"),
    (["compile", "layout"], "tessera compile: unexpected argument 'layout' (options start with --)"),
    (["compile", "--suite"], "tessera compile: option '--suite' needs a value"),
    (["compile", "--suite", "--fp8", "dense:128x128x128"], "tessera compile: option '--suite' needs a value"),
    (["compile", "--suite=", "layout"], "tessera compile: option '--suite' needs a value"),
    (["compile", "--suite", "layout", "--suite", "all"], "tessera compile: option '--suite' given twice"),
    (["compile", "--compiler", "clang"],
     "tessera compile: option '--compiler': expected nvrtc, nvcc or both, got 'clang'"),
    (["compile", "--num-sms", "0"], "tessera compile: option '--num-sms': expected a positive integer, got '0'"),
    (["compile", "--num-sms=12x"], "tessera compile: option '--num-sms': expected a positive integer, got '12x'"),
    (["compile", "--suite", "layout", "--shapes", "x.txt"], "tessera compile: expected --suite or --shapes, got both"),
])
def test_compile_usage_mistakes_exit_2_and_compile_nothing(tmp_path, args, message):
    out = run(tmp_path, *args)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 2 and lines[0] == message and lines[1].startswith(COMPILE_USAGE), out.stderr
    assert cache_files(tmp_path) == []


@pytest.mark.parametrize("args,message", [
    (["info", "--bogus"], "tessera info: unknown option '--bogus'"),
    (["info", "extra"], "tessera info: unexpected argument 'extra' (options start with --)"),
    (["bench", "--json"], "tessera bench: option '--json' needs a value"),
    (["bench", "--suite", "layout"], "tessera bench: unknown option '--suite'"),
])
def test_other_commands_refuse_unknown_arguments(tmp_path, args, message):
    out = run(tmp_path, *args)
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 2 and lines[0] == message and lines[1].startswith(f"usage: tessera {args[0]}"), out.stderr


@pytest.mark.parametrize("args", [[], ["frobnicate"], ["--bogus"], ["--version", "now"]])
def test_no_or_unknown_command_exits_2_with_usage(tmp_path, args):
    out = run(tmp_path, *args)
    assert out.returncode == 2 and "usage: tessera <command>" in out.stderr, out.stderr
    assert out.stdout == ""


@pytest.mark.parametrize("command", ["info", "compile", "bench"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_per_command(tmp_path, command, flag):
    out = run(tmp_path, command, flag)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout.startswith(f"usage: tessera {command}"), out.stdout
    assert cache_files(tmp_path) == []


def test_compile_help_says_what_kernels_are_specialized_for(tmp_path):
    text = " ".join(run(tmp_path, "compile", "--help").stdout.split())
    assert "specialized per N, K" in text and "M and E only choose the tile" in text, text
    assert "--num-sms N" in text and "132, the H200's" in text, text
    assert "--shapes FILE" in text and "--fp8 PROBLEM" in text and "repeatable" in text, text


def test_bench_help_says_what_it_measures(tmp_path):
    text = " ".join(run(tmp_path, "bench", "--help").stdout.split())
    assert "Host time per cached call" in text and "bench/run.py" in text and "--json FILE" in text, text


def test_top_level_help_and_version(tmp_path):
    out = run(tmp_path, "--help")
    assert out.returncode == 0 and out.stdout.startswith("usage: tessera <command>"), out.stdout + out.stderr
    for command in ("info", "compile", "bench"):
        assert f"tessera {command}" in out.stdout
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        version = re.search(r"project\(tessera VERSION ([0-9.]+)", f.read()).group(1)
    out = run(tmp_path, "--version")
    assert out.returncode == 0 and out.stdout == f"tessera {version}\n", out.stdout + out.stderr


@pytest.mark.parametrize("problem,message", [
    ("dense:1x2x3", "tessera compile: dense:1x2x3: argument 'k': expected K > 0 and a multiple of 16"),
    ("dense:128x2x128", "tessera compile: dense:128x2x128: argument 'n': expected N > 0 and a multiple of 8"),
    ("wgrad:128x6x128", "tessera compile: wgrad:128x6x128: argument 'n': expected N > 0 and a multiple of 4"),
    ("kgrouped:128x128x0:500", "tessera compile: kgrouped:128x128x0:500: argument 'groups': at most 120 groups"),
    ("blah:1x2x128", "tessera compile: fp8 problem: expected KIND:MxNxK[:G[:E]]"),
])
def test_problems_that_could_not_run_are_refused_in_one_line(tmp_path, problem, message):
    # A good problem first: nothing is compiled before every problem has been checked.
    out = run(tmp_path, "compile", "--compiler", "nvrtc", "--fp8", "dense:128x576x7168", "--fp8", problem)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), out.stderr
    assert cache_files(tmp_path) == []


def test_a_bad_line_of_a_shapes_file_is_named(tmp_path):
    shapes = tmp_path / "shapes.txt"
    shapes.write_text("dense:128x576x7168\n# fine so far\ndense:128x576x100\n")
    out = run(tmp_path, "compile", "--shapes", str(shapes))
    assert out.returncode == 2 and out.stderr.splitlines() == [
        f"tessera compile: {shapes}:3: dense:128x576x100: argument 'k': expected K > 0 and a multiple of 16 "
        "(TMA rows of 16 bytes), got K = 100"], out.stderr
    missing = tmp_path / "missing.txt"
    out = run(tmp_path, "compile", "--shapes", str(missing))
    assert out.returncode == 2 and out.stderr == f"tessera compile: --shapes: cannot read '{missing}'\n", out.stderr
    assert cache_files(tmp_path) == []


PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] +\d+\.\d s  nvrtc (compiled +\d+\.\d\d s  regs +-?\d+  spills 0|cached) +"
                      r"(\S+)  (fp8_gemm\{.*\})$")


def test_fp8_and_shapes_fill_the_cache_for_the_given_sm_count(tmp_path):
    shapes = tmp_path / "shapes.txt"
    shapes.write_text("# decode and prefill of one layer\n  dense:4096x576x7168   # prefill\n\n"
                      "masked:4096x4096x2048:6:1024\n")
    args = ["compile", "--compiler=nvrtc", "--num-sms", "114", "--fp8", "dense:4096x576x7168",
            "--fp8=wgrad:7168x4096x2048", "--shapes", str(shapes)]
    out = run(tmp_path, *args)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("compiling 3 kernels with nvrtc for 114 SMs (--num-sms) into "), lines[0]
    rows = [PROGRESS.match(line) for line in lines[1:-1]]
    assert all(rows), lines
    # dense:4096x576x7168 twice (--fp8 and the file): one kernel
    assert [(r.group(1), r.group(2), r.group(4)) for r in rows] == [
        ("1", "3", "dense:4096x576x7168"), ("2", "3", "wgrad:7168x4096x2048"),
        ("3", "3", "masked:4096x4096x2048:6:1024")]
    assert all(r.group(3).startswith("compiled") for r in rows), lines
    assert all("kNumSMs=114," in r.group(5) for r in rows), lines
    assert lines[-1].startswith("3 kernels: 3 compiled, 0 from the cache, 0 failed"), lines[-1]
    assert len(cache_files(tmp_path)) >= 3
    again = run(tmp_path, *args)
    assert again.returncode == 0 and again.stdout.splitlines()[-1].startswith("3 kernels: 0 compiled, 3 from the cache")


def test_suite_layout_compiles_the_layout_kernels(tmp_path):
    out = run(tmp_path, "compile", "--suite", "layout", "--compiler", "nvrtc", "--num-sms", "132")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("compiling 3 kernels with nvrtc for 132 SMs"), lines[0]
    assert [line.split()[0] for line in lines[1:4]] == ["[1/3]", "[2/3]", "[3/3]"], lines
    assert "transpose_fp32{" in out.stdout and lines[-1].startswith("3 kernels: 3 compiled"), out.stdout


def test_messages_carry_one_prefix(tmp_path):
    for args in (["compile", "--fp8", "dense:1x2x3"], ["compile", "--bogus"], ["compile", "--fp8", "x"]):
        err = run(tmp_path, *args).stderr
        assert err.count("tessera compile") == 1 + err.count("usage: tessera compile"), err
