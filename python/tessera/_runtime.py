"""Runtime settings of the DeepGEMM API."""
from . import _C

set_num_sms = _C.set_num_sms
get_num_sms = _C.get_num_sms
set_tc_util = _C.set_tc_util
get_tc_util = _C.get_tc_util
set_pdl = _C.set_pdl
get_pdl = _C.get_pdl

_state = {"ignore_compile_dims": False, "block_size_multiple_of": (1, 1)}


def set_ignore_compile_dims(new_value):
    """When true, no shape dimension is baked into a kernel (performance only)."""
    _state["ignore_compile_dims"] = bool(new_value)


def set_block_size_multiple_of(new_value):
    """Constrain heuristic block sizes: an int sets both, a tuple is (block_m_multiple, block_n_multiple)."""
    pair = (new_value, new_value) if isinstance(new_value, int) else tuple(new_value)
    if len(pair) != 2 or any((not isinstance(v, int)) or v <= 0 for v in pair):
        raise ValueError(f"set_block_size_multiple_of: argument 'new_value': expected a positive int or a pair of "
                         f"positive ints, got {new_value!r}")
    _state["block_size_multiple_of"] = pair
