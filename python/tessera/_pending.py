"""The names of DeepGEMM's surface whose tessera implementation is written but not yet verified on a GPU, and the
names tessera does not implement.

Each public name here exists (so `import tessera as deep_gemm` and feature probes work) and raises
NotImplementedError, a subclass of RuntimeError as DeepGEMM's errors are, naming the function and, where one exists,
the implementation that awaits its GPU run. No name here silently returns. A name leaves AWAITING_GPU when its GPU
tests pass on the H200 (tools/deepgemm_tests.py --with-pending runs DeepGEMM's own tests through the implementations
listed here); it is then imported from its module in tessera/__init__.py.
"""
# Public name -> "module:function" of its implementation in this package.
AWAITING_GPU = {
    "tf32_hc_prenorm_gemm": "hc_prenorm:_tf32_hc_prenorm_gemm",
    "fp8_fp4_mqa_logits": "mqa_logits:_fp8_fp4_mqa_logits",
    "fp8_mqa_logits": "mqa_logits:_fp8_mqa_logits",
}
# Not implemented: Mega MoE is SM100-only in DeepGEMM; fused MoE on Hopper is a later family.
NOT_IMPLEMENTED = ["fp8_fp4_mega_moe", "bf16_mega_moe"]

_PENDING = list(AWAITING_GPU) + NOT_IMPLEMENTED


def _make_pending(name, module="tessera", implementation=None):
    reason = (f"implemented as tessera.{implementation.replace(':', '.')}, awaiting verification on a GPU"
              if implementation else "not implemented in this version of tessera")
    def pending(*args, **kwargs):
        raise NotImplementedError(f"{module}.{name}: {reason}")
    pending.__name__ = name
    pending.__qualname__ = name
    return pending


for _name in _PENDING:
    globals()[_name] = _make_pending(_name, implementation=AWAITING_GPU.get(_name))

__all__ = list(_PENDING)
