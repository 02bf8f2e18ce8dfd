"""Runs the pytest suite for ctest: `run_pytest.py cpu|gpu DIR`.

cpu: tests not marked gpu. gpu: tests marked gpu; exits 77 (ctest: skipped) when torch or a CUDA GPU is missing,
so a machine without a GPU never reports GPU tests as passed.
"""
import importlib.util
import subprocess
import sys

SKIPPED = 77


def main() -> int:
    kind, directory = sys.argv[1], sys.argv[2]
    if kind == "gpu":
        if importlib.util.find_spec("torch") is None:
            print("SKIPPED: torch is not installed")
            return SKIPPED
        # Probe in a child so that this process never initializes CUDA.
        probe = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
        if subprocess.run([sys.executable, "-c", probe]).returncode != 0:
            print("SKIPPED: no CUDA GPU")
            return SKIPPED
    marker = "gpu" if kind == "gpu" else "not gpu"
    import pytest
    code = pytest.main([directory, "-m", marker, "-q", "-rs", "-p", "no:cacheprovider"])
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        print("SKIPPED: no tests selected")
        return SKIPPED
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
