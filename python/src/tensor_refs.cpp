// Python objects -> TensorRefs. PyTorch CUDA tensors take a fast path: torch's DLPack C exchange API
// (`torch.Tensor.__dlpack_c_exchange_api__`, a table of C functions: one call fills a DLTensor view, another returns
// the current stream) where torch has it, else a few attribute reads. Anything else that speaks DLPack (numpy, cupy,
// jax) goes through nanobind's ndarray.
#include "tensor_refs.hpp"

#include <nanobind/ndarray.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/error.hpp"
#include "tessera/options.hpp"

namespace nb = nanobind;

namespace tessera::py {
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

}  // namespace

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

std::optional<TensorRef> try_torch_ref(nb::handle obj) {
    Torch* api = torch_api();
    if (api == nullptr || PyObject_IsInstance(obj.ptr(), api->tensor_type) != 1) return std::nullopt;
    try {
        return from_torch(*api, obj, "tensor");
    } catch (const std::exception&) {  // a dtype or rank the binding has no name for, a tensor without storage
        PyErr_Clear();
        return std::nullopt;
    }
}

std::optional<TensorRef> to_optional_ref(nb::handle obj, const char* name) {
    if (obj.is_none()) return std::nullopt;
    return to_ref(obj, name);
}

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

bool dlpack_exchange_active() {
    const Torch* api = torch_api();
    return api != nullptr && api->exchange != nullptr;
}

}  // namespace tessera::py
