// Python objects -> TensorRefs for the _C bindings (tensor_refs.cpp), and the family binding functions the module
// definition (bindings.cpp) calls, each in its own file.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>

#include "tessera/runtime.hpp"
#include "tessera/tensor.hpp"

namespace tessera::py {

// A tensor argument as a TensorRef (torch CUDA tensors on the fast path, anything DLPack otherwise); `name` is the
// argument's name in errors.
TensorRef to_ref(nanobind::handle obj, const char* name);
std::optional<TensorRef> to_optional_ref(nanobind::handle obj, const char* name);
// obj as a TensorRef when it is a torch.Tensor this binding can represent; nullopt otherwise (a fast path then hands
// the call to the Python implementation, whose checks name the argument as the op does).
std::optional<TensorRef> try_torch_ref(nanobind::handle obj);
// The stream to launch on: the caller's, else torch's current stream of the tensor's device, else the default.
Stream stream_for(const TensorRef& t, std::optional<std::uintptr_t> stream);
// Whether torch's DLPack C exchange table is in use (tests).
bool dlpack_exchange_active();

// One per kernel family (bind_<family>.cpp).
void bind_bf16(nanobind::module_& m);
void bind_hc_prenorm(nanobind::module_& m);
void bind_mqa_logits(nanobind::module_& m);
void bind_paged_mqa_logits(nanobind::module_& m);

}  // namespace tessera::py
