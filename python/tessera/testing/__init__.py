"""tessera.testing: DeepGEMM-compatible `deep_gemm.testing` (pure PyTorch).

As in DeepGEMM, the star-import below rebinds `tessera.testing.bench` from the sub-module to
the function of the same name; `numeric` and `utils` stay reachable as sub-modules.
"""
from . import numeric, utils  # noqa: F401
from .bench import *  # noqa: F401,F403
from .numeric import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403
