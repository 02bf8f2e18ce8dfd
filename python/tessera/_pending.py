"""Names of the DeepGEMM surface whose kernels tessera has not implemented yet.

Each exists (so `import tessera as deep_gemm` and feature probes work) and raises NotImplementedError, a subclass of
RuntimeError as DeepGEMM's errors are, naming the function. No name here silently returns.
"""
_PENDING = [
    # The BF16 / TF32 family: kernels and cuBLASLt wrappers written (tessera.bf16_gemm, tessera.cublaslt), routed
    # here once they have passed on the H200; einsum and the HyperConnection pre-norm GEMM to come.
    "bf16_gemm_nt", "bf16_gemm_nn", "bf16_gemm_tn", "bf16_gemm_tt", "m_grouped_bf16_gemm_nt_contiguous",
    "m_grouped_bf16_gemm_nn_contiguous", "m_grouped_bf16_gemm_nt_masked", "bf16_m_grouped_gemm_nt_masked",
    "k_grouped_bf16_gemm_tn_contiguous", "cublaslt_gemm_nt", "cublaslt_gemm_nn", "cublaslt_gemm_tn",
    "cublaslt_gemm_tt", "einsum", "tf32_hc_prenorm_gemm",
    # The DeepSeek V3.2 indexer family: MQA logits (normal, paged), and the FP8 GEMM variants it uses.
    "fp8_fp4_mqa_logits", "get_paged_mqa_logits_metadata", "fp8_fp4_paged_mqa_logits", "fp8_mqa_logits",
    "fp8_paged_mqa_logits", "fp8_gemm_nt_skip_head_mid", "fp8_einsum",
    # Mega MoE: SM100-only in DeepGEMM; fused MoE on Hopper is a later family.
    "fp8_fp4_mega_moe", "bf16_mega_moe",
]


def _make_pending(name, module="tessera"):
    def pending(*args, **kwargs):
        raise NotImplementedError(f"{module}.{name}: not implemented yet in this version of tessera")
    pending.__name__ = name
    pending.__qualname__ = name
    return pending


for _name in _PENDING:
    globals()[_name] = _make_pending(_name)

__all__ = list(_PENDING)
