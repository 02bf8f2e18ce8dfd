#!/usr/bin/env python3
"""Runs one of DeepGEMM's own test files, unmodified, against tessera (the public acceptance suite).

    python tools/deepgemm_tests.py TESTS_DIR FILE [--only NAME[,NAME...]] [-- ARGS...]

TESTS_DIR is the tests/ folder of a DeepGEMM checkout kept outside the repository (peer/DeepGEMM/tests). tessera is
installed as `deep_gemm` first (tessera.install_as_deep_gemm), then FILE runs as __main__ from TESTS_DIR, as DeepGEMM
runs it; with --only, only the named test functions of FILE run."""
import argparse
import os
import runpy
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tests_dir")
    parser.add_argument("file")
    parser.add_argument("--only", help="comma-separated test functions of FILE to run instead of its __main__")
    # FILE's own arguments follow "--"; splitting them off first lets --only stand before or after FILE
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args, extra = parser.parse_args(argv[:cut]), argv[cut + 1:]
    args.tests_dir = os.path.abspath(args.tests_dir)  # the file runs from inside it
    path = os.path.join(args.tests_dir, args.file)
    if not os.path.isfile(path):
        parser.error(f"no test file {path}")
    import tessera
    tessera.install_as_deep_gemm()
    os.chdir(args.tests_dir)
    sys.path.insert(0, os.path.abspath(args.tests_dir))
    sys.argv = [path] + extra
    if not args.only:
        runpy.run_path(path, run_name="__main__")
        return
    module = runpy.run_path(path, run_name="deepgemm_test")
    for name in args.only.split(","):
        if not callable(module.get(name)):
            sys.exit(f"deepgemm_tests.py: {args.file} has no test function {name!r}")
        print(f"== {args.file}::{name}", flush=True)
        module[name]()


if __name__ == "__main__":
    main()
