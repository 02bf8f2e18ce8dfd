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

// The common cached bf16_gemm_nt call, which the entry below launches itself: torch tensors a, b (BF16) and d (BF16
// or FP32), 2-D on the GPU, with matching shapes and K > 0. Anything else (errors included) takes the Python path.
bool common_bf16_call(const TensorRef& a, const TensorRef& b, const TensorRef& d) {
    const auto on_gpu_2d = [](const TensorRef& t) { return t.ndim == 2 && t.device.kind == DeviceKind::kCuda; };
    return on_gpu_2d(a) && on_gpu_2d(b) && on_gpu_2d(d) && a.dtype == DType::kBFloat16 &&
           b.dtype == DType::kBFloat16 && (d.dtype == DType::kBFloat16 || d.dtype == DType::kFloat32) &&
           a.shape[1] > 0 && b.shape[1] == a.shape[1] && d.shape[0] == a.shape[0] && d.shape[1] == b.shape[0];
}

}  // namespace

void bind_bf16(nb::module_& m) {
    def_dense_gemm(m, "bf16_gemm_nt", &bf16_gemm_nt);
    // tessera.bf16_gemm_nt itself: the common cached call (above; c absent or d itself) launches from here with no
    // Python frame, as fp8_gemm_nt's entry does; every other case goes to tessera.bf16_gemm._bf16_gemm_nt_py, which
    // gives the same results and messages.
    m.def(
        "bf16_gemm_nt_entry",
        [](nb::handle a, nb::handle b, nb::handle d, nb::handle c, nb::handle compiled_dims) -> nb::object {
            if (c.is_none() || c.ptr() == d.ptr()) {
                const std::optional<TensorRef> ra = try_torch_ref(a), rb = try_torch_ref(b), rd = try_torch_ref(d);
                if (ra && rb && rd && common_bf16_call(*ra, *rb, *rd)) {
                    const Stream s = stream_for(*ra, std::nullopt);
                    nb::gil_scoped_release release;
                    bf16_gemm_nt(*ra, *rb, *rd, c.is_none() ? nullptr : &*rd, s);
                    return nb::none();
                }
            }
            // Looked up under the GIL without a function-local static (see fp8_gemm_nt_entry).
            static PyObject* slow = nullptr;
            if (slow == nullptr) {
                nb::object fn = nb::module_::import_("tessera.bf16_gemm").attr("_bf16_gemm_nt_py");
                slow = fn.release().ptr();
            }
            return nb::handle(slow)(a, b, d, c, compiled_dims);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("c") = nb::none(), nb::arg("compiled_dims") = "nk",
        "D = C + A @ B^T with A [M, K] and B [N, K] BF16 (either major), D BF16 or FP32; c, when given, has d's shape "
        "and dtype and may be d itself (DeepGEMM's bf16_gemm_nt).");
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
