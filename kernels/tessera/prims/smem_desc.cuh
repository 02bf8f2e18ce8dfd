// wgmma shared-memory matrix descriptors (PTX ISA "Matrix Descriptor Format" for wgmma), for tiles TMA wrote with a
// swizzle (make_desc_kmajor: K-major rows of one 32-, 64- or 128-byte swizzle atom, the indexer's head dims); the GEMMs'
// 128-byte swizzle: K-major tiles with one 128-byte swizzle atom along K (FP8: BK = 128 elements, BF16: 64), and
// MN-major tiles (BF16 only: FP8 wgmma reads K-major operands alone) of 128-byte MN chunks.
#pragma once

#include <tessera/common.cuh>

namespace tessera::prims {

// Byte offset in a tile TMA wrote with SWIZZLE_<kSwizzleBytes>B (0: none), from its unswizzled offset: the 16-byte
// chunk bits [4, 4 + log2(kSwizzleBytes / 16)) are XORed with bits [7, ...). The tile starts on a boundary of
// 8 * kSwizzleBytes bytes (the pattern's period), so offsets from its start follow the absolute addresses' pattern.
template <int kSwizzleBytes>
TESSERA_DEVICE uint32_t swizzle_offset(uint32_t offset) {
    if constexpr (kSwizzleBytes == 0) {
        return offset;
    } else {
        return offset ^ (((offset >> 7) & static_cast<uint32_t>(kSwizzleBytes / 16 - 1)) << 4);
    }
}

// Descriptor of a [rows][128 B] K-major tile whose 8-row groups are group_bytes apart (1024: consecutive rows),
// written by TMA with SWIZZLE_128B. The tile must start on a 1024-byte boundary (the swizzle XOR uses address bits
// [7,10); base_offset stays 0). group_bytes = 0 makes every 8-row group of an m64 wgmma read the tile's first 8 rows:
// an 8-row tile then fills all 64 accumulator rows with copies of its own.
//   bits  0-13  start address >> 4
//   bits 16-29  leading byte offset >> 4 (unused for swizzled K-major with one atom along K; 1 by convention)
//   bits 32-45  stride byte offset >> 4: group_bytes between 8-row groups
//   bits 62-63  layout: 1 = 128-byte swizzle
TESSERA_DEVICE uint64_t make_desc_kmajor_sw128(uint32_t smem_addr, uint32_t group_bytes = 1024) {
    constexpr uint64_t kLeadingByteOffset = 16 >> 4;
    constexpr uint64_t kLayout128BSwizzle = 1;
    return static_cast<uint64_t>((smem_addr & 0x3ffffu) >> 4) | (kLeadingByteOffset << 16) |
           (static_cast<uint64_t>(group_bytes >> 4) << 32) | (kLayout128BSwizzle << 62);
}

// Descriptor of an MN-major tile: chunks of 128 bytes along MN (64 BF16 elements), each chunk [K rows][128 B] with its
// 8-row groups 1024 B apart, the chunks `chunk_bytes` apart (a TMA box of 64 K rows per chunk: 8 KB). 1024-byte
// aligned, as above. A k16 step is two 8-row groups: advance the start by 2048 B.
//   bits 16-29  leading byte offset >> 4 = chunk_bytes: from one 128-byte MN chunk to the next
//   bits 32-45  stride byte offset >> 4 = 1024 B: from one 8-row group of K to the next
TESSERA_DEVICE uint64_t make_desc_mnmajor_sw128(uint32_t smem_addr, uint32_t chunk_bytes) {
    constexpr uint64_t kStrideByteOffset = 1024 >> 4;
    constexpr uint64_t kLayout128BSwizzle = 1;
    return static_cast<uint64_t>((smem_addr & 0x3ffffu) >> 4) | (static_cast<uint64_t>(chunk_bytes >> 4) << 16) |
           (kStrideByteOffset << 32) | (kLayout128BSwizzle << 62);
}

// wgmma descriptor of a K-major tile whose rows are kRowBytes (32, 64 or 128) apart and were written by TMA with
// the kRowBytes swizzle, 8-row groups 8 * kRowBytes apart (PTX "Matrix Descriptor Format"). The tile starts on an
// (8 * kRowBytes)-byte boundary, so the base offset stays 0; a k32 step inside the row adds 32 bytes to the start.
//   bits  0-13 start >> 4; 16-29 leading byte offset >> 4 (unused: one atom along K); 32-45 stride byte offset >> 4;
//   bits 62-63 layout: 1 = 128-byte, 2 = 64-byte, 3 = 32-byte swizzle.
template <int kRowBytes>
TESSERA_DEVICE uint64_t make_desc_kmajor(uint32_t smem_addr) {
    static_assert(kRowBytes == 32 || kRowBytes == 64 || kRowBytes == 128, "one swizzle row: 32, 64 or 128 bytes");
    constexpr uint64_t kLayout = kRowBytes == 128 ? 1 : (kRowBytes == 64 ? 2 : 3);
    constexpr uint64_t kStrideByteOffset = (8 * kRowBytes) >> 4;
    return static_cast<uint64_t>((smem_addr & 0x3ffffu) >> 4) | (1ull << 16) | (kStrideByteOffset << 32) |
           (kLayout << 62);
}

// Advance a descriptor by `bytes` (multiple of 16): the start address field is the low 14 bits and smem addresses
// are below 2^18, so a plain add never carries out of the field.
TESSERA_DEVICE uint64_t advance_desc(uint64_t desc, uint32_t bytes) { return desc + (bytes >> 4); }

// The wgmma descriptors of one ring stage's A and B tiles (row 0, k 0), for rings whose stages are kABytes and kBBytes
// apart. A mainloop carries them from k-block to k-block with one add each: ptxas rebuilt them from the
// shared-memory base every k-block (~20 uniform instructions between the promotion and the next issue), even when
// written as stage 0's descriptor plus an offset.
// kAChunkBytes / kBChunkBytes > 0: that operand is MN-major, its 128-byte MN chunks that many bytes apart.
// kAGroupBytes: a K-major A's 8-row groups apart (0: an 8-row A tile read as all 64 rows, make_desc_kmajor_sw128).
template <uint32_t kABytes, uint32_t kBBytes, int kNumStages, uint32_t kAChunkBytes = 0, uint32_t kBChunkBytes = 0,
          uint32_t kAGroupBytes = 1024>
struct StageDescs {
    uint64_t a, b;
    TESSERA_DEVICE static uint64_t make(uint32_t addr, uint32_t chunk_bytes, uint32_t group_bytes = 1024) {
        return chunk_bytes > 0 ? make_desc_mnmajor_sw128(addr, chunk_bytes) : make_desc_kmajor_sw128(addr, group_bytes);
    }
    // a0, b0: shared addresses of stage 0's A and B tiles.
    TESSERA_DEVICE static StageDescs of(uint32_t a0, uint32_t b0, uint32_t stage) {
        return {advance_desc(make(a0, kAChunkBytes, kAGroupBytes), stage * kABytes),
                advance_desc(make(b0, kBChunkBytes), stage * kBBytes)};
    }
    // To the next stage (`wrap`: the ring went back to stage 0). Only the start-address field, in the low word,
    // changes: no stage's address carries out of it.
    TESSERA_DEVICE void advance(bool wrap) {
        a = add_low(a, wrap ? 0u - (kNumStages - 1) * (kABytes >> 4) : kABytes >> 4);
        b = add_low(b, wrap ? 0u - (kNumStages - 1) * (kBBytes >> 4) : kBBytes >> 4);
    }
    TESSERA_DEVICE static uint64_t add_low(uint64_t desc, uint32_t delta) {
        return (desc & ~0xffffffffull) | static_cast<uint32_t>(static_cast<uint32_t>(desc) + delta);
    }
};

}  // namespace tessera::prims
