"""SASS checks that need no GPU: the grouped kernels' and the dense serial kernels' k-block loops keep their wgmma
descriptors in uniform registers.

When ptxas cannot prove the tile loop warp-uniform (a per-lane branch in the epilogue, a warp index read from
threadIdx without a shuffle), it keeps the descriptors in vector registers and moves them with R2UR before every
wgmma. In the masked kernel that was 16 R2UR per k-block and cost it 10-27 % against the dense kernel on the same work
(H200). Healthy loops carry at most two R2UR (a B-scale pointer, a stage base), fewer than their wgmma instructions;
the broken ones carry four per wgmma.

Compiles the grouped and dense catalogs (`tessera compile --suite fp8_grouped|fp8_gemm`, NVRTC) into fresh caches and
disassembles them with nvdisasm ($NVDISASM, PATH, or the PyPI package nvidia-cuda-nvdisasm that scripts/setup.sh
installs)."""
import glob
import importlib.util
import os
import re
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def find_nvdisasm():
    candidates = [os.environ.get("NVDISASM"), shutil.which("nvdisasm"), "/usr/local/cuda/bin/nvdisasm"]
    spec = importlib.util.find_spec("nvidia")
    for base in (spec.submodule_search_locations or []) if spec else []:
        candidates += sorted(glob.glob(os.path.join(base, "cu*", "bin", "nvdisasm")))
    return next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


def find_tessera_cli():
    candidates = [os.environ.get("TESSERA_BIN")]
    try:
        import tessera._C as c  # build/python/tessera/_C*.so -> build/tessera
        candidates.append(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(c.__file__))), "tessera"))
    except ImportError:
        pass
    candidates += [os.path.join(ROOT, "build", "tessera"), shutil.which("tessera")]
    return next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


def kb_loops(sass):
    """(QGMMA count, R2UR count) of each innermost loop (a backward branch holding no other such loop) whose body
    issues wgmma: the k-block loops. The tile loops around them may hold R2UR of their own."""
    instructions, labels, pending = [], {}, None
    for line in sass.splitlines():
        label = re.match(r"\s*\.L_x_(\d+):", line)
        if label:
            pending = label.group(1)
            continue
        ins = re.match(r"\s*/\*([0-9a-f]+)\*/\s+(.*?);", line)
        if ins:
            addr = int(ins.group(1), 16)
            instructions.append((addr, ins.group(2)))
            if pending is not None:
                labels[pending], pending = addr, None
    loops = []  # (start, end, wgmma, r2ur)
    for addr, op in instructions:
        target = re.search(r"BRA.*`\(\.L_x_(\d+)\)", op)
        if target and labels.get(target.group(1), addr) < addr:
            start = labels[target.group(1)]
            body = [o for a, o in instructions if start <= a <= addr]
            wgmma = sum("GMMA" in o for o in body)
            if wgmma:
                loops.append((start, addr, wgmma, sum(re.search(r"\bR2UR\b", o) is not None for o in body)))
    return [(w, r) for s, e, w, r in loops
            if not any((s2, e2) != (s, e) and s <= s2 and e2 <= e for s2, e2, _, _ in loops)]


def test_kb_loop_parser_on_a_synthetic_listing():
    sass = """
.L_x_1:
        /*0100*/                   R2UR UR8, R4 ;
        /*0110*/                   QGMMA.64x144x32.F32.E4M3.E4M3 R24, gdesc[UR8], R24 ;
        /*0120*/               @P0 BRA `(.L_x_1) ;
        /*0130*/                   EXIT ;
"""
    assert kb_loops(sass) == [(1, 1)]
    nested = """
.L_x_1:
        /*0100*/                   R2UR UR9, R5 ;
.L_x_2:
        /*0110*/                   QGMMA.64x144x32.F32.E4M3.E4M3 R24, gdesc[UR8], R24 ;
        /*0120*/               @P0 BRA `(.L_x_2) ;
        /*0130*/               @P1 BRA `(.L_x_1) ;
"""
    assert kb_loops(nested) == [(1, 0)]  # only the inner loop counts


