// wgmma shared-memory matrix descriptors (PTX ISA "Matrix Descriptor Format" for wgmma).
// Only the layout the FP8 GEMMs use: K-major, 128-byte swizzle, one 128-byte swizzle atom along K (BK * 1 B = 128 B).
#pragma once

#include <tessera/common.cuh>

namespace tessera::prims {

// Descriptor of a [rows][128 B] K-major tile whose 8-row groups are 1024 B apart, written by TMA with SWIZZLE_128B.
// The tile must start on a 1024-byte boundary (the swizzle XOR uses address bits [7,10); base_offset stays 0).
//   bits  0-13  start address >> 4
//   bits 16-29  leading byte offset >> 4 (unused for swizzled K-major with one atom along K; 1 by convention)
//   bits 32-45  stride byte offset >> 4 = 1024 B between 8-row groups
//   bits 62-63  layout: 1 = 128-byte swizzle
TESSERA_DEVICE uint64_t make_desc_kmajor_sw128(uint32_t smem_addr) {
    constexpr uint64_t kLeadingByteOffset = 16 >> 4;
    constexpr uint64_t kStrideByteOffset = 1024 >> 4;
    constexpr uint64_t kLayout128BSwizzle = 1;
    return static_cast<uint64_t>((smem_addr & 0x3ffffu) >> 4) | (kLeadingByteOffset << 16) |
           (kStrideByteOffset << 32) | (kLayout128BSwizzle << 62);
}

// Advance a descriptor by `bytes` (multiple of 16): the start address field is the low 14 bits and smem addresses
// are below 2^18, so a plain add never carries out of the field.
TESSERA_DEVICE uint64_t advance_desc(uint64_t desc, uint32_t bytes) { return desc + (bytes >> 4); }

}  // namespace tessera::prims
