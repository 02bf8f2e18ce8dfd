// Shared/global memory wrappers used by the epilogues and the scale loads: shared-space addresses, stmatrix,
// vector shared stores, distributed shared-memory loads and st.async pushes into a cluster peer, non-coherent global
// loads and the FP32 <-> BF16x2 / E4M3x4 conversions.
#pragma once

#include <tessera/common.cuh>

namespace tessera::ptx {

// The 32-bit shared::cta address of a generic pointer into shared memory.
TESSERA_DEVICE uint32_t smem_addr(const void* ptr) { return static_cast<uint32_t>(__cvta_generic_to_shared(ptr)); }

// wraps cvt.rn.bf16x2.f32: lo lands in bits [0,16), hi in [16,32) (round to nearest even).
TESSERA_DEVICE uint32_t pack_bf16x2(float lo, float hi) {
    uint32_t packed;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
    return packed;
}

// wraps cvt.rn.satfinite.e4m3x2.f32 (twice): x[i] rounded to E4M3 in byte i (bytes 0-1 from one conversion, whose
// first operand fills the upper byte).
TESSERA_DEVICE uint32_t pack_e4m3x4(float x0, float x1, float x2, float x3) {
    uint32_t packed;
    asm("{\n .reg .b16 lo, hi;\n"
        " cvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\n"
        " cvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n"
        " mov.b32 %0, {lo, hi};\n}"
        : "=r"(packed)
        : "f"(x0), "f"(x1), "f"(x2), "f"(x3));
    return packed;
}

// wraps cvt.rn.f16x2.e4m3x2 and cvt.f32.f16: the four E4M3 bytes of `bytes` (byte i -> x[i]) as FP32, exactly.
TESSERA_DEVICE void unpack_e4m3x4(uint32_t bytes, float (&x)[4]) {
    asm("{\n .reg .b16 lo, hi, h0, h1, h2, h3;\n .reg .b32 lo2, hi2;\n"
        " mov.b32 {lo, hi}, %4;\n"
        " cvt.rn.f16x2.e4m3x2 lo2, lo;\n"
        " cvt.rn.f16x2.e4m3x2 hi2, hi;\n"
        " mov.b32 {h0, h1}, lo2;\n"
        " mov.b32 {h2, h3}, hi2;\n"
        " cvt.f32.f16 %0, h0;\n cvt.f32.f16 %1, h1;\n cvt.f32.f16 %2, h2;\n cvt.f32.f16 %3, h3;\n}"
        : "=f"(x[0]), "=f"(x[1]), "=f"(x[2]), "=f"(x[3])
        : "r"(bytes));
}

// wraps stmatrix.sync.aligned.x2.m8n8.shared.b16: lanes 0-15 give the row addresses of two 8x8 b16 matrices.
TESSERA_DEVICE void stmatrix_x2(uint32_t addr, uint32_t r0, uint32_t r1) {
    asm volatile("stmatrix.sync.aligned.x2.m8n8.shared.b16 [%0], {%1, %2};" ::"r"(addr), "r"(r0), "r"(r1) : "memory");
}

// wraps stmatrix.sync.aligned.x4.m8n8.shared.b16: lane l gives the address of row l%8 of matrix l/8.
TESSERA_DEVICE void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    asm volatile("stmatrix.sync.aligned.x4.m8n8.shared.b16 [%0], {%1, %2, %3, %4};"
                 ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

// wraps ld.shared.v4.b32
TESSERA_DEVICE void ld_shared_v4(uint32_t addr, uint32_t& x, uint32_t& y, uint32_t& z, uint32_t& w) {
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(addr) : "memory");
}

// wraps st.shared.v2.f32
TESSERA_DEVICE void st_shared_v2(uint32_t addr, float x, float y) {
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

// wraps st.shared.v4.f32
TESSERA_DEVICE void st_shared_v4(uint32_t addr, float x, float y, float z, float w) {
    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(x), "f"(y), "f"(z), "f"(w) : "memory");
}

// wraps ld.shared::cluster.v4.f32 on an address from map_shared_rank (distributed shared memory of a peer CTA).
TESSERA_DEVICE void ld_shared_cluster_v4(uint32_t addr, float& x, float& y, float& z, float& w) {
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(x), "=f"(y), "=f"(z), "=f"(w)
                 : "r"(addr)
                 : "memory");
}

