"""DeepGEMM's `legacy` names (its Triton BF16 grouped GEMMs). In tessera they are to route to the BF16 kernels, which
have not landed: each name exists and raises NotImplementedError, so `deep_gemm.legacy` imports and probes work."""
from ._pending import _make_pending

__all__ = [
    "m_grouped_bf16_gemm_nt_contiguous_tl", "m_grouped_bf16_gemm_nn_contiguous_tl",
    "a_fused_m_grouped_bf16_gemm_nt_contiguous_tl", "a_fused_m_grouped_bf16_gemm_nn_contiguous_tl",
    "a_fused_k_grouped_bf16_gemm_tn_contiguous_tl", "b_fused_k_grouped_bf16_gemm_tn_contiguous_tl",
]

for _name in __all__:
    globals()[_name] = _make_pending(_name, "tessera.legacy")
