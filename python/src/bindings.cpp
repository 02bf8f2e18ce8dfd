// tessera._C: converts Python objects to TensorRefs and forwards to the C++ API; holds no logic of its own.
// PyTorch CUDA tensors take a fast path: torch's DLPack C exchange API (`torch.Tensor.__dlpack_c_exchange_api__`,
// a table of C functions: one call fills a DLTensor view, another returns the current stream) where torch has it,
// else a few attribute reads. Anything else that speaks DLPack (numpy, cupy, jax) goes through nanobind's ndarray.
// The GIL is released around every launch.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
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

#include "tessera/bf16_gemm.hpp"
#include "tessera/cublaslt.hpp"
#include "tessera/error.hpp"
#include "tessera/fp8_gemm.hpp"
#include "tessera/fp8_grouped_gemm.hpp"
#include "tessera/layout.hpp"
#include "tessera/options.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tensor.hpp"

namespace nb = nanobind;
using namespace tessera;

namespace {

// The DLPack C exchange API (DLPack >= 1.2), declared here by its ABI: a producer publishes a table of C functions
// in a PyCapsule named "dlpack_exchange_api". Only the non-owning view and the stream query are used.
struct DlpackView {  // DLTensor
    void* data;
    std::int32_t device_type, device_id;
    std::int32_t ndim;
    std::uint8_t code, bits;
    std::uint16_t lanes;
    std::int64_t* shape;
    std::int64_t* strides;  // may be null: compact row-major
    std::uint64_t byte_offset;
};
static_assert(sizeof(DlpackView) == 48, "DLTensor ABI");
struct DlpackExchangeApi {
    std::uint32_t version_major, version_minor;
    const void* prev_api;
    void* managed_tensor_allocator;
    void* managed_tensor_from_py_object_no_sync;
    void* managed_tensor_to_py_object_no_sync;
    int (*dltensor_from_py_object_no_sync)(void* py_object, DlpackView* out);  // 0, or -1 with a Python error set
    int (*current_work_stream)(std::int32_t device_type, std::int32_t device_id, void** out_stream);
};
constexpr std::int32_t kDlpackCuda = 2;

// Cached handles into torch, filled the first time a torch tensor is seen (importing tessera never imports torch).
struct Torch {
    PyObject* tensor_type = nullptr;
    std::vector<std::pair<PyObject*, DType>> dtypes;
    nb::object raw_stream;  // torch._C._cuda_getCurrentRawStream(device_index) -> int
    // torch's exchange table, or null (turned off with TESSERA_DLPACK_EXCHANGE=0, older torch, or a failed
    // first-use check).
    const DlpackExchangeApi* exchange = nullptr;
    // The exact types the table is used for: torch.Tensor and nn.Parameter. Subclasses (FakeTensor, DTensor, ...)
    // may carry no real storage, which torch's table does not expect; they take the attribute path.
    PyTypeObject* exchange_types[2] = {nullptr, nullptr};
    // The C getter behind `is_cuda` on those exact types, called directly: the generic attribute lookup around it
    // (type and instance dictionaries) cost about as much as the getter itself, five times per GEMM call. Null: use
    // the attribute.
    getter is_cuda_get = nullptr;
    void* is_cuda_closure = nullptr;
    int exchange_checks = 0;   // conversions compared with the attribute path so far (from_torch)
    int stream_checks = 0;     // stream queries compared with raw_stream so far (stream_for)
};

const DlpackExchangeApi* find_exchange_api(nb::handle tensor_type) {
    // On by default: it takes 2.8 us off a cached fp8_gemm_nt on the H200 (tests/python/test_binding_gpu.py covers
    // it). Options::dlpack_exchange off keeps the attribute path.
    if (!options().dlpack_exchange) return nullptr;
    PyObject* capsule = PyObject_GetAttrString(tensor_type.ptr(), "__dlpack_c_exchange_api__");
    if (capsule == nullptr) {
        PyErr_Clear();
        return nullptr;
    }
    const auto* table =
        static_cast<const DlpackExchangeApi*>(PyCapsule_GetPointer(capsule, "dlpack_exchange_api"));
    Py_DECREF(capsule);  // the table is static in torch: it outlives the capsule object
    if (table == nullptr) {
        PyErr_Clear();
        return nullptr;
    }
    // Version 1.2 introduced the table with this layout; a new major version may change it.
    if (table->version_major != 1 || table->version_minor < 2 || table->dltensor_from_py_object_no_sync == nullptr ||
        table->current_work_stream == nullptr)
        return nullptr;
    return table;
}

// Takes `is_cuda`'s getter only where the attribute, read on each exact type, is the same C getset descriptor (as in
// every torch with the exchange table): then calling its getter is what the attribute read does.
void find_is_cuda_getter(Torch& a) {
    PyObject* descr = nullptr;
    for (PyTypeObject* type : a.exchange_types) {
        if (type == nullptr) continue;
        PyObject* d = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "is_cuda");
        if (d == nullptr) {
            PyErr_Clear();
            return;
        }
        Py_DECREF(d);  // the descriptor lives in torch's base class for the life of the process
        if (!Py_IS_TYPE(d, &PyGetSetDescr_Type) || (descr != nullptr && d != descr)) return;
        descr = d;
    }
    if (descr == nullptr) return;
    const PyGetSetDef* def = reinterpret_cast<PyGetSetDescrObject*>(descr)->d_getset;
    if (def == nullptr || def->get == nullptr) return;
    a.is_cuda_get = def->get;
    a.is_cuda_closure = def->closure;
}

