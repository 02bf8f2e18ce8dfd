"""The wheel, as a user gets it: `pip wheel .` (scikit-build-core) builds it from this source tree, it is installed into
a fresh virtual environment, and from a directory outside the repository the installed package imports, the bare _C
module and the installed `tessera` command find the kernel headers inside that environment (never the source tree
the wheel was built from), and the command compiles one FP8 kernel with NVRTC (no GPU). One build, about half a
minute on two cores; everything lives in one temporary directory, removed at the end."""
import importlib.util
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def project_version():
    match = re.search(r"project\(tessera VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    assert match, "CMakeLists.txt: no project(tessera VERSION x.y.z)"
    return match.group(1)


def clean_env(cache):
    """The user's environment: nothing pointing into the build or source tree, a private kernel cache."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TESSERA_KERNEL_DIR", "TESSERA_BIN")}
    env["TESSERA_CACHE_DIR"] = str(cache)
    return env


def run(args, **kwargs):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, args))} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


class Installed:
    def __init__(self, tmp):
        self.tmp = tmp
        self.venv = tmp / "venv"
        self.python = self.venv / "bin" / "python"
        self.command = self.venv / "bin" / "tessera"
        self.cache = tmp / "cache"
        self.outside = tmp / "cwd"  # a working directory outside the repository
        self.outside.mkdir()

    def site_packages(self):
        out = run([self.python, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"], cwd=self.outside)
        return Path(out.stdout.strip())


@pytest.fixture(scope="module")
def installed():
    for module in ("scikit_build_core", "nanobind", "pip"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"building the wheel needs {module} (scripts/setup.sh installs it)")
    with tempfile.TemporaryDirectory(prefix="tessera-wheel-") as name:
        tmp = Path(name).resolve()
        env = clean_env(tmp / "cache")
        wheels = tmp / "wheels"
        run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "--no-build-isolation", "--no-index", "-w", wheels,
             "--config-settings=build-dir=" + str(tmp / "build")], env=env, timeout=1200)
        [wheel] = wheels.glob("tessera-*.whl")
        assert wheel.name.startswith(f"tessera-{project_version()}-"), wheel.name
        inst = Installed(tmp)
        run([sys.executable, "-m", "venv", inst.venv], env=env, timeout=300)
        # torch and numpy from this interpreter's environment, without a network: a .pth in the new environment names
        # its site-packages. (--system-site-packages would give the base interpreter's, which lack torch when this
        # interpreter is itself a virtual environment.) The new environment's own site-packages come first.
        parents = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
        (inst.site_packages() / "parent_environment.pth").write_text("".join(p + "\n" for p in sorted(parents)))
        run([inst.python, "-m", "pip", "install", "--no-deps", "--no-index", wheel], env=env, cwd=inst.outside,
            timeout=300)
        yield inst


def test_bare_module_finds_kernels_next_to_itself(installed):
    # _C alone, without the package's __init__: the library's own lookup, relative to the loaded _C.
    site = installed.site_packages()
    [module] = (site / "tessera").glob("_C*.so")
    code = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('_C', sys.argv[1]); "
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
            "print(m.system_info()['kernel_dir'])")
    out = run([installed.python, "-c", code, module], env=clean_env(installed.cache), cwd=installed.outside)
    assert Path(out.stdout.strip()) == site / "tessera" / "include"
    assert (site / "tessera" / "include" / "tessera" / "common.cuh").is_file()


def test_package_imports_from_the_environment(installed):
    if importlib.util.find_spec("torch") is None:
        pytest.skip("the package imports torch (scripts/setup.sh installs it)")
    code = ("import importlib.metadata, tessera; print(tessera.__version__); print(tessera.__file__); "
            "print(importlib.metadata.version('tessera')); print(tessera._C.system_info()['kernel_dir'])")
    out = run([installed.python, "-c", code], env=clean_env(installed.cache), cwd=installed.outside)
    version, init, dist_version, kernel_dir = out.stdout.split("\n")[:4]
    assert dist_version == project_version()
    assert project_version() in version, f"tessera.__version__ {version} does not name the package's {dist_version}"
    assert Path(init).is_relative_to(installed.venv), init
    assert Path(kernel_dir).is_relative_to(installed.venv), kernel_dir


def test_installed_command_uses_the_environment_kernels(installed):
    assert installed.command.is_file(), "the wheel installs no tessera command"
    env = clean_env(installed.cache)
    info = run([installed.command, "info"], env=env, cwd=installed.outside)
    [kernel_dir] = [line.split(":", 1)[1].strip() for line in info.stdout.splitlines() if line.startswith("kernels:")]
    assert Path(kernel_dir) == installed.venv / "share" / "tessera" / "kernels", info.stdout
    compiled = run([installed.command, "compile", "--compiler", "nvrtc", "--fp8", "dense:4096x576x7168"], env=env,
                   cwd=installed.outside, timeout=600)
    assert "fp8_gemm" in compiled.stdout, compiled.stdout
    assert any(p.is_file() for p in installed.cache.rglob("*")), "the kernel cache is empty after the compile"
