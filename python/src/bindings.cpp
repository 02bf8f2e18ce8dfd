// tessera._C: forwards Python calls to the C++ API and holds no logic of its own. Tensor arguments become TensorRefs
// (tensor_refs.cpp); each kernel family's functions are bound in its own bind_<family>.cpp. The GIL is released
// around every launch.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/fp8_gemm.hpp"
#include "tessera/fp8_grouped_gemm.hpp"
#include "tessera/layout.hpp"
#include "tessera/options.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tensor.hpp"
#include "tensor_refs.hpp"

namespace nb = nanobind;
using namespace tessera;
using tessera::py::stream_for;
using tessera::py::to_optional_ref;
using tessera::py::to_ref;
namespace {

// fp8_gemm_nt with the GIL released (recipe 0: 1D2D, 1: 1D1D), shared by both FP8 GEMM entry points; c: 1D1D's C
// when it is not d itself.
Fp8GemmStatus run_fp8_gemm_nt(const TensorRef& a, const TensorRef& sfa, const TensorRef& b, const TensorRef& sfb,
                              const TensorRef& d, int recipe, Stream stream, const TensorRef* c = nullptr) {
    nb::gil_scoped_release release;
    return fp8_gemm_nt(a, sfa, b, sfb, d, recipe ? Fp8Recipe::k1D1D : Fp8Recipe::k1D2D, stream, c);
}

// The recipe of a fast-path fp8_gemm_nt call (0: 1D2D, 1: 1D1D with c = d), or -1 when the Python implementation
// must handle it.
bool is_pair(nb::handle t) { return PyTuple_CheckExact(t.ptr()) && PyTuple_GET_SIZE(t.ptr()) == 2; }
bool is_recipe(nb::handle r, long x, long y, long z) {
    if (!PyTuple_CheckExact(r.ptr()) || PyTuple_GET_SIZE(r.ptr()) != 3) return false;
    const long want[3] = {x, y, z};
    for (int i = 0; i < 3; ++i) {
        PyObject* v = PyTuple_GET_ITEM(r.ptr(), i);
        if (!PyLong_CheckExact(v) || PyLong_AsLong(v) != want[i]) return false;
    }
    return true;
}
int fast_fp8_kind(nb::handle a, nb::handle b, nb::handle d, nb::handle c, nb::handle recipe, nb::handle recipe_a,
                  nb::handle recipe_b) {
    if (!is_pair(a) || !is_pair(b) || !recipe_a.is_none() || !recipe_b.is_none()) return -1;
    int kind = -1;
    if (recipe.is_none() || is_recipe(recipe, 1, 128, 128)) kind = 0;
    else if (is_recipe(recipe, 1, 1, 128)) kind = 1;
    if (kind == 0 && !c.is_none()) return -1;
    if (kind == 1 && c.ptr() != d.ptr()) return -1;
    return kind;
}

nb::tuple plan_tuple(const LayoutPlan& p) {
    nb::list shape, strides;
    for (int i = 0; i < p.ndim; ++i) {
        shape.append(p.shape[i]);
        strides.append(p.strides[i]);
    }
    return nb::make_tuple(p.pass_through, nb::tuple(shape), nb::tuple(strides));
}

// A Python exception class named tessera.`name`, deriving from `base` and RuntimeError. Created once per process
// (the module may be initialized more than once, e.g. loaded under a second name; the classes stay one).
PyObject* make_exception(const char* name, PyObject* base) {
    const std::string qualified = std::string("tessera.") + name;
    PyObject* bases = PyTuple_Pack(2, base, PyExc_RuntimeError);
    PyObject* type = PyErr_NewException(qualified.c_str(), bases, nullptr);
    Py_XDECREF(bases);
    if (type == nullptr) throw nb::python_error();
    return type;  // one reference kept for the translator, for the life of the process
}
}  // namespace