Torch* torch_api() {
    static Torch* api = nullptr;
    if (api != nullptr) return api;
    PyObject* modules = PySys_GetObject("modules");  // borrowed
    PyObject* torch = modules ? PyDict_GetItemString(modules, "torch") : nullptr;
    if (torch == nullptr) return nullptr;  // torch not loaded: no object can be a torch tensor
    nb::handle t(torch);
    auto* a = new Torch();
    a->tensor_type = t.attr("Tensor").ptr();
    const std::pair<const char*, DType> names[] = {
        {"float8_e4m3fn", DType::kFloat8E4M3}, {"float8_e5m2", DType::kFloat8E5M2}, {"bfloat16", DType::kBFloat16},
        {"float16", DType::kFloat16},          {"float32", DType::kFloat32},       {"float64", DType::kFloat64},
        {"int32", DType::kInt32},              {"int64", DType::kInt64},           {"uint8", DType::kUInt8},
        {"int8", DType::kInt8}};
    for (auto [name, dtype] : names)
        if (nb::hasattr(t, name)) a->dtypes.emplace_back(t.attr(name).ptr(), dtype);
    a->raw_stream = t.attr("_C").attr("_cuda_getCurrentRawStream");
    a->exchange = find_exchange_api(t.attr("Tensor"));
    a->exchange_types[0] = reinterpret_cast<PyTypeObject*>(a->tensor_type);
    if (nb::hasattr(t, "nn") && nb::hasattr(t.attr("nn"), "Parameter"))
        a->exchange_types[1] = reinterpret_cast<PyTypeObject*>(t.attr("nn").attr("Parameter").ptr());
    find_is_cuda_getter(*a);
    api = a;
    return api;
}

void fill_dims(TensorRef& ref, nb::handle shape, nb::handle strides, const char* name) {
    const Py_ssize_t n = PyTuple_GET_SIZE(shape.ptr());
    TESSERA_CHECK(n <= kMaxDims, "argument '", name, "': expected at most ", kMaxDims, " dimensions, got ", n);
    ref.ndim = static_cast<int>(n);
    for (Py_ssize_t i = 0; i < n; ++i) {
        ref.shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape.ptr(), i));
        ref.strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides.ptr(), i));
    }
}

// Interned attribute names: a lookup by a const char* would build a new Python string on every call, and a cached
// GEMM call reads about 25 attributes.
struct TensorAttrs {
    nb::object dtype = nb::steal(PyUnicode_InternFromString("dtype"));
    nb::object shape = nb::steal(PyUnicode_InternFromString("shape"));
    nb::object stride = nb::steal(PyUnicode_InternFromString("stride"));
    nb::object data_ptr = nb::steal(PyUnicode_InternFromString("data_ptr"));
    nb::object get_device = nb::steal(PyUnicode_InternFromString("get_device"));
    nb::object is_cuda = nb::steal(PyUnicode_InternFromString("is_cuda"));
};
const TensorAttrs& tensor_attrs() {
    static const TensorAttrs& attrs = *new TensorAttrs();  // never destroyed: outlives interpreter teardown order
    return attrs;
}

