"""Import hygiene: importing tessera does not initialize CUDA (a forked child can still use it)."""
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")


def test_import_does_not_initialize_cuda():
    code = ("import torch, tessera, tessera.utils, tessera.testing; "
            "import sys; sys.exit(1 if torch.cuda.is_initialized() else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_surface_names_exist():
    import tessera
    for name in ["fp8_gemm_nt", "fp8_fp4_gemm_nt", "m_grouped_fp8_gemm_nt_masked", "get_num_sms", "set_num_sms",
                 "get_mn_major_tma_aligned_tensor", "transform_sf_into_required_layout", "per_token_cast_to_fp8",
                 "ceil_div", "align", "set_mk_alignment_for_contiguous_layout"]:
        assert hasattr(tessera, name), name
    assert callable(tessera.testing.calc_diff)


def test_cpu_tensors_are_rejected_with_a_clear_error():
    import tessera
    with pytest.raises(ValueError, match="expected a CUDA tensor, got a tensor on cpu"):
        tessera.get_mn_major_tma_aligned_tensor(torch.randn(8, 4))


def test_submodules_do_not_shadow_public_names():
    # A submodule named like a public function would replace it on import (tessera.einsum was one): every name of
    # DeepGEMM's surface stays a function after every submodule is imported.
    import importlib
    import pkgutil
    import tessera
    for info in pkgutil.iter_modules(tessera.__path__):
        importlib.import_module(f"tessera.{info.name}")
    for name in ("einsum", "fp8_einsum", "tf32_hc_prenorm_gemm", "fp8_fp4_mqa_logits", "fp8_gemm_nt_skip_head_mid",
                 "get_paged_mqa_logits_metadata", "bf16_gemm_nt", "cublaslt_gemm_nt"):
        assert callable(getattr(tessera, name)) and not isinstance(getattr(tessera, name), type(tessera)), name
