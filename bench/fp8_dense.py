"""deepgemm-dense benchmark: now the `deepgemm-dense` suite of bench/run.py; this wrapper keeps the old command.

    python bench/fp8_dense.py [run.py options]   ==   python bench/run.py --suite deepgemm-dense [options]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402

if __name__ == "__main__":
    run.main(["--suite", "deepgemm-dense"] + sys.argv[1:])