// wraps st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32: 16 bytes into the shared memory of a CTA of
// the cluster (an address from map_shared_rank), completing 16 bytes of transaction count on that CTA's mbarrier
// `remote_bar` (also from map_shared_rank); the values leave from registers, so the sender tracks nothing.
TESSERA_DEVICE void st_async_v4(uint32_t remote, float x, float y, float z, float w, uint32_t remote_bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];"
                 ::"r"(remote), "f"(x), "f"(y), "f"(z), "f"(w), "r"(remote_bar) : "memory");
}

// wraps st.async.shared::cluster.mbarrier::complete_tx::bytes.b32: as st_async_v4, one float (4 bytes).
TESSERA_DEVICE void st_async_f32(uint32_t remote, float x, uint32_t remote_bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];"
                 ::"r"(remote), "r"(__float_as_uint(x)), "r"(remote_bar) : "memory");
}

// wraps ld.global.nc.f32: read-only data (scales) that no thread of this grid writes.
TESSERA_DEVICE float ld_global_nc(const float* ptr) {
    float x;
    asm("ld.global.nc.f32 %0, [%1];" : "=f"(x) : "l"(ptr));
    return x;
}

// ld.global.nc.f32 as a volatile asm: it keeps its place relative to the other volatile asm (barrier waits), so a
// load meant to run ahead is not sunk next to its use.
TESSERA_DEVICE float ld_global_nc_volatile(const float* ptr) {
    float x;
    asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(x) : "l"(ptr));
    return x;
}

// wraps ld.global.nc.s32: group layouts and counts, written before the kernel starts.
TESSERA_DEVICE int32_t ld_global_nc(const int32_t* ptr) {
    int32_t x;
    asm("ld.global.nc.s32 %0, [%1];" : "=r"(x) : "l"(ptr));
    return x;
}

// wraps st.global.b32 (two packed BF16 values).
TESSERA_DEVICE void st_global_b32(void* ptr, uint32_t x) {
    asm volatile("st.global.b32 [%0], %1;" ::"l"(ptr), "r"(x) : "memory");
}

// wraps red.global.add.f32 (FP32 accumulation into global memory, no return value).
TESSERA_DEVICE void red_global_add(float* ptr, float x) {
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(ptr), "f"(x) : "memory");
}

// Predicated forms (@p st / @p red): a per-thread condition that stays a predicate instead of a branch. A divergent
// branch in a kernel's tile loop can make ptxas treat the loop's state as non-uniform and keep wgmma descriptors in
// vector registers (R2UR before every wgmma; see store_rows_direct in sm90/gemm_epilogue.cuh).
TESSERA_DEVICE void st_global_b32_if(bool pred, void* ptr, uint32_t x) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p st.global.b32 [%0], %1;\n}" ::"l"(ptr), "r"(x),
                 "r"(static_cast<uint32_t>(pred))
                 : "memory");
}
TESSERA_DEVICE void st_global_v4_if(bool pred, void* ptr, uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %5, 0;\n @p st.global.v4.b32 [%0], {%1, %2, %3, %4};\n}" ::"l"(ptr),
                 "r"(x), "r"(y), "r"(z), "r"(w), "r"(static_cast<uint32_t>(pred))
                 : "memory");
}
TESSERA_DEVICE void red_global_add_v2_if(bool pred, float* ptr, float x, float y) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %3, 0;\n @p red.global.add.f32 [%0], %1;\n"
                 " @p red.global.add.f32 [%0+4], %2;\n}" ::"l"(ptr), "f"(x), "f"(y), "r"(static_cast<uint32_t>(pred))
                 : "memory");
}

// wraps @p red.global.add.noftz.bf16x2 (two BF16 sums, each rounded to BF16; sm_90)
TESSERA_DEVICE void red_global_add_bf16x2_if(bool pred, void* ptr, uint32_t packed) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p red.global.add.noftz.bf16x2 [%0], %1;\n}" ::"l"(ptr),
                 "r"(packed), "r"(static_cast<uint32_t>(pred))
                 : "memory");
}

