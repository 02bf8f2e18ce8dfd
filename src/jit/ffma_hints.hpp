// Operand-reuse hints for the FP8 scale promotion: a post-compile pass over the SASS of a cubin.
//
// The promotion is a run of FFMAs `final_j = acc_j * scale + final_j` that all read one scale register in operand
// slot b. ptxas 13.0 marks that register for the operand reuse cache on every other FFMA only (the other half may
// yield the issue slot, which ends the reuse), so half the FFMAs read the scale and the accumulator from the register
// file together, both from the even bank: a bank conflict on half the promotion. This pass keeps the scale cached
// along each same-scale run and lets only every `yield_every`-th FFMA yield. Only hint bits change (reuse, yield);
// operands, stall counts and barriers are untouched, so the results are the same bit for bit. H200, n = 4:
// 4096x7168x16384 682.8 -> 673.7 us, 128x192 dense / psum / masked 0.7-1.5 % faster.
#pragma once

#include <string>

namespace tessera::jit {

struct FfmaHintStats {
    int runs = 0;      // FFMA runs of at least kMinFfmaRun instructions
    int changed = 0;   // FFMAs whose hints changed
    int reuse = 0;     // FFMAs in those runs that now cache their scale for the next one
};

constexpr int kMinFfmaRun = 16;  // the promotion's runs; shorter ones (epilogue, scale math) are left alone

// Rewrites the hints in place in every .text section of a little-endian ELF64 sm_90 cubin. Returns false, leaving
// the cubin untouched, for anything else (or yield_every < 1).
bool apply_ffma_reuse_hints(std::string& cubin, int yield_every, FfmaHintStats* stats = nullptr);

}  // namespace tessera::jit