nb::object call_method(nb::handle obj, const nb::object& name) {
    return nb::steal(PyObject_CallMethodNoArgs(obj.ptr(), name.ptr()));
}

// Any torch tensor, through its Python attributes (the path before the exchange table, and its check).
TensorRef from_torch_attrs(const Torch& api, nb::handle obj, const char* name) {
    const TensorAttrs& attrs = tensor_attrs();
    TensorRef ref;
    nb::object dtype = nb::steal(PyObject_GetAttr(obj.ptr(), attrs.dtype.ptr()));
    if (!dtype.is_valid()) throw nb::python_error();
    bool known = false;
    for (auto [handle, d] : api.dtypes) {
        if (dtype.ptr() == handle) {
            ref.dtype = d;
            known = true;
            break;
        }
    }
    if (!known)
        throw TypeMismatch(detail::str_cat("argument '", name, "': unsupported tensor dtype ",
                                           nb::str(dtype).c_str()));
    nb::object shape = nb::steal(PyObject_GetAttr(obj.ptr(), attrs.shape.ptr()));
    nb::object strides = call_method(obj, attrs.stride);
    nb::object data = call_method(obj, attrs.data_ptr);
    // get_device() is the CUDA ordinal, or -1 for a tensor that is not on a CUDA device (one read instead of two).
    nb::object device = call_method(obj, attrs.get_device);
    if (!shape.is_valid() || !strides.is_valid() || !data.is_valid() || !device.is_valid()) throw nb::python_error();
    fill_dims(ref, shape, strides, name);
    ref.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(data));
    const int ordinal = nb::cast<int>(device);
    ref.device = ordinal >= 0 ? Device{DeviceKind::kCuda, ordinal} : Device{DeviceKind::kCpu, 0};
    return ref;
}

std::optional<DType> dlpack_dtype(nb::dlpack::dtype dt) {
    using C = nb::dlpack::dtype_code;
    const auto code = static_cast<C>(dt.code);
    if (dt.lanes == 1) {
        if (code == C::Float && dt.bits == 32) return DType::kFloat32;
        if (code == C::Float && dt.bits == 64) return DType::kFloat64;
        if (code == C::Float && dt.bits == 16) return DType::kFloat16;
        if (code == C::Bfloat && dt.bits == 16) return DType::kBFloat16;
        if (code == C::Float8_E4M3FN) return DType::kFloat8E4M3;
        if (code == C::Float8_E5M2) return DType::kFloat8E5M2;
        if (code == C::Int && dt.bits == 32) return DType::kInt32;
        if (code == C::Int && dt.bits == 64) return DType::kInt64;
        if (code == C::Int && dt.bits == 8) return DType::kInt8;
        if (code == C::UInt && dt.bits == 8) return DType::kUInt8;
    }
    return std::nullopt;
}

DType from_dlpack_dtype(nb::dlpack::dtype dt, const char* name) {
    if (const std::optional<DType> d = dlpack_dtype(dt)) return *d;
    throw TypeMismatch(detail::str_cat("argument '", name, "': unsupported DLPack dtype (code ", int(dt.code),
                                       ", bits ", int(dt.bits), ", lanes ", dt.lanes, ")"));
}

// A CUDA tensor through torch's exchange table: one C call instead of five Python attribute reads. False (no Python
// error left) where it does not apply; the attribute path then converts the tensor or raises the usual error.
bool from_exchange(const DlpackExchangeApi& x, nb::handle obj, TensorRef& ref) {
    DlpackView v{};
    if (x.dltensor_from_py_object_no_sync(obj.ptr(), &v) != 0) {
        PyErr_Clear();
        return false;
    }
    nb::dlpack::dtype dt;
    dt.code = v.code;
    dt.bits = v.bits;
    dt.lanes = v.lanes;
    const std::optional<DType> dtype = dlpack_dtype(dt);
#ifdef TESSERA_EXCHANGE_CPU_SMOKE  // local smoke test of this path with a CPU-only torch; never in a real build
    const bool cpu = v.device_type == 1;
    if (cpu) v.device_type = kDlpackCuda;
#endif
    if (v.device_type != kDlpackCuda || !dtype || v.ndim < 0 || v.ndim > kMaxDims) return false;
    ref.dtype = *dtype;
    ref.ndim = v.ndim;
    std::int64_t compact = 1;
    for (int i = v.ndim - 1; i >= 0; --i) {
        ref.shape[i] = v.shape[i];
        ref.strides[i] = v.strides != nullptr ? v.strides[i] : compact;
        compact *= v.shape[i];
    }
    // A tensor with elements but no data pointer (torch 2.11 gives one for functional-tensor wrappers, which have no
    // storage): the attribute path raises torch's own error for it instead of a launch on address 0.
    if (v.data == nullptr && compact != 0) return false;
    ref.data = static_cast<char*>(v.data) + v.byte_offset;
    ref.device = Device{DeviceKind::kCuda, v.device_id};
#ifdef TESSERA_EXCHANGE_CPU_SMOKE
    if (cpu) ref.device = Device{DeviceKind::kCpu, 0};
#endif
    return true;
}

