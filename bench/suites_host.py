"""Suites that time the host, not the kernels: host time per cached Python call (tessera and DeepGEMM in the same
process, the GPU kept busy so that launches queue and only the host path is timed), and cold compiles (every
benchmark kernel through `tessera compile` with NVRTC and NVCC, which needs no GPU; and the first Python call of
each library in a fresh process with an empty cache)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import deepgemm_peer as peer_module
from rows import OURS, PEER, Row, Suite

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def host_us_per_call(fn, calls=300, repeats=5):
    import torch
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        # ~50 ms of GPU work ahead of the launches; `calls` stays below the launch-queue depth, so that no launch
        # waits for a free slot (a full queue would time the GPU, not the host).
        torch.cuda._sleep(100_000_000)
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return sorted(times)[len(times) // 2]


def host(ctx):
    import torch
    utils = ctx.tessera.utils
    m, n, k = 128, 2112, 7168
    a8, sfa = utils.per_token_cast_to_fp8(torch.randn(m, k, device="cuda"), use_ue8m0=False)
    b8, sfb = utils.per_block_cast_to_fp8(torch.randn(n, k, device="cuda"), use_ue8m0=False)
    sfa = ctx.tessera.get_mn_major_tma_aligned_tensor(sfa)  # already in the kernels' layout: no transpose launched
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    libs = {OURS: ctx.tessera}
    if ctx.peer is not None:
        libs[PEER] = ctx.peer
    for name, lib in libs.items():
        us = host_us_per_call(lambda: lib.fp8_gemm_nt((a8, sfa), (b8, sfb), d))
        recorded = peer_module.RECORDED_HOST_US if name == PEER else None
        yield Row(f"{name}.fp8_gemm_nt {m}x{n}x{k} (cached)", {"library": name}, bucket="host",
                  result=dict(host_us=us, recorded_us=recorded))
    a16 = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b16 = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    for name, lib in libs.items():
        yield Row(f"{name}.bf16_gemm_nt {m}x{n}x{k} (cached)", {"library": name}, bucket="host",
                  result=dict(host_us=host_us_per_call(lambda: lib.bf16_gemm_nt(a16, b16, d))))
    c = ctx.tessera._C
    yield Row("tessera._C.fp8_gemm_nt (binding + launch)", {"library": OURS}, bucket="host",
              result=dict(host_us=host_us_per_call(lambda: c.fp8_gemm_nt(a8, sfa, b8, sfb, d, 0))))
    yield Row("torch.empty_strided (reference point)", {}, bucket="host",
              result=dict(host_us=host_us_per_call(lambda: torch.empty_strided((4096, 56), (1, 4096), device="cuda"))))


def tessera_command():
    """The `tessera` command: $TESSERA_BIN, else a build tree's, else the one on PATH."""
    for path in (os.environ.get("TESSERA_BIN"), os.path.join(ROOT, "build-gpu", "tessera"),
                 os.path.join(ROOT, "build", "tessera"), shutil.which("tessera")):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


# One line per kernel of `tessera compile`: "[i/total] <elapsed> s  <compiler> compiled|cached  <s> s  regs <r>  spills
# <bytes>  <problem>  <spec>" (NVRTC on some installs returns no ptxas report: registers and spills then print as -1).
COMPILED = re.compile(r"^\[\d+/\d+\]\s+[0-9.]+ s\s+(nvrtc|nvcc)\s+compiled\s+([0-9.]+) s\s+regs\s+(-?\d+)\s+spills (-?\d+)"
                      r"\s+(\S+)\s+(\S+)")


FIRST_CALL = """
import sys, time
sys.path[:0] = {paths!r}
import torch
import {module} as lib
from tessera.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
m, n, k = {m}, {n}, {k}
a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16), use_ue8m0=False)
d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
start = time.perf_counter()
lib.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
torch.cuda.synchronize()
print("FIRST_CALL_S", time.perf_counter() - start)
"""


def first_call(module, compiler, m, n, k, peer_checkout):
    """Seconds of one library's first fp8_gemm_nt call (compile, load, launch) in a fresh process, empty cache."""
    import tessera
    paths = [os.path.dirname(os.path.dirname(tessera.__file__))]
    if module == PEER and peer_checkout:
        paths.append(peer_checkout)
    with tempfile.TemporaryDirectory(prefix="tessera-cold-") as cache:
        env = dict(os.environ, TESSERA_CACHE_DIR=cache, DG_JIT_CACHE_DIR=cache, TESSERA_JIT_COMPILER=compiler)
        if module == PEER and compiler == "nvrtc":
            env["DG_JIT_USE_NVRTC"] = "1"
        script = FIRST_CALL.format(paths=paths, module=module, m=m, n=n, k=k)
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    line = next((x for x in out.stdout.splitlines() if x.startswith("FIRST_CALL_S")), None)
    if line is None:
        raise RuntimeError(f"{module} first call ({compiler}) failed: {out.stderr.strip()[-300:]}")
    return float(line.split()[1])


def compile_cold(ctx):
    command = tessera_command()
    if command is None:
        raise RuntimeError("no `tessera` command found (set TESSERA_BIN)")
    for compiler in ("nvrtc", "nvcc"):
        with tempfile.TemporaryDirectory(prefix="tessera-cold-") as cache:
            start = time.perf_counter()
            out = subprocess.run([command, "compile", "--compiler", compiler, "--suite", "fp8_gemm"],
                                 env=dict(os.environ, TESSERA_CACHE_DIR=cache), capture_output=True, text=True)
            wall = time.perf_counter() - start
        if out.returncode != 0:
            raise RuntimeError(f"tessera compile --compiler {compiler} failed: {out.stderr.strip()[-300:]}")
        found = [m for m in map(COMPILED.search, out.stdout.splitlines()) if m]
        if not found:
            raise RuntimeError(f"tessera compile --compiler {compiler}: no kernel lines in its output")
        times = sorted(float(m.group(2)) for m in found)
        yield Row(f"{compiler}: {len(found)} kernels, median per kernel", {"compiler": compiler}, bucket="compile",
                  result=dict(compile_s=times[len(times) // 2], max_s=times[-1], wall_per_kernel_s=wall / len(found),
                              recorded_us=None))
    if ctx.tessera is None:
        return
    libs = [OURS] + ([PEER] if ctx.peer is not None else [])
    for compiler, (m, n, k) in (("nvrtc", (256, 3584, 5120)), ("nvcc", (256, 3072, 5120))):
        for lib in libs:
            yield Row(f"{lib} first Python call, {compiler}, {m}x{n}x{k}", {"compiler": compiler, "library": lib},
                      bucket="compile", result=dict(compile_s=first_call(lib, compiler, m, n, k, ctx.peer_checkout),
                                                    recorded_s=peer_module.RECORDED_COLD_COMPILE_S[compiler]
                                                    if lib == PEER else None))


HOST_COLUMNS = [("host_us", "host_us", ".2f"), ("recorded_us", "recorded_us", ".1f")]
COMPILE_COLUMNS = [("compile_s", "compile_s", ".3f"), ("max_s", "max_s", ".3f"),
                   ("wall_per_kernel_s", "wall_per_kernel_s", ".3f"), ("dg_recorded_s", "recorded_s", ".1f")]

SUITES = [Suite("host", host), Suite("compile", compile_cold, needs_gpu=False)]
COLUMNS = {"host": HOST_COLUMNS, "compile": COMPILE_COLUMNS}