// Stream-K partial sums in global memory: written by one CTA, read by another within the same kernel, so both sides
// go through L2 (.cg), not the non-coherent or L1 paths.
TESSERA_DEVICE void st_global_cg_v4(float* ptr, float x, float y, float z, float w) {
    asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(ptr), "f"(x), "f"(y), "f"(z), "f"(w) : "memory");
}
// x..w += the float4 at ptr, in one asm block: its four temporaries die inside it, which keeps a gather of many
// float4s from holding all of them in registers at once.
TESSERA_DEVICE void add_global_cg_v4(const float* ptr, float& x, float& y, float& z, float& w) {
    asm volatile(
        "{\n.reg .f32 a, b, c, d;\n"
        "ld.global.cg.v4.f32 {a, b, c, d}, [%4];\n"
        "add.f32 %0, %0, a;\nadd.f32 %1, %1, b;\nadd.f32 %2, %2, c;\nadd.f32 %3, %3, d;\n}"
        : "+f"(x), "+f"(y), "+f"(z), "+f"(w)
        : "l"(ptr)
        : "memory");
}
// Arrival counters: a release add after the partial sums, an acquire read before the owner reads them.
TESSERA_DEVICE void red_release_gpu_add(uint32_t* ptr, uint32_t x) {
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(ptr), "r"(x) : "memory");
}
TESSERA_DEVICE uint32_t ld_acquire_gpu(const uint32_t* ptr) {
    uint32_t x;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(x) : "l"(ptr) : "memory");
    return x;
}
TESSERA_DEVICE void st_relaxed_gpu(uint32_t* ptr, uint32_t x) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(ptr), "r"(x) : "memory");
}

// Predicated stores (@p st): the condition stays a predicate rather than a branch, so the consumers' tile loop keeps
// uniform control flow (and its wgmma descriptors in uniform registers).
TESSERA_DEVICE void st_global_f32_if(bool pred, float* ptr, float x) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p st.global.f32 [%0], %1;\n}" ::"l"(ptr), "f"(x),
                 "r"(static_cast<uint32_t>(pred))
                 : "memory");
}
// x rounded to BF16 (nearest even), stored at ptr.
TESSERA_DEVICE void st_global_bf16_if(bool pred, uint16_t* ptr, float x) {
    asm volatile(
        "{\n .reg .pred p;\n .reg .b16 h;\n setp.ne.b32 p, %2, 0;\n cvt.rn.bf16.f32 h, %1;\n"
        " @p st.global.b16 [%0], h;\n}" ::"l"(ptr),
        "f"(x), "r"(static_cast<uint32_t>(pred))
        : "memory");
}

// ld.shared.u16, zero-extended. Volatile: it stays after the stage's barrier wait (the data comes from TMA).
TESSERA_DEVICE uint32_t ld_shared_u16(uint32_t addr) {
    uint32_t x;
    asm volatile("ld.shared.u16 %0, [%1];" : "=r"(x) : "r"(addr) : "memory");
    return x;
}

// C values the host copied into D before the launch (read once, by the thread that then overwrites them).
TESSERA_DEVICE uint32_t ld_global_b32(const void* ptr) {
    uint32_t x;
    asm volatile("ld.global.b32 %0, [%1];" : "=r"(x) : "l"(ptr) : "memory");
    return x;
}
TESSERA_DEVICE void ld_global_v2(const float* ptr, float& x, float& y) {
    asm volatile("ld.global.v2.f32 {%0, %1}, [%2];" : "=f"(x), "=f"(y) : "l"(ptr) : "memory");
}
TESSERA_DEVICE void st_global_v2(float* ptr, float x, float y) {
    asm volatile("st.global.v2.f32 [%0], {%1, %2};" ::"l"(ptr), "f"(x), "f"(y) : "memory");
}
TESSERA_DEVICE void st_global_v4(float* ptr, float x, float y, float z, float w) {
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(ptr), "f"(x), "f"(y), "f"(z), "f"(w) : "memory");
}
// Partials written by other CTAs of this grid: read through L2 (.cg), never from a stale L1 line.
TESSERA_DEVICE void ld_global_cg_v4(const float* ptr, float& x, float& y, float& z, float& w) {
    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(x), "=f"(y), "=f"(z), "=f"(w)
                 : "l"(ptr)
                 : "memory");
}
TESSERA_DEVICE float ld_global_cg(const float* ptr) {
    float x;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(x) : "l"(ptr) : "memory");
    return x;
}
// The arrival count of an m-block: returns the value before the add.
TESSERA_DEVICE uint32_t atom_add_acq_rel_gpu(uint32_t* ptr, uint32_t x) {
    uint32_t old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(ptr), "r"(x) : "memory");
    return old;
}
TESSERA_DEVICE void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// wraps st.global.v4.b32 (16 bytes, four 32-bit words)
TESSERA_DEVICE void st_global_v4_b32(void* ptr, uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(ptr), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}

}  // namespace tessera::ptx
