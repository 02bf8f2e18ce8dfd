// KernelSpec: a kernel family plus named integral compile-time fields plus the target arch. It is a fixed-size
// value (no heap), so building one and looking it up in the in-memory cache allocates nothing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::jit {

enum class Family : std::uint8_t {
    kTransposeFp32,        // FP32 scale factors -> MN-major, TMA-aligned
    kPackUe8m0,            // FP32 power-of-two scale factors -> packed UE8M0 int32, MN-major
    kPackUe8m0KGrouped,    // the same for k-grouped per-channel scales
    kFp8Gemm,              // SM90 FP8 GEMM, 1D2D / 1D1D
    kBf16Gemm,             // SM90 BF16 GEMM, any operand majors, BF16 or FP32 D
    kBf16BatchSumGemm,     // the BF16 GEMM kernel summing over a batch (einsum 'bmk,bnk->mn'), its own entry name
    kBf16GemmLegacyM,      // the BF16 GEMM kernel under the entry name of DeepGEMM's legacy m-grouped Triton kernel
    kBf16GemmLegacyK,      // ... and of its legacy k-grouped (b-fused) one
    kCastFp32ToBf16,       // FP32 -> BF16 row-major copy (einsum's BF16 output from its FP32 sum)
    kHcPrenormGemm,        // SM90 TF32 HyperConnection pre-norm GEMM (+ squared-sum of A's rows)
    kMqaLogits,            // SM90 FP8 MQA logits (lightning indexer, non-paged)
    kPagedMqaLogits,       // SM90 FP8 paged MQA logits
    kPagedMqaMetadata,     // the paged kernel's SM work split
    kCleanLogits,          // -inf outside each query's KV range
    kCount,
};

struct FamilyInfo {
    std::string_view name;         // short name: logs, cache folder, `tessera compile`
    std::string_view header;       // device header the generated source includes
    std::string_view kernel_type;  // class template taking Config
    std::string_view entry;        // extern "C" entry name (profilers see it; keep DeepGEMM's substrings)
};

const FamilyInfo& family_info(Family family) noexcept;

struct SpecField {
    const char* name = nullptr;  // a string literal: compared by content, stored by pointer
    std::int64_t value = 0;
};

// What the JIT does to a cubin after compiling it. Each family's spec builder chooses it (it is part of the spec's
// identity and of its cache key); the JIT only carries it out.
struct PostCompile {
    // > 0: rewrite the reuse and yield hints of the FP8 promotion's FFMA runs, letting every n-th FFMA yield
    // (jit/ffma_hints.hpp). Only hint bits change: results are identical.
    std::uint8_t ffma_yield_interval = 0;
};

struct KernelSpec {
    static constexpr int kMaxFields = 32;

    Family family = Family::kCount;
    int arch = 90;  // sm_90a
    std::uint8_t num_fields = 0;
    PostCompile post{};
    std::array<SpecField, kMaxFields> fields{};

    KernelSpec() = default;
    explicit KernelSpec(Family f) : family(f) {}

    // Adds a named field; `name` must be a string literal (kCamelCase, as the kernel's Config reads it).
    KernelSpec& set(const char* name, std::int64_t value);
    std::int64_t get(std::string_view name) const;  // throws when absent
    std::int64_t get_or(std::string_view name, std::int64_t absent) const;

    bool operator==(const KernelSpec& other) const noexcept;
    std::size_t hash() const noexcept;

    // The generated translation unit: one include, a Config struct, one extern "C" entry.
    std::string render() const;
    // One line for logs: "fp8_gemm{kBlockM=128,...}".
    std::string describe() const;
    // The spec of a describe() line (arch sm_90a, no post-compile pass: the family's spec builder sets that). Throws
    // InvalidArgument naming what it expected for an unknown family or a malformed line.
    static KernelSpec parse(std::string_view line);
};

struct KernelSpecHash {
    std::size_t operator()(const KernelSpec& spec) const noexcept { return spec.hash(); }
};

}  // namespace tessera::jit
