"""Runtime settings of the DeepGEMM API."""
from . import _C
from ._C import InvalidArgument

set_num_sms = _C.set_num_sms
get_num_sms = _C.get_num_sms
set_tc_util = _C.set_tc_util
get_tc_util = _C.get_tc_util
set_pdl = _C.set_pdl
get_pdl = _C.get_pdl


def set_ignore_compile_dims(new_value):
    """DeepGEMM's switch to bake no shape dimension into a kernel. Accepted for compatibility; tessera always
    specializes its FP8 kernels on N and K (a cold compile takes ~0.1 s with NVRTC), with the same results."""
    bool(new_value)


def set_block_size_multiple_of(new_value):
    """Constrain the planner's block sizes: an int sets both multiples, a pair is (block_m_multiple, block_n_multiple).
    As in DeepGEMM on SM90, block N becomes a multiple of lcm(16, n) when n > 1 and the M multiple is not used."""
    pair = (new_value, new_value) if isinstance(new_value, int) and not isinstance(new_value, bool) else new_value
    try:
        m_multiple, n_multiple = pair
        ok = all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (m_multiple, n_multiple))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidArgument(f"set_block_size_multiple_of: argument 'new_value': expected a positive int or a pair "
                              f"of positive ints, got {new_value!r}")
    _C.set_block_size_multiple_of(m_multiple, n_multiple)
