// Argument checks shared by every op. Each throws InvalidArgument (TypeMismatch for dtypes) with a message of the
// form "<op>: argument '<name>': expected <what>, got <value>", before anything is launched.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "tessera/error.hpp"
#include "tessera/tensor.hpp"

namespace tessera::ops {

struct Arg {
    const char* op;
    const char* name;
};

std::string shape_string(const TensorRef& t);
std::string strides_string(const TensorRef& t);

void check_dtype(Arg arg, const TensorRef& t, std::initializer_list<DType> allowed);
void check_ndim(Arg arg, const TensorRef& t, std::initializer_list<int> allowed);
void check_cuda(Arg arg, const TensorRef& t);  // also: device memory behind a tensor with elements
void check_same_device(Arg arg, const TensorRef& t, const TensorRef& reference, const char* reference_name);
void check_contiguous(Arg arg, const TensorRef& t);
void check_size(Arg arg, const TensorRef& t, int dim, std::int64_t expected);

// A contiguous int32 tensor of `numel` elements (`what` says what they are, for the message).
void check_int32_vector(const char* op, const char* name, const TensorRef& t, std::int64_t numel, const char* what);

// The shapes of D = A·Bᵀ: a [M, K], b [N, K], d [M, N] (2-D each, checked before). Returns M, N, K.
struct GemmShape {
    std::int64_t m, n, k;
};
GemmShape check_nt_shapes(const char* op, const TensorRef& a, const TensorRef& b, const TensorRef& d);

// The batched form: a [G, M, K], b [G, N, K], d [G, M, N] (3-D each, checked before); throws unless K > 0 or the
// output is empty. Returns G, and M, N, K.
struct BmmShape {
    std::int64_t groups, m, n, k;
};
BmmShape check_bmm_shapes(const char* op, const TensorRef& a, const TensorRef& b, const TensorRef& d);

}  // namespace tessera::ops
