// Bindings of the paged_mqa_logits family (filled in as its kernels land).
#include "tensor_refs.hpp"

namespace tessera::py {

void bind_paged_mqa_logits(nanobind::module_&) {}

}  // namespace tessera::py