bool same_ref(const TensorRef& x, const TensorRef& y) {
    if (x.data != y.data || x.dtype != y.dtype || x.ndim != y.ndim || x.device.kind != y.device.kind ||
        x.device.index != y.device.index)
        return false;
    for (int i = 0; i < x.ndim; ++i)  // a size-1 dimension's stride is arbitrary and may be normalized
        if (x.shape[i] != y.shape[i] || (x.shape[i] > 1 && x.strides[i] != y.strides[i])) return false;
    return true;
}

// The exchange table's first conversions are checked against the attribute path; a mismatch (an ABI or semantics
// this binding does not expect) turns the table off for the process, with a warning, instead of a wrong pointer.
constexpr int kExchangeChecks = 16;
void disable_exchange(Torch& api, const char* what) {
    api.exchange = nullptr;
    if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                         "tessera: torch's DLPack exchange table gave a different %s than the tensor's attributes; "
                         "using the attributes from now on",
                         what) < 0)
        throw nb::python_error();  // warnings turned into errors
}

TensorRef from_torch(Torch& api, nb::handle obj, const char* name) {
    const PyTypeObject* type = Py_TYPE(obj.ptr());
    if (api.exchange != nullptr && (type == api.exchange_types[0] || type == api.exchange_types[1])) {
        // Only CUDA tensors: other devices are errors anyway, and the table must not see a meta tensor (a torch
        // build crashed on one; 2.11 and 2.15 return an error). The guard costs ~30 ns a tensor.
        PyObject* cuda = api.is_cuda_get != nullptr ? api.is_cuda_get(obj.ptr(), api.is_cuda_closure)
                                                     : PyObject_GetAttr(obj.ptr(), tensor_attrs().is_cuda.ptr());
        if (cuda == nullptr) throw nb::python_error();
        Py_DECREF(cuda);  // Py_True / Py_False are immortal singletons, compared by address
        TensorRef ref;
#ifdef TESSERA_EXCHANGE_CPU_SMOKE
        cuda = Py_True;
#endif
        if (cuda == Py_True && from_exchange(*api.exchange, obj, ref)) {
            if (api.exchange_checks >= kExchangeChecks) return ref;
            ++api.exchange_checks;
            if (same_ref(ref, from_torch_attrs(api, obj, name))) return ref;
            disable_exchange(api, "tensor view");
        }
    }
    return from_torch_attrs(api, obj, name);
}

TensorRef to_ref(nb::handle obj, const char* name) {
    if (obj.is_none()) throw TypeMismatch(detail::str_cat("argument '", name, "': expected a tensor, got None"));
    if (Torch* api = torch_api(); api && PyObject_IsInstance(obj.ptr(), api->tensor_type) == 1)
        return from_torch(*api, obj, name);
    nb::ndarray<> a;
    try {
        a = nb::cast<nb::ndarray<>>(obj);
    } catch (const std::exception&) {
        throw TypeMismatch(detail::str_cat("argument '", name, "': expected a tensor (torch.Tensor or DLPack), got ",
                                           nb::inst_name(obj).c_str()));
    }
    TensorRef ref;
    ref.data = a.data();
    ref.dtype = from_dlpack_dtype(a.dtype(), name);
    TESSERA_CHECK(a.ndim() <= kMaxDims, "argument '", name, "': expected at most ", kMaxDims, " dimensions");
    ref.ndim = static_cast<int>(a.ndim());
    for (int i = 0; i < ref.ndim; ++i) {
        ref.shape[i] = static_cast<std::int64_t>(a.shape(i));
        ref.strides[i] = a.stride(i);
    }
    const int type = a.device_type();
    ref.device = type == nb::device::cuda::value ? Device{DeviceKind::kCuda, a.device_id()}
                 : type == nb::device::cpu::value ? Device{DeviceKind::kCpu, 0}
                                                  : Device{DeviceKind::kOther, a.device_id()};
    return ref;
}