def compiled_sass(tmp_path, suite, fp8=None, **env_vars):
    """{spec: SASS text} of every FP8 GEMM kernel of a catalog suite (or of one FP8 problem, `fp8` as the CLI's
    --fp8 takes it), compiled with NVRTC into a fresh cache, with env_vars set."""
    nvdisasm, cli = find_nvdisasm(), find_tessera_cli()
    if nvdisasm is None or cli is None:
        pytest.skip(f"needs nvdisasm ({nvdisasm}) and the tessera command ({cli})")
    cache = tmp_path / (suite if fp8 is None else "one")
    env = dict(os.environ, TESSERA_CACHE_DIR=str(cache), **env_vars)
    what = ["--suite", suite] if fp8 is None else ["--fp8", fp8]
    subprocess.run([cli, "compile", "--compiler", "nvrtc", *what], env=env, check=True,
                   capture_output=True, timeout=600)
    out = {}
    for cu in glob.glob(str(cache / "sm_90a" / "fp8_gemm" / "*" / "kernel.cu")):
        with open(cu) as f:
            spec = f.readline().strip().removeprefix("// Generated by tessera: ")
        with open(os.path.join(os.path.dirname(cu), "kernel.cubin"), "rb") as f:
            data = f.read()
        elf = tmp_path / "k.elf"
        elf.write_bytes(data[data.find(b"\x7fELF"):])
        out[spec] = subprocess.run([nvdisasm, "-c", str(elf)], check=True, capture_output=True, text=True).stdout
    return out


def wgmma_widths(sass):
    return sorted({int(w) for w in re.findall(r"QGMMA\.64x(\d+)x32", sass)})


def assert_uniform_descriptors(spec, loops):
    assert loops, f"no wgmma loop found in {spec}"
    for wgmma, r2ur in loops:
        assert r2ur < wgmma, f"{spec}: its k-block loop moves wgmma descriptors through vector registers " \
                             f"({r2ur} R2UR for {wgmma} wgmma)"


def test_grouped_kernels_keep_wgmma_descriptors_uniform(tmp_path):
    sass = compiled_sass(tmp_path, "fp8_grouped")
    for spec, text in sass.items():
        assert_uniform_descriptors(spec, kb_loops(text))
    assert len(sass) >= 10, f"only {len(sass)} grouped fp8_gemm kernels were built"
    # The tail-N loop: contiguous N = 4096 at 128x192 runs its last n-block (64 of 192 columns) with a 64-wide wgmma;
    # psum keeps the full width (a second loop cost it its uniform descriptors). The suite plans 128x256 tiles at
    # N = 4096, so the 128x192 tile is forced for both checks.
    for problem, kind, widths in (("contiguous:8192x4096x2048:4", 1, [64, 192]), ("psum:8160x4096x2048:4", 2, [192])):
        (tmp_path / f"kind{kind}").mkdir()
        forced = compiled_sass(tmp_path / f"kind{kind}", "fp8_grouped", fp8=problem, TESSERA_FP8_CONFIG="128x192")
        assert len(forced) == 1, list(forced)
        for spec, text in forced.items():
            assert "kBlockN=192," in spec and spec.endswith(f"kGemmKind={kind}}}"), spec
            assert_uniform_descriptors(spec, kb_loops(text))
            assert wgmma_widths(text) == widths, spec


def test_dense_serial_kernels_keep_wgmma_descriptors_uniform(tmp_path):
    """The dense catalog's kernels with one k-block loop (the serial mainloop of the M = 4096 and wgrad plans: 256x128,
    128x192, 128x144, 1D1D 128x152 ...): changes to a tile's start have moved 128x144's descriptors through R2UR
    before. The pipelined decode kernels (several loops) are left out: their loops carry 5-29 R2UR, which did not
    cost these memory-bound plans measurably on the H200."""
    # (With a tail-N loop a serial kernel has two loops, of two wgmma widths.)
    loops = {spec: (kb_loops(sass), wgmma_widths(sass)) for spec, sass in compiled_sass(tmp_path, "fp8_gemm").items()}
    # (A loop unrolled over the ring's stages, kUnrollStages, is three loops of one width: generic k-blocks until the
    # ring reaches stage 0, whole passes, the generic rest.)
    kernels = {spec: kb for spec, (kb, widths) in loops.items()
               if len(kb) == len(widths) <= 2 or (len(kb) == 3 and len(widths) == 1 and kb[0][0] == kb[2][0] < kb[1][0])}
    for spec, kb in kernels.items():
        assert_uniform_descriptors(spec, kb)
    assert len(kernels) >= 10, f"only {len(kernels)} serial dense kernels were built"
    # 128x144 tiles choose their B-scale boundary once per tile (kHoistFormer): one k-block loop per place the
    # boundary can fall (8 at 144 columns). Built from the stage's own address, their descriptors went through R2UR
    # (2 per wgmma); from stage 0's descriptor plus an add they stay uniform, 3.7 % faster on the H200.
    hoisted = {spec: kb for spec, (kb, widths) in loops.items()
               if "kBlockM=128,kBlockN=144," in spec and "kShapeN=576," in spec and "kMode=0," in spec}
    assert hoisted and all(len(kb) == 8 and all(w == 4 for w, _ in kb) for kb in hoisted.values()), hoisted
    for spec, kb in hoisted.items():
        assert all(r2ur == 0 for _, r2ur in kb), f"{spec}: R2UR in its hoisted loops {kb}"
