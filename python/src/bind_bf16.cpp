// The BF16 GEMM family and the cuBLASLt wrappers: D (+)= A·Bᵀ, operands K- or MN-major as their strides say.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "ops/bf16_legacy.hpp"
#include "tensor_refs.hpp"
#include "tessera/bf16_gemm.hpp"
#include "tessera/cublaslt.hpp"
#include "tessera/einsum.hpp"
#include "tessera/options.hpp"

namespace nb = nanobind;

namespace tessera::py {
namespace {

// `name`(a, b, d, accumulate, stream=None) for a C++ GEMM of that signature, launched with the GIL released.
using DenseGemm = void (*)(const TensorRef&, const TensorRef&, const TensorRef&, const TensorRef*, Stream);
void def_dense_gemm(nb::module_& m, const char* name, DenseGemm gemm) {
    m.def(
        name,
        [gemm](nb::handle a, nb::handle b, nb::handle d, nb::handle c, std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rb = to_ref(b, "b"), rd = to_ref(d, "d");
            const std::optional<TensorRef> rc = to_optional_ref(c, "c");
            const Stream s = stream_for(ra, stream);
            nb::gil_scoped_release release;
            gemm(ra, rb, rd, rc ? &*rc : nullptr, s);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("c") = nb::none(), nb::arg("stream") = nb::none());
}

}  // namespace

void bind_bf16(nb::module_& m) {
    def_dense_gemm(m, "bf16_gemm_nt", &bf16_gemm_nt);
    // cuBLASLt: `handle` is a framework's cuBLAS handle (torch's, when cublaslt_framework_handle() says so).
    m.def(
        "cublaslt_gemm_nt",
        [](nb::handle a, nb::handle b, nb::handle d, nb::handle c, std::optional<std::uintptr_t> handle,
           std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rb = to_ref(b, "b"), rd = to_ref(d, "d");
            const std::optional<TensorRef> rc = to_optional_ref(c, "c");
            const Stream s = stream_for(ra, stream);
            nb::gil_scoped_release release;
            cublaslt_gemm_nt(ra, rb, rd, rc ? &*rc : nullptr, s, reinterpret_cast<void*>(handle.value_or(0)));
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("c") = nb::none(), nb::arg("handle") = nb::none(),
        nb::arg("stream") = nb::none());
    m.def(
        "cublaslt_bmm_nt",
        [](nb::handle a, nb::handle b, nb::handle d, std::optional<std::uintptr_t> handle,
           std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rb = to_ref(b, "b"), rd = to_ref(d, "d");
            const Stream s = stream_for(ra, stream);
            nb::gil_scoped_release release;
            cublaslt_bmm_nt(ra, rb, rd, s, reinterpret_cast<void*>(handle.value_or(0)));
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("handle") = nb::none(), nb::arg("stream") = nb::none());
    m.def("cublaslt_framework_handle", [] { return options().cublaslt_framework_handle; });
    m.def(
        "m_grouped_bf16_gemm_nt_contiguous",
        [](nb::handle a, nb::handle b, nb::handle d, nb::handle grouped_layout, bool use_psum_layout,
           std::int64_t expected_m, std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rb = to_ref(b, "b"), rd = to_ref(d, "d"),
                            rl = to_ref(grouped_layout, "grouped_layout");
            const Stream s = stream_for(ra, stream);
            nb::gil_scoped_release release;
            m_grouped_bf16_gemm_nt_contiguous(ra, rb, rd, rl, use_psum_layout, expected_m, s);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("grouped_layout"), nb::arg("use_psum_layout"),
        nb::arg("expected_m"), nb::arg("stream") = nb::none());
    m.def(
        "m_grouped_bf16_gemm_nt_masked",
        [](nb::handle a, nb::handle b, nb::handle d, nb::handle masked_m, std::int64_t expected_m,
           std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rb = to_ref(b, "b"), rd = to_ref(d, "d"),
                            rm = to_ref(masked_m, "masked_m");
            const Stream s = stream_for(ra, stream);
            nb::gil_scoped_release release;
            m_grouped_bf16_gemm_nt_masked(ra, rb, rd, rm, expected_m, s);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("masked_m"), nb::arg("expected_m"),
        nb::arg("stream") = nb::none());
    m.def(
        "k_grouped_bf16_gemm_tn_contiguous",
        [](nb::handle a, nb::handle b, nb::handle d, nb::handle c, const std::vector<std::int64_t>& ks,
           nb::handle ks_tensor, std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rb = to_ref(b, "b"), rd = to_ref(d, "d"), rc = to_ref(c, "c"),
                            rk = to_ref(ks_tensor, "grouped_layout");
            const Stream s = stream_for(ra, stream);
            nb::gil_scoped_release release;
            k_grouped_bf16_gemm_tn_contiguous(ra, rb, rd, rc, ks, rk, s);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("c"), nb::arg("ks"), nb::arg("ks_tensor"),
        nb::arg("stream") = nb::none());
    // einsum's batched GEMMs (tessera/einsum.hpp).
    m.def(
        "bf16_bmm_nt",
        [](nb::handle a, nb::handle b, nb::handle d, std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rb = to_ref(b, "b"), rd = to_ref(d, "d");
            const Stream s = stream_for(ra, stream);
            nb::gil_scoped_release release;
            bf16_bmm_nt(ra, rb, rd, s);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("stream") = nb::none());
    m.def(
        "bf16_bmk_bnk_mn",
        [](nb::handle a, nb::handle b, nb::handle d, nb::handle c, nb::handle workspace,
           std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rb = to_ref(b, "b"), rd = to_ref(d, "d");
            const std::optional<TensorRef> rc = to_optional_ref(c, "c"), rw = to_optional_ref(workspace, "workspace");
            const Stream s = stream_for(ra, stream);
            nb::gil_scoped_release release;
            bf16_bmk_bnk_mn(ra, rb, rd, rc ? &*rc : nullptr, rw ? &*rw : nullptr, s);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("c").none() = nb::none(),
        nb::arg("workspace").none() = nb::none(), nb::arg("stream") = nb::none());
    // The legacy names' kernels (tessera.legacy): the same GEMMs under DeepGEMM's legacy kernel names.
    m.def(
        "m_grouped_bf16_gemm_contiguous_tl",
        [](nb::handle a, nb::handle b, nb::handle d, nb::handle m_indices, std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rb = to_ref(b, "b"), rd = to_ref(d, "d"),
                            ri = to_ref(m_indices, "m_indices");
            const Stream s = stream_for(ra, stream);
            nb::gil_scoped_release release;
            ops::m_grouped_bf16_gemm_contiguous_tl(ra, rb, rd, ri, s);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("m_indices"), nb::arg("stream") = nb::none());
    m.def(
        "k_grouped_bf16_gemm_tn_contiguous_tl",
        [](nb::handle a, nb::handle b, nb::handle d, const std::vector<std::int64_t>& ks, nb::handle ks_tensor,
           std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rb = to_ref(b, "b"), rd = to_ref(d, "d"),
                            rk = to_ref(ks_tensor, "ks_tensor");
            const Stream s = stream_for(ra, stream);
            nb::gil_scoped_release release;
            ops::k_grouped_bf16_gemm_tn_contiguous_tl(ra, rb, rd, ks, rk, s);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("ks"), nb::arg("ks_tensor"), nb::arg("stream") = nb::none());
    m.def("bf16_gemm_config", &bf16_gemm_config, nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("mn_major_a"),
          nb::arg("mn_major_b"), nb::arg("out_f32"), nb::arg("accumulate"), nb::arg("device"));
}

}  // namespace tessera::py
