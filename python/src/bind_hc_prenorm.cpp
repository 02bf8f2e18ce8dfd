// Bindings of the hc_prenorm family (filled in as its kernels land).
#include "tensor_refs.hpp"

namespace tessera::py {

void bind_hc_prenorm(nanobind::module_&) {}

}  // namespace tessera::py
