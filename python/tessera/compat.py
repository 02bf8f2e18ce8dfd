"""Running code written for DeepGEMM unmodified: `tessera.install_as_deep_gemm()` makes `import deep_gemm`, and the
submodules DeepGEMM's users and tests import (`deep_gemm.testing`, `deep_gemm.utils`, `deep_gemm.utils.layout`,
`deep_gemm.utils.math`, `deep_gemm.utils.dist`, `deep_gemm.legacy`), resolve to tessera's. An opt-in: tessera never
takes the name unasked, and a real DeepGEMM already imported is replaced only when asked."""
import sys


def install_as_deep_gemm(replace=False):
    """Registers tessera under the module name `deep_gemm` (and its submodules) and returns the tessera module.

    When a different `deep_gemm` is already imported, raises RuntimeError unless `replace` is true."""
    import tessera
    from tessera import layout, legacy, testing, utils
    from tessera.utils import dist, math
    current = sys.modules.get("deep_gemm")
    if current is not None and current is not tessera and not replace:
        raise RuntimeError(f"install_as_deep_gemm: a module 'deep_gemm' is already imported "
                           f"({getattr(current, '__file__', current)!r}); pass replace=True to shadow it")
    modules = {"deep_gemm": tessera, "deep_gemm.testing": testing, "deep_gemm.utils": utils,
               "deep_gemm.utils.layout": layout, "deep_gemm.utils.math": math, "deep_gemm.utils.dist": dist,
               "deep_gemm.legacy": legacy}
    for sub in ("bench", "numeric", "utils"):
        modules[f"deep_gemm.testing.{sub}"] = getattr(testing, sub, None) or sys.modules.get(f"tessera.testing.{sub}")
    for name, module in modules.items():
        if module is not None:
            sys.modules[name] = module
    return tessera
