"""DeepGEMM, the peer every suite measures in the same process, and its recorded figures for when it cannot run.

The peer is a DeepGEMM v2.6.1 checkout built in place (bench/peer/build.sh) in the git-ignored folder peer/DeepGEMM,
or any `deep_gemm` already importable. Its compiled module crashes in std::regex against the libstdc++ torch brings
unless the system libstdc++ is loaded first: `reexec_with_system_libstdcxx` restarts the benchmark with it preloaded.
"""
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CHECKOUT = os.path.join(os.path.dirname(HERE), "peer", "DeepGEMM")
SYSTEM_LIBSTDCXX_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu")
REEXEC_MARK = "TESSERA_BENCH_REEXEC"


def built_checkout(path):
    """The checkout folder when it holds a built deep_gemm package, else None."""
    if path and glob.glob(os.path.join(path, "deep_gemm", "_C*.so")):
        return path
    return None


def system_libstdcxx():
    for d in SYSTEM_LIBSTDCXX_DIRS:
        lib = os.path.join(d, "libstdc++.so.6")
        if os.path.exists(lib):
            return lib
    return None


def reexec_with_system_libstdcxx(checkout):
    """Restarts this process with the system libstdc++ preloaded (once) when a built checkout is there and the preload
    is missing. Returns only when no restart is needed or possible."""
    if not built_checkout(checkout) or os.environ.get(REEXEC_MARK):
        return
    lib = system_libstdcxx()
    preload = os.environ.get("LD_PRELOAD", "")
    if lib is None or "libstdc++" in preload:
        return
    env = dict(os.environ, LD_PRELOAD=f"{lib} {preload}".strip(), **{REEXEC_MARK: "1"})
    env.setdefault("DG_JIT_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "tessera-bench-deep_gemm"))
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def load(checkout):
    """(module, description) for the peer, or (None, why not)."""
    path = built_checkout(checkout)
    if path and path not in sys.path:
        sys.path.insert(0, path)
    try:
        import deep_gemm
    except Exception as e:  # noqa: BLE001  (any failure means: no live peer, say why)
        return None, f"DeepGEMM not importable ({type(e).__name__}: {str(e)[:160]})"
    version = getattr(deep_gemm, "__version__", "?")
    return deep_gemm, f"DeepGEMM {version} from {os.path.dirname(os.path.dirname(deep_gemm.__file__))}{git_rev(path)}"


def git_rev(path):
    if not path:
        return ""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=path, capture_output=True, text=True,
                             check=True).stdout.strip()
        return f" (commit {rev})"
    except Exception:  # noqa: BLE001  (an exported checkout has no .git)
        return ""


# ---- recorded figures: DeepGEMM v2.6.1 on an H200 (shared/reference/h200-baselines.md), printed only when the peer
# cannot run, and then labelled "recorded, not live": machines of one model differ by up to 5 % in absolute time.
RECORDED_DENSE = {  # (M, N, K) -> µs, 1D2D, BF16 out
    (4096, 2112, 7168): 96.8, (4096, 576, 7168): 35.1, (4096, 24576, 1536): 231.6, (4096, 32768, 512): 127.8,
    (4096, 7168, 16384): 643.1, (4096, 4096, 7168): 169.8, (4096, 7168, 2048): 92.8,
    (128, 2112, 7168): 13.1, (128, 576, 7168): 11.4, (128, 24576, 1536): 18.6, (128, 32768, 512): 11.9,
    (128, 7168, 16384): 47.3, (128, 4096, 7168): 16.0, (128, 7168, 2048): 10.8,
    (1, 2112, 7168): 15.4, (1, 576, 7168): 11.3, (1, 24576, 1536): 19.0, (1, 32768, 512): 9.7,
    (1, 7168, 16384): 42.1, (1, 4096, 7168): 17.3, (1, 7168, 2048): 9.5,
}
RECORDED_CONTIGUOUS = {  # (groups, M total incl. padding, N, K) -> µs
    (4, 32640, 6144, 7168): 1940.3, (4, 33920, 7168, 3072): 1073.1, (4, 31232, 4096, 4096): 737.0,
    (4, 32640, 4096, 2048): 408.0, (8, 31872, 6144, 7168): 1924.0, (8, 32640, 7168, 3072): 1032.6,
    (8, 33024, 4096, 4096): 782.0, (8, 32512, 4096, 2048): 411.4,
}
RECORDED_MASKED = {  # (groups, expected M per group, valid M total, N, K) -> µs; A is [groups, 4096, K]
    (32, 192, 6221, 6144, 7168): 540.4, (32, 192, 6259, 4096, 2048): 131.2, (6, 1024, 6273, 6144, 7168): 403.7,
    (6, 1024, 6842, 4096, 2048): 102.9, (32, 20, 643, 6144, 7168): 371.2, (32, 20, 597, 4096, 2048): 85.5,
    (6, 20, 125, 6144, 7168): 80.0, (6, 20, 118, 4096, 2048): 23.7,
}
RECORDED_KGROUPED = {  # (groups, M, N, total K) -> µs, FP32 out, D = C + A·Bᵀ
    (4, 4096, 7168, 35200): 1987.0, (4, 7168, 2048, 32896): 953.0, (8, 4096, 7168, 30720): 1828.0,
    (8, 7168, 2048, 32896): 999.0, (16, 4096, 7168, 33792): 2215.0, (16, 7168, 2048, 31744): 1052.0,
}
RECORDED_HOST_US = 28.4  # one cached fp8_gemm_nt call from Python (m=128 n=576 k=7168)
RECORDED_COLD_COMPILE_S = {"nvrtc": 2.2, "nvcc": 4.0}  # the first call with an empty cache