std::optional<TensorRef> to_optional_ref(nb::handle obj, const char* name) {
    if (obj.is_none()) return std::nullopt;
    return to_ref(obj, name);
}

// The stream to launch on: the caller's, else torch's current stream of the tensor's device, else the default.
Stream stream_for(const TensorRef& t, std::optional<std::uintptr_t> stream) {
    if (stream) return reinterpret_cast<Stream>(*stream);
    Torch* api = torch_api();
    if (!api || t.device.kind != DeviceKind::kCuda) return nullptr;
    const auto from_torch_python = [&] {
        return reinterpret_cast<Stream>(nb::cast<std::uintptr_t>(api->raw_stream(t.device.index)));
    };
    void* current = nullptr;
    if (api->exchange != nullptr) {
        if (api->exchange->current_work_stream(kDlpackCuda, t.device.index, &current) != 0) {
            PyErr_Clear();
        } else if (api->stream_checks >= kExchangeChecks) {
            return static_cast<Stream>(current);
        } else {
            ++api->stream_checks;
            const Stream expected = from_torch_python();
            if (expected == static_cast<Stream>(current)) return expected;
            disable_exchange(*api, "current stream");
            return expected;
        }
    }
    return from_torch_python();
}

// fp8_gemm_nt with the GIL released (recipe 0: 1D2D, 1: 1D1D), shared by both FP8 GEMM entry points.
Fp8GemmStatus run_fp8_gemm_nt(const TensorRef& a, const TensorRef& sfa, const TensorRef& b, const TensorRef& sfb,
                              const TensorRef& d, int recipe, Stream stream) {
    nb::gil_scoped_release release;
    return fp8_gemm_nt(a, sfa, b, sfb, d, recipe ? Fp8Recipe::k1D1D : Fp8Recipe::k1D2D, stream);
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
        [](nb::handle a, nb::handle sfa, nb::handle b, nb::handle sfb, nb::handle d, int recipe,
           std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rsa = to_ref(sfa, "sfa"), rb = to_ref(b, "b"),
                            rsb = to_ref(sfb, "sfb"), rd = to_ref(d, "d");  // in argument order: errors name the first
            return static_cast<int>(run_fp8_gemm_nt(ra, rsa, rb, rsb, rd, recipe, stream_for(ra, stream)));
        },
        nb::arg("a"), nb::arg("sfa"), nb::arg("b"), nb::arg("sfb"), nb::arg("d"), nb::arg("recipe"),
        nb::arg("stream") = nb::none());

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
    m.def("_dlpack_exchange_active", [] {
        const Torch* api = torch_api();
        return api != nullptr && api->exchange != nullptr;
    });
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

    // BF16 GEMM and cuBLASLt: D (+)= A·Bᵀ, operands K- or MN-major as their strides say.
    def_dense_gemm(m, "bf16_gemm_nt", &bf16_gemm_nt);
    def_dense_gemm(m, "cublaslt_gemm_nt", &cublaslt_gemm_nt);
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
    m.def("bf16_gemm_config", &bf16_gemm_config, nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("mn_major_a"),
          nb::arg("mn_major_b"), nb::arg("out_f32"), nb::arg("accumulate"), nb::arg("device"));

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
           nb::handle grouped_layout, std::optional<std::uintptr_t> stream) {
            const TensorRef ra = to_ref(a, "a"), rsa = to_ref(sfa, "sfa"), rb = to_ref(b, "b"),
                            rsb = to_ref(sfb, "sfb"), rd = to_ref(d, "d"), rl = to_ref(grouped_layout, "grouped_layout");
            const Stream st = stream_for(ra, stream);
            nb::gil_scoped_release release;
            return static_cast<int>(k_grouped_fp8_gemm_nt_contiguous(ra, rsa, rb, rsb, rd, ks, rl, st));
        },
        nb::arg("a"), nb::arg("sfa"), nb::arg("b"), nb::arg("sfb"), nb::arg("d"), nb::arg("ks"),
        nb::arg("grouped_layout"), nb::arg("stream") = nb::none());

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
