// The one error hierarchy of tessera. Messages name the argument, what was expected and what was given.
// InvalidArgument (and its TypeMismatch refinement) is a caller mistake; Unsupported is a valid request this build or
// GPU cannot serve; CudaError and CompileError carry the driver error name or the compiler log.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tessera {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class InvalidArgument : public Error {
public:
    using Error::Error;
};

// A wrong dtype or wrong kind of object: Python maps it to TypeError.
class TypeMismatch : public InvalidArgument {
public:
    using InvalidArgument::InvalidArgument;
};

class Unsupported : public Error {
public:
    using Error::Error;
};

class CudaError : public Error {
public:
    using Error::Error;
};

class CompileError : public Error {
public:
    using Error::Error;
};

// The kernel compiled but uses local memory (register spills) or ptxas serialized its wgmma, which tessera refuses
// (TESSERA_JIT_CHECK_SPILLS=0 runs it anyway). The FP8 planner catches it and plans the problem again without that
// tile.
class SpillError : public CompileError {
public:
    using CompileError::CompileError;
};

namespace detail {

// Builds a message from streamable pieces. Only ever called on the error path.
template <class... Args>
std::string str_cat(const Args&... args) {
    std::ostringstream out;
    (out << ... << args);
    return out.str();
}

}  // namespace detail

}  // namespace tessera

// Throws ExcType with "<function>: <pieces>" when cond is false. The pieces are formatted only on failure.
#define TESSERA_CHECK_AS(ExcType, cond, ...)                                       \
    do {                                                                           \
        if (!(cond)) [[unlikely]]                                                  \
            throw ExcType(::tessera::detail::str_cat(__VA_ARGS__));                \
    } while (0)

#define TESSERA_CHECK(cond, ...) TESSERA_CHECK_AS(::tessera::InvalidArgument, cond, __VA_ARGS__)

// Internal invariant: a failure is a tessera bug, reported with its location.
#define TESSERA_ASSERT(cond)                                                                     \
    do {                                                                                         \
        if (!(cond)) [[unlikely]]                                                                \
            throw ::tessera::Error(::tessera::detail::str_cat("tessera internal error at ", __FILE__, \
                                                              ":", __LINE__, ": ", #cond));      \
    } while (0)