NB_MODULE(_C, m) {
    m.doc() = "tessera: FP8/BF16 tensor-core kernels for Hopper (C++ core)";

    // Bad arguments raise classes that are both Python's usual kind (ValueError, TypeError) and RuntimeError, which
    // is what DeepGEMM raises for every failed check: a caller's `except RuntimeError` fallback still catches them.
    static PyObject* invalid_argument = make_exception("InvalidArgument", PyExc_ValueError);
    static PyObject* type_mismatch = make_exception("TypeMismatch", PyExc_TypeError);
    m.attr("InvalidArgument") = nb::handle(invalid_argument);
    m.attr("TypeMismatch") = nb::handle(type_mismatch);
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const TypeMismatch& e) {
            PyErr_SetString(type_mismatch, e.what());
        } catch (const InvalidArgument& e) {
            PyErr_SetString(invalid_argument, e.what());
        } catch (const Unsupported& e) {
            PyErr_SetString(PyExc_NotImplementedError, e.what());
        } catch (const Error& e) {
            PyErr_SetString(PyExc_RuntimeError, e.what());
        }
    });

    // Runtime
    m.def("set_num_sms", &set_num_sms, nb::arg("new_num_sms"));
    m.def("get_num_sms", &get_num_sms);
    m.def("set_pdl", &set_pdl, nb::arg("new_enable_pdl"));
    m.def("get_pdl", &get_pdl);
    m.def("set_tc_util", &set_tc_util, nb::arg("new_tc_util"));
    m.def("set_block_size_multiple_of", &set_block_size_multiple_of, nb::arg("m_multiple"), nb::arg("n_multiple"));
    m.def("get_tc_util", &get_tc_util);
    m.def("set_mk_alignment_for_contiguous_layout", &set_mk_alignment_for_contiguous_layout, nb::arg("new_value"));
    m.def("get_mk_alignment_for_contiguous_layout", &get_mk_alignment_for_contiguous_layout);
    m.def("set_kernel_dir", &set_kernel_dir, nb::arg("path"));
    m.def("system_info", [] {
        const SystemInfo i = system_info();
        nb::dict d;
        d["driver_loaded"] = i.driver_loaded;
        d["driver_error"] = i.driver_error;
        d["driver_version"] = i.driver_version;
        d["devices"] = i.devices;
        d["nvrtc"] = i.nvrtc;
        d["nvcc"] = i.nvcc;
        d["compiler"] = i.compiler;
        d["cache_dir"] = i.cache_dir;
        d["cache_bytes"] = i.cache_bytes;
        d["kernel_dir"] = i.kernel_dir;
        return d;
    });

    // FP8 GEMM: returns 0 when launched, 1/2 when sfa/sfb must first be brought into the kernel's layout.
    m.def(
        "fp8_gemm_nt",
        [](nb::handle a, nb::handle sfa, nb::handle b, nb::handle sfb, nb::handle d, int recipe, nb::handle c,
           std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rsa = to_ref(sfa, "sfa"), rb = to_ref(b, "b"),
                            rsb = to_ref(sfb, "sfb"), rd = to_ref(d, "d");  // in argument order: errors name the first
            const std::optional<TensorRef> rc = to_optional_ref(c, "c");
            return static_cast<int>(
                run_fp8_gemm_nt(ra, rsa, rb, rsb, rd, recipe, stream_for(ra, stream), rc ? &*rc : nullptr));
        },
        nb::arg("a"), nb::arg("sfa"), nb::arg("b"), nb::arg("sfb"), nb::arg("d"), nb::arg("recipe"),
        nb::arg("c").none() = nb::none(), nb::arg("stream") = nb::none());
    m.def(
        "fp8_gemm_nt_skip_head_mid",
        [](nb::handle a, nb::handle sfa, nb::handle b, nb::handle sfb, nb::handle d, std::int64_t left,
           std::int64_t mid, std::int64_t right, std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rsa = to_ref(sfa, "sfa"), rb = to_ref(b, "b"),
                            rsb = to_ref(sfb, "sfb"), rd = to_ref(d, "d");
            const Stream st = stream_for(ra, stream);
            nb::gil_scoped_release release;
            return static_cast<int>(fp8_gemm_nt_skip_head_mid(ra, rsa, rb, rsb, rd, {left, mid, right}, st));
        },
        nb::arg("a"), nb::arg("sfa"), nb::arg("b"), nb::arg("sfb"), nb::arg("d"), nb::arg("left"), nb::arg("mid"),
        nb::arg("right"), nb::arg("stream") = nb::none());

    // tessera.fp8_gemm_nt itself: the common cached call (tuples of (tensor, FP32 scales), default or explicit
    // recipe, c absent or d itself for FP32 output, scales already in the kernel's layout) launches from here with no
    // Python frame; every other case (layout fixes, a separate c, K = 0, other recipes, errors) goes to the Python
    // implementation tessera.fp8_gemm._fp8_gemm_nt_py, which gives the same results and messages.
    m.def(
        "fp8_gemm_nt_entry",
        [](nb::handle a, nb::handle b, nb::handle d, nb::handle c, nb::handle recipe, nb::handle recipe_a,
           nb::handle recipe_b, nb::handle compiled_dims, nb::handle disable_ue8m0_cast) -> nb::object {
            const int kind = fast_fp8_kind(a, b, d, c, recipe, recipe_a, recipe_b);
            if (kind >= 0) {
                const TensorRef ra = to_ref(PyTuple_GET_ITEM(a.ptr(), 0), "a"),
                                rsa = to_ref(PyTuple_GET_ITEM(a.ptr(), 1), "sfa"),
                                rb = to_ref(PyTuple_GET_ITEM(b.ptr(), 0), "b"),
                                rsb = to_ref(PyTuple_GET_ITEM(b.ptr(), 1), "sfb"), rd = to_ref(d, "d");
                if (rsa.dtype == DType::kFloat32 && rsb.dtype == DType::kFloat32 && ra.ndim == 2 && ra.shape[1] > 0 &&
                    run_fp8_gemm_nt(ra, rsa, rb, rsb, rd, kind, stream_for(ra, std::nullopt)) ==
                        Fp8GemmStatus::kLaunched)
                    return nb::none();
            }
            // Looked up under the GIL without a function-local static: a static's init guard held across the import
            // (which can release the GIL) could deadlock against a second thread waiting on the guard with the GIL.
            static PyObject* slow = nullptr;
            if (slow == nullptr) {
                nb::object fn = nb::module_::import_("tessera.fp8_gemm").attr("_fp8_gemm_nt_py");
                slow = fn.release().ptr();
            }
            return nb::handle(slow)(a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("c") = nb::none(), nb::arg("recipe") = nb::none(),
        nb::arg("recipe_a") = nb::none(), nb::arg("recipe_b") = nb::none(), nb::arg("compiled_dims") = "nk",
        nb::arg("disable_ue8m0_cast") = false,
        "D = C + A @ B^T with a = (A [M, K] e4m3, SFA), b = (B [N, K] e4m3, SFB); writes d in place (DeepGEMM's "
        "fp8_gemm_nt).");
    // For bench/python_overhead.py only: the binding's share of a cached fp8_gemm_nt call (five tensor conversions
    // and the stream query), without validation or launch.
    m.def("_probe_tensor_refs", [](nb::handle a, nb::handle sfa, nb::handle b, nb::handle sfb, nb::handle d) {
        const TensorRef ra = to_ref(a, "a");
        (void)to_ref(sfa, "sfa"), (void)to_ref(b, "b"), (void)to_ref(sfb, "sfb"), (void)to_ref(d, "d");
        return reinterpret_cast<std::uintptr_t>(stream_for(ra, std::nullopt));
    });
    // For tests: a tensor as the binding sees it, (data, dtype, shape, strides, device kind, device index), and
    // whether torch's exchange table is in use.
    m.def("_tensor_ref_info", [](nb::handle t) {
        const TensorRef r = to_ref(t, "t");
        std::vector<std::int64_t> shape(r.shape.begin(), r.shape.begin() + r.ndim),
            strides(r.strides.begin(), r.strides.begin() + r.ndim);
        return nb::make_tuple(reinterpret_cast<std::uintptr_t>(r.data), static_cast<int>(r.dtype), shape, strides,
                              static_cast<int>(r.device.kind), r.device.index);
    });
    m.def("_dlpack_exchange_active", &tessera::py::dlpack_exchange_active);
    m.def(
        "fp8_grouped_gemm_config",
        [](const std::string& kind, std::int64_t m_, std::int64_t n, std::int64_t k, std::int64_t groups,
           std::int64_t expected_m, int device) {
            Fp8GroupedKind k_kind;
            if (kind == "contiguous") k_kind = Fp8GroupedKind::kContiguous;
            else if (kind == "psum") k_kind = Fp8GroupedKind::kPsum;
            else if (kind == "masked") k_kind = Fp8GroupedKind::kMasked;
            else if (kind == "k_grouped") k_kind = Fp8GroupedKind::kKGrouped;
            else
                throw InvalidArgument(detail::str_cat("fp8_grouped_gemm_config: argument 'kind': expected 'contiguous', "
                                                      "'psum', 'masked' or 'k_grouped', got '", kind, "'"));
            return fp8_grouped_gemm_config(k_kind, m_, n, k, groups, expected_m, device);
        },
        nb::arg("kind"), nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("groups"), nb::arg("expected_m"),
        nb::arg("device"));
    m.def(
        "fp8_gemm_config",
        [](std::int64_t m_, std::int64_t n, std::int64_t k, int recipe, int device) {
            return fp8_gemm_config(m_, n, k, recipe ? Fp8Recipe::k1D1D : Fp8Recipe::k1D2D, device);
        },
        nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("recipe"), nb::arg("device"));

    tessera::py::bind_bf16(m);
    tessera::py::bind_hc_prenorm(m);
    tessera::py::bind_mqa_logits(m);
    tessera::py::bind_paged_mqa_logits(m);

    // Grouped FP8 GEMMs: same status convention as fp8_gemm_nt.
    m.def(
        "m_grouped_fp8_gemm_nt_contiguous",
        [](nb::handle a, nb::handle sfa, nb::handle b, nb::handle sfb, nb::handle d, nb::handle grouped_layout,
           bool use_psum_layout, std::int64_t expected_m, std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rsa = to_ref(sfa, "sfa"), rb = to_ref(b, "b"),
                            rsb = to_ref(sfb, "sfb"), rd = to_ref(d, "d"), rl = to_ref(grouped_layout, "grouped_layout");
            const Stream st = stream_for(ra, stream);
            nb::gil_scoped_release release;
            return static_cast<int>(
                m_grouped_fp8_gemm_nt_contiguous(ra, rsa, rb, rsb, rd, rl, use_psum_layout, expected_m, st));
        },
        nb::arg("a"), nb::arg("sfa"), nb::arg("b"), nb::arg("sfb"), nb::arg("d"), nb::arg("grouped_layout"),
        nb::arg("use_psum_layout"), nb::arg("expected_m"), nb::arg("stream") = nb::none());
    m.def(
        "m_grouped_fp8_gemm_nt_masked",
        [](nb::handle a, nb::handle sfa, nb::handle b, nb::handle sfb, nb::handle d, nb::handle masked_m,
           std::int64_t expected_m, std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rsa = to_ref(sfa, "sfa"), rb = to_ref(b, "b"),
                            rsb = to_ref(sfb, "sfb"), rd = to_ref(d, "d"), rm = to_ref(masked_m, "masked_m");
            const Stream st = stream_for(ra, stream);
            nb::gil_scoped_release release;
            return static_cast<int>(m_grouped_fp8_gemm_nt_masked(ra, rsa, rb, rsb, rd, rm, expected_m, st));
        },
        nb::arg("a"), nb::arg("sfa"), nb::arg("b"), nb::arg("sfb"), nb::arg("d"), nb::arg("masked_m"),
        nb::arg("expected_m"), nb::arg("stream") = nb::none());
    m.def(
        "k_grouped_fp8_gemm_nt_contiguous",
        [](nb::handle a, nb::handle sfa, nb::handle b, nb::handle sfb, nb::handle d, const std::vector<std::int64_t>& ks,
           nb::handle grouped_layout, nb::handle c, std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rsa = to_ref(sfa, "sfa"), rb = to_ref(b, "b"),
                            rsb = to_ref(sfb, "sfb"), rd = to_ref(d, "d"), rl = to_ref(grouped_layout, "grouped_layout");
            const std::optional<TensorRef> rc = to_optional_ref(c, "c");
            const Stream st = stream_for(ra, stream);
            nb::gil_scoped_release release;
            return static_cast<int>(
                k_grouped_fp8_gemm_nt_contiguous(ra, rsa, rb, rsb, rd, ks, rl, st, rc ? &*rc : nullptr));
        },
        nb::arg("a"), nb::arg("sfa"), nb::arg("b"), nb::arg("sfb"), nb::arg("d"), nb::arg("ks"),
        nb::arg("grouped_layout"), nb::arg("c").none() = nb::none(), nb::arg("stream") = nb::none());

    m.def(
        "fp8_bmm_nt",
        [](nb::handle a, nb::handle sfa, nb::handle b, nb::handle sfb, nb::handle d,
           std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rsa = to_ref(sfa, "sfa"), rb = to_ref(b, "b"),
                            rsb = to_ref(sfb, "sfb"), rd = to_ref(d, "d");
            const Stream st = stream_for(ra, stream);
            nb::gil_scoped_release release;
            return static_cast<int>(fp8_bmm_nt(ra, rsa, rb, rsb, rd, st));
        },
        nb::arg("a"), nb::arg("sfa"), nb::arg("b"), nb::arg("sfb"), nb::arg("d"), nb::arg("stream") = nb::none());

    // Layout utilities
    m.def("get_tma_aligned_size", &get_tma_aligned_size, nb::arg("x"), nb::arg("element_size"));
    m.def("plan_mn_major_tma_aligned", [](nb::handle sf) { return plan_tuple(plan_mn_major_tma_aligned(to_ref(sf, "sf"))); });
    m.def("plan_mn_major_packed_ue8m0", [](nb::handle sf) { return plan_tuple(plan_mn_major_packed_ue8m0(to_ref(sf, "sf"))); });
    m.def("k_grouped_packed_rows", [](std::int64_t sf_rows, const std::vector<std::int64_t>& ks, std::int64_t groups,
                                      std::int64_t gran_k) { return k_grouped_packed_rows(sf_rows, ks, groups, gran_k); });
    m.def(
        "transpose_sf_to_mn_major",
        [](nb::handle sf, nb::handle out, std::optional<std::uintptr_t> stream) {
            const TensorRef s = to_ref(sf, "sf"), o = to_ref(out, "out");
            const Stream st = stream_for(s, stream);
            nb::gil_scoped_release release;
            transpose_sf_to_mn_major(s, o, st);
        },
        nb::arg("sf"), nb::arg("out"), nb::arg("stream") = nb::none());
    m.def(
        "pack_sf_to_ue8m0",
        [](nb::handle sf, nb::handle out, nb::handle psum, int alignment, nb::handle errors,
           std::optional<std::uintptr_t> stream) {
            const TensorRef s = to_ref(sf, "sf"), o = to_ref(out, "out");
            const auto p = to_optional_ref(psum, "psum_layout");
            const auto e = to_optional_ref(errors, "error_count");
            const Stream st = stream_for(s, stream);
            nb::gil_scoped_release release;
            pack_sf_to_ue8m0(s, o, p ? &*p : nullptr, alignment, e ? &*e : nullptr, st);
        },
        nb::arg("sf"), nb::arg("out"), nb::arg("psum_layout").none() = nb::none(), nb::arg("alignment") = 128,
        nb::arg("error_count").none() = nb::none(), nb::arg("stream") = nb::none());
    m.def(
        "pack_sf_to_ue8m0_k_grouped",
        [](nb::handle sf, nb::handle out, nb::handle layout, const std::vector<std::int64_t>& ks, int gran_k,
           int k_alignment, bool use_psum, nb::handle errors, std::optional<std::uintptr_t> stream) {
            const TensorRef s = to_ref(sf, "sf"), o = to_ref(out, "out"), l = to_ref(layout, "grouped_layout");
            const auto e = to_optional_ref(errors, "error_count");
            const Stream st = stream_for(s, stream);
            nb::gil_scoped_release release;
            pack_sf_to_ue8m0_k_grouped(s, o, l, ks, gran_k, k_alignment, use_psum, e ? &*e : nullptr, st);
        },
        nb::arg("sf"), nb::arg("out"), nb::arg("grouped_layout"), nb::arg("ks"), nb::arg("gran_k"),
        nb::arg("k_alignment"), nb::arg("use_psum"), nb::arg("error_count").none() = nb::none(),
        nb::arg("stream") = nb::none());
}
