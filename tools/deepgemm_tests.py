#!/usr/bin/env python3
"""Runs one of DeepGEMM's own test files, unmodified, against tessera (the public acceptance suite).

    python tools/deepgemm_tests.py TESTS_DIR FILE [--only NAME[,NAME...]] [-- ARGS...]

TESTS_DIR is the tests/ folder of a DeepGEMM checkout kept outside the repository (peer/DeepGEMM/tests). tessera is
installed as `deep_gemm` first (tessera.install_as_deep_gemm), then FILE runs as __main__ from TESTS_DIR, as DeepGEMM
runs it; with --only, only the named test functions of FILE run (e.g. those whose kernels tessera has). With
--with-pending, the names tessera still lists as pending (tessera/_pending.py: written, not yet verified on a GPU)
are bound to their implementations for this run, so DeepGEMM's tests can verify them."""
import argparse
import importlib
import importlib.util
import os
import runpy
import sys

# Pending public name -> "module:function" of its implementation in the tessera package.
PENDING = {
    **{f"bf16_gemm_{x}": f"bf16_gemm:_bf16_gemm_{x}" for x in ("nt", "nn", "tn", "tt")},
    **{f"cublaslt_gemm_{x}": f"cublaslt:_cublaslt_gemm_{x}" for x in ("nt", "nn", "tn", "tt")},
    "m_grouped_bf16_gemm_nt_contiguous": "bf16_gemm:_m_grouped_bf16_gemm_nt_contiguous",
    "m_grouped_bf16_gemm_nn_contiguous": "bf16_gemm:_m_grouped_bf16_gemm_nn_contiguous",
    "m_grouped_bf16_gemm_nt_masked": "bf16_gemm:_m_grouped_bf16_gemm_nt_masked",
    "bf16_m_grouped_gemm_nt_masked": "bf16_gemm:_m_grouped_bf16_gemm_nt_masked",
    "k_grouped_bf16_gemm_tn_contiguous": "bf16_gemm:_k_grouped_bf16_gemm_tn_contiguous",
    "einsum": "einsum_gemm:_einsum",
    "fp8_einsum": "einsum_gemm:_fp8_einsum",
    "tf32_hc_prenorm_gemm": "hc_prenorm:_tf32_hc_prenorm_gemm",
    "fp8_gemm_nt_skip_head_mid": "fp8_gemm:_fp8_gemm_nt_skip_head_mid",
    "fp8_fp4_mqa_logits": "mqa_logits:_fp8_fp4_mqa_logits",
    "fp8_mqa_logits": "mqa_logits:_fp8_mqa_logits",
    "get_paged_mqa_logits_metadata": "paged_mqa_logits:_get_paged_mqa_logits_metadata",
    "fp8_fp4_paged_mqa_logits": "paged_mqa_logits:_fp8_fp4_paged_mqa_logits",
    "fp8_paged_mqa_logits": "paged_mqa_logits:_fp8_paged_mqa_logits",
}
LEGACY = ["m_grouped_bf16_gemm_nt_contiguous_tl", "m_grouped_bf16_gemm_nn_contiguous_tl",
          "a_fused_m_grouped_bf16_gemm_nt_contiguous_tl", "a_fused_m_grouped_bf16_gemm_nn_contiguous_tl",
          "a_fused_k_grouped_bf16_gemm_tn_contiguous_tl", "b_fused_k_grouped_bf16_gemm_tn_contiguous_tl"]


def bind_pending(tessera):
    """Points each pending name at its implementation; prints the names that have none yet."""
    missing = []
    for name, target in PENDING.items():
        module, function = target.split(":")
        impl = getattr(importlib.import_module(f"tessera.{module}"), function, None) \
            if importlib.util.find_spec(f"tessera.{module}") else None
        if impl is None:
            missing.append(name)
        else:
            setattr(tessera, name, impl)
    for name in LEGACY:
        setattr(tessera.legacy, name, getattr(tessera.legacy, f"_{name}"))
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
