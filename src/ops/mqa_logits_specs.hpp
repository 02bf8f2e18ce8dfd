// The kernel specs of the non-paged MQA logits op (src/ops/mqa_logits.cpp), for the op and the catalog's compile
// checks (src/catalog/mqa_logits_specs.cpp).
#pragma once

#include "heuristics/mqa_logits_plan.hpp"
#include "jit/spec.hpp"

namespace tessera::ops {

// The main kernel of a plan: its Config fields kHeads, kHeadDim, kNumStages, kOutBf16, kQueryPieces.
jit::KernelSpec mqa_logits_spec(const heuristics::MqaLogitsConfig& config);
// The clean kernel for FP32 or BF16 logits (kOutBf16, kNumThreads).
jit::KernelSpec clean_logits_spec(bool bf16_logits);

}  // namespace tessera::ops
