// The GEMM kinds one kernel family serves through its scheduler. The host's plans and kernel specs (src/ops) include
// this header too, so the numbers a spec carries in kKind are the ones the kernel compares against. Plain C++: no
// CUDA here.
#pragma once

namespace tessera::prims {

enum GemmKind : int { kDense = 0, kContiguous = 1, kPsum = 2, kMasked = 3, kKGrouped = 4 };

}  // namespace tessera::prims
