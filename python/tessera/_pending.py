"""The names of DeepGEMM's surface that tessera does not implement.

Each exists (so `import tessera as deep_gemm` and feature probes work) and raises NotImplementedError, a subclass of
RuntimeError as DeepGEMM's errors are, naming the function. No name here silently returns.
"""
# Mega MoE is SM100-only in DeepGEMM; fused MoE on Hopper is a later family.
NOT_IMPLEMENTED = ["fp8_fp4_mega_moe", "bf16_mega_moe"]


def _make_not_implemented(name):
    def not_implemented(*args, **kwargs):
        raise NotImplementedError(f"tessera.{name}: not implemented in this version of tessera")
    not_implemented.__name__ = name
    not_implemented.__qualname__ = name
    return not_implemented


for _name in NOT_IMPLEMENTED:
    globals()[_name] = _make_not_implemented(_name)

__all__ = list(NOT_IMPLEMENTED)
