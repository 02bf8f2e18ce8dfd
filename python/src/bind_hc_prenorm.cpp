// The hc_prenorm family: DeepGEMM's tf32_hc_prenorm_gemm (TF32 d = a·bᵀ plus the squared row sums of a).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>

#include "tensor_refs.hpp"
#include "tessera/hc_prenorm_gemm.hpp"

namespace nb = nanobind;

namespace tessera::py {

void bind_hc_prenorm(nb::module_& m) {
    // num_splits: 0 for DeepGEMM's None (the Python layer maps it), else the requested split count.
    m.def(
        "tf32_hc_prenorm_gemm",
        [](nb::handle a, nb::handle b, nb::handle d, nb::handle sqr_sum, int num_splits,
           std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rb = to_ref(b, "b"), rd = to_ref(d, "d"),
                            rs = to_ref(sqr_sum, "sqr_sum");
            const Stream s = stream_for(ra, stream);
            nb::gil_scoped_release release;
            tf32_hc_prenorm_gemm(ra, rb, rd, rs, num_splits, s);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("sqr_sum"), nb::arg("num_splits"),
        nb::arg("stream") = nb::none());
    m.def("tf32_hc_prenorm_gemm_config", &tf32_hc_prenorm_gemm_config, nb::arg("m"), nb::arg("n"), nb::arg("k"),
          nb::arg("num_splits"), nb::arg("device"));
}

}  // namespace tessera::py
