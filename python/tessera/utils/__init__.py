"""tessera.utils: DeepGEMM-compatible `deep_gemm.utils`.

The quantisation maths is pure PyTorch (`.math`), the multi-GPU helpers live in `.dist`, and
the layout/alignment names are re-exported from the C++-backed `tessera.layout`.
"""
from .math import *  # noqa: F401,F403
from . import math, dist  # noqa: F401

# Re-exported so that `from tessera.utils import *` (and the top level) carries them, as in
# DeepGEMM. A plain import on purpose: a broken layout module must fail loudly at import.
# Keep this after `.math`: tessera.layout may itself import tessera.utils.math.
from .. import layout  # noqa: F401,E402
from ..layout import (  # noqa: F401,E402
    get_tma_aligned_size,
    get_mn_major_tma_aligned_tensor,
    get_mn_major_tma_aligned_packed_ue8m0_tensor,
    get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor,
    transform_sf_into_required_layout,
    set_mk_alignment_for_contiguous_layout,
    get_mk_alignment_for_contiguous_layout,
    get_theoretical_mk_alignment_for_contiguous_layout,
    get_m_alignment_for_contiguous_layout,
    get_k_alignment_for_contiguous_layout,
)

from .dist import init_dist, uneven_all_gather  # noqa: E402,F401

# What `from tessera.utils import *` (and so the top level) carries: the functions, not the submodules.
__all__ = [name for name in dir() if not name.startswith("_") and name not in ("math", "dist", "layout")]
