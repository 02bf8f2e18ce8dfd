#!/usr/bin/env python3
"""Runs one of DeepGEMM's own test files, unmodified, against tessera (the public acceptance suite).

    python tools/deepgemm_tests.py TESTS_DIR FILE [--only NAME[,NAME...]] [-- ARGS...]

TESTS_DIR is the tests/ folder of a DeepGEMM checkout kept outside the repository (peer/DeepGEMM/tests). tessera is
installed as `deep_gemm` first (tessera.install_as_deep_gemm), then FILE runs as __main__ from TESTS_DIR, as DeepGEMM
runs it; with --only, only the named test functions of FILE run (e.g. those whose kernels tessera has). With
--with-pending, the names tessera lists as awaiting a GPU run (tessera/_pending.py: written, not yet verified) are
bound to their implementations for this run, so DeepGEMM's tests can verify them."""
import argparse
import importlib
import importlib.util
import os
import runpy
import sys


def bind_pending(tessera):
    """Points each pending name at its implementation; prints the names that have none yet."""
    from tessera._pending import AWAITING_GPU
    missing = []
    for name, target in AWAITING_GPU.items():
        module, function = target.split(":")
        impl = getattr(importlib.import_module(f"tessera.{module}"), function, None) \
            if importlib.util.find_spec(f"tessera.{module}") else None
        if impl is None:
            missing.append(name)
        else:
            setattr(tessera, name, impl)
    if missing:
        print(f"deepgemm_tests.py: no implementation yet for {', '.join(missing)}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tests_dir")
    parser.add_argument("file")
    parser.add_argument("--only", help="comma-separated test functions of FILE to run instead of its __main__")
    parser.add_argument("--with-pending", action="store_true",
                        help="bind tessera's pending names to their implementations (GPU verification runs)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for FILE, after --")
    args = parser.parse_args()
    path = os.path.join(args.tests_dir, args.file)
    if not os.path.isfile(path):
        parser.error(f"no test file {path}")
    import tessera
    if args.with_pending:
        bind_pending(tessera)
    tessera.install_as_deep_gemm()
    os.chdir(args.tests_dir)
    sys.path.insert(0, os.path.abspath(args.tests_dir))
    sys.argv = [path] + [a for a in args.args if a != "--"]
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
