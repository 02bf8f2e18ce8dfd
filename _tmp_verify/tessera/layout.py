# Local-only stub standing in for the C++-backed module (never committed).
def _stub(*a, **k): raise NotImplementedError
get_tma_aligned_size = get_mn_major_tma_aligned_tensor = get_mn_major_tma_aligned_packed_ue8m0_tensor = _stub
get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor = transform_sf_into_required_layout = _stub
set_mk_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout = _stub
get_theoretical_mk_alignment_for_contiguous_layout = get_m_alignment_for_contiguous_layout = _stub
get_k_alignment_for_contiguous_layout = _stub
