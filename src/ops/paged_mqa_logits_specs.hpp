// The kernel specs of the paged MQA logits family, as fp8_paged_mqa_logits and get_paged_mqa_logits_metadata plan
// them (the catalog compiles the same ones).
#pragma once

#include "jit/spec.hpp"

namespace tessera::ops {

// Threads of the metadata kernel (one CTA).
constexpr int kPagedMqaMetadataThreads = 512;

// Shared memory of the logits kernel (sm90/paged_mqa_logits.cuh, SharedStorage; the kernel asserts the formula).
int paged_mqa_logits_smem_bytes(int next_n, int num_heads, int num_stages, int num_q_stages);

// The logits kernel for next_n query tokens of num_heads heads (D = 128): as many page stages as max_smem_bytes of
// shared memory hold (at most 24, a multiple of the math warpgroups).
jit::KernelSpec paged_mqa_logits_spec(int next_n, int num_heads, bool out_bf16, bool clean_logits, int max_smem_bytes);
int paged_mqa_logits_threads(const jit::KernelSpec& spec);

const jit::KernelSpec& paged_mqa_metadata_spec();

}  // namespace tessera::ops
