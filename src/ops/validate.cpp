// Shared argument checks.
#include "ops/validate.hpp"

#include <sstream>

namespace tessera::ops {
namespace {

std::string list_string(const std::array<std::int64_t, kMaxDims>& v, int n) {
    std::ostringstream s;
    s << "[";
    for (int i = 0; i < n; ++i) s << (i ? ", " : "") << v[i];
    s << "]";
    return s.str();
}

std::string device_string(const Device& d) {
    switch (d.kind) {
        case DeviceKind::kCpu: return "cpu";
        case DeviceKind::kCuda: return "cuda:" + std::to_string(d.index);
        case DeviceKind::kOther: return "a non-CUDA device";
    }
    return "unknown";
}

}  // namespace

std::string shape_string(const TensorRef& t) { return list_string(t.shape, t.ndim); }
std::string strides_string(const TensorRef& t) { return list_string(t.strides, t.ndim); }

void check_dtype(Arg arg, const TensorRef& t, std::initializer_list<DType> allowed) {
    for (DType d : allowed)
        if (t.dtype == d) return;
    std::string expected;
    for (DType d : allowed) expected += (expected.empty() ? "" : " or ") + std::string(dtype_name(d));
    throw TypeMismatch(detail::str_cat(arg.op, ": argument '", arg.name, "': expected dtype ", expected, ", got ",
                                       dtype_name(t.dtype)));
}

void check_ndim(Arg arg, const TensorRef& t, std::initializer_list<int> allowed) {
    for (int n : allowed)
        if (t.ndim == n) return;
    std::string expected;
    for (int n : allowed) expected += (expected.empty() ? "" : " or ") + std::to_string(n);
    throw InvalidArgument(detail::str_cat(arg.op, ": argument '", arg.name, "': expected ", expected,
                                          " dimensions, got ", t.ndim, " (shape ", shape_string(t), ")"));
}

namespace {
// A tensor with elements but no memory (torch's functional-tensor wrappers report data_ptr() == 0) would be read or
// written at address 0 by the kernel.
void check_has_memory(Arg arg, const TensorRef& t) {
    TESSERA_CHECK(t.data != nullptr || t.numel() == 0, arg.op, ": argument '", arg.name,
                  "': expected a tensor with device memory, got a null data pointer for ", t.numel(), " elements");
}
}  // namespace

void check_cuda(Arg arg, const TensorRef& t) {
    TESSERA_CHECK(t.device.kind == DeviceKind::kCuda, arg.op, ": argument '", arg.name,
                  "': expected a CUDA tensor, got a tensor on ", device_string(t.device));
    check_has_memory(arg, t);
}

void check_same_device(Arg arg, const TensorRef& t, const TensorRef& reference, const char* reference_name) {
    TESSERA_CHECK(t.device == reference.device, arg.op, ": argument '", arg.name, "': expected the device of '",
                  reference_name, "' (", device_string(reference.device), "), got ", device_string(t.device));
    check_has_memory(arg, t);
}

void check_contiguous(Arg arg, const TensorRef& t) {
    TESSERA_CHECK(t.is_contiguous(), arg.op, ": argument '", arg.name, "': expected a contiguous tensor, got shape ",
                  shape_string(t), " with strides ", strides_string(t));
}

void check_size(Arg arg, const TensorRef& t, int dim, std::int64_t expected) {
    TESSERA_CHECK(t.size(dim) == expected, arg.op, ": argument '", arg.name, "': expected size ", expected,
                  " at dim ", dim, ", got shape ", shape_string(t));
}

GemmShape check_nt_shapes(const char* op, const TensorRef& a, const TensorRef& b, const TensorRef& d) {
    const std::int64_t m = a.size(0), k = a.size(1), n = b.size(0);
    TESSERA_CHECK(b.size(1) == k, op, ": argument 'b': expected [N, K] with K = ", k, " (from a), got shape ",
                  shape_string(b));
    TESSERA_CHECK(d.size(0) == m && d.size(1) == n, op, ": argument 'd': expected shape [", m, ", ", n, "], got ",
                  shape_string(d));
    return {m, n, k};
}

BmmShape check_bmm_shapes(const char* op, const TensorRef& a, const TensorRef& b, const TensorRef& d) {
    const std::int64_t groups = a.size(0), m = a.size(1), k = a.size(2), n = b.size(1);
    TESSERA_CHECK(b.size(0) == groups && b.size(2) == k, op, ": argument 'b': expected [", groups, ", N, ", k,
                  "] (batch and K from a), got shape ", shape_string(b));
    TESSERA_CHECK(d.size(0) == groups && d.size(1) == m && d.size(2) == n, op, ": argument 'd': expected [", groups,
                  ", ", m, ", ", n, "], got shape ", shape_string(d));
    TESSERA_CHECK(k > 0 || groups == 0 || m == 0 || n == 0, op, ": argument 'a': expected K > 0 (an empty "
                  "contraction is the caller's: d = 0), got K = 0");
    return {groups, m, n, k};
}

void check_int32_vector(const char* op, const char* name, const TensorRef& t, std::int64_t numel, const char* what) {
    check_dtype({op, name}, t, {DType::kInt32});
    TESSERA_CHECK(t.is_contiguous() && t.numel() == numel, op, ": argument '", name, "': expected a contiguous int32 ",
                  "tensor of ", numel, " elements (", what, "), got shape ", shape_string(t), " strides ",
                  strides_string(t));
}

}  // namespace tessera::ops
