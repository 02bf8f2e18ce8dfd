"""tessera: FP8/BF16 tensor-core kernels for NVIDIA Hopper, a drop-in for DeepGEMM's SM90 API.

    import tessera as deep_gemm

Importing tessera does not initialize CUDA: the driver is loaded at the first kernel call, so a forked process can
still use CUDA, and the package imports on machines without a GPU.
"""
import torch as _torch  # noqa: F401  (tensors are torch tensors; importing torch does not initialize CUDA)

from . import _C

# The version DeepGEMM's users check, then tessera's own (the CMake project version). The library finds its kernel
# headers next to itself (an installed wheel holds them in tessera/include), or through TESSERA_KERNEL_DIR.
__version__ = "2.6.1+tessera.0.1.0"

from ._runtime import (  # noqa: E402
    set_num_sms, get_num_sms, set_tc_util, get_tc_util, set_pdl, get_pdl, set_ignore_compile_dims,
    set_block_size_multiple_of,
)
from .layout import (  # noqa: E402
    get_tma_aligned_size, get_mn_major_tma_aligned_tensor, get_mn_major_tma_aligned_packed_ue8m0_tensor,
    get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor, transform_sf_into_required_layout,
    set_mk_alignment_for_contiguous_layout, get_mk_alignment_for_contiguous_layout,
    get_theoretical_mk_alignment_for_contiguous_layout, get_m_alignment_for_contiguous_layout,
    get_k_alignment_for_contiguous_layout,
)
from .fp8_gemm import (  # noqa: E402
    fp8_gemm_nt, fp8_gemm_nn, fp8_gemm_tn, fp8_gemm_tt, fp8_fp4_gemm_nt, fp8_fp4_gemm_nn, fp8_fp4_gemm_tn,
    fp8_fp4_gemm_tt,
)
from .fp8_grouped import (  # noqa: E402
    m_grouped_fp8_gemm_nt_contiguous, m_grouped_fp8_gemm_nn_contiguous, m_grouped_fp8_gemm_nt_masked,
    k_grouped_fp8_gemm_nt_contiguous, k_grouped_fp8_gemm_tn_contiguous, m_grouped_fp8_fp4_gemm_nt_contiguous,
    m_grouped_fp8_fp4_gemm_nn_contiguous, m_grouped_fp8_fp4_gemm_nt_masked, fp8_m_grouped_gemm_nt_masked,
)
from .bf16_gemm import (  # noqa: E402
    bf16_gemm_nt, bf16_gemm_nn, bf16_gemm_tn, bf16_gemm_tt, m_grouped_bf16_gemm_nt_contiguous,
    m_grouped_bf16_gemm_nn_contiguous, m_grouped_bf16_gemm_nt_masked, k_grouped_bf16_gemm_tn_contiguous,
)
from .bf16_gemm import m_grouped_bf16_gemm_nt_masked as bf16_m_grouped_gemm_nt_masked  # noqa: E402  (DeepGEMM alias)
from .cublaslt import cublaslt_gemm_nt, cublaslt_gemm_nn, cublaslt_gemm_tn, cublaslt_gemm_tt  # noqa: E402
from .einsum_gemm import einsum, fp8_einsum  # noqa: E402
from .fp8_gemm import fp8_gemm_nt_skip_head_mid  # noqa: E402
from .hc_prenorm import tf32_hc_prenorm_gemm  # noqa: E402
from .mqa_logits import fp8_fp4_mqa_logits, fp8_mqa_logits  # noqa: E402
from .paged_mqa_logits import (  # noqa: E402
    get_paged_mqa_logits_metadata, fp8_fp4_paged_mqa_logits, fp8_paged_mqa_logits,
)
from ._pending import *  # noqa: E402,F401,F403  (names of the contract tessera does not implement)
from . import legacy, testing, utils  # noqa: E402
from .utils import *  # noqa: E402,F401,F403
from ._C import InvalidArgument, TypeMismatch  # noqa: E402,F401  (both also RuntimeError, as DeepGEMM's errors are)
from .compat import install_as_deep_gemm  # noqa: E402,F401
