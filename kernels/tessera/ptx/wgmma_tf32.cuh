// wgmma.mma_async m64nNk8 with FP32 accumulators and TF32 operands, A from registers and B from shared memory (RS).
//
// What the PTX ISA allows for .tf32: k8 per instruction, N a multiple of 8 up to 256, no transpose immediates (both
// operands K-major: B through a K-major descriptor), imm-scale-a/b of +-1. The instruction reads the 32-bit values as
// they are and uses their TF32 part, so FP32 data in shared memory is consumed exactly as a TF32 tensor-core GEMM
// of FP32 inputs consumes it.
//
// A register fragment (4 x b32 per thread, warp w of the warpgroup owns rows 16w .. 16w+15; g = lane / 4,
// q = lane % 4): a[0] = A[16w + g][q], a[1] = A[16w + g + 8][q], a[2] = A[16w + g][q + 4],
// a[3] = A[16w + g + 8][q + 4]. The accumulator layout is the one of every m64nN wgmma: d[4j + {0,1}] = D[16w + g]
// [8j + 2q + {0,1}], d[4j + {2,3}] = D[16w + g + 8][8j + 2q + {0,1}].
//
// Only the N the hyper-connection GEMM uses (8..32) are spelled out: inline asm must list every accumulator register,
// and the family needs no more. One overload per N, chosen by the accumulator array size N/2. scale_d == 0 overwrites
// the accumulators (D = A*B), otherwise D += A*B.
#pragma once

#include <tessera/common.cuh>

namespace tessera::ptx {

// wraps wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 (A in registers)
TESSERA_DEVICE void wgmma_m64k8_tf32_rs(float (&d)[4], const uint32_t (&a)[4], uint64_t desc_b, uint32_t scale_d) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "setp.ne.b32 p, %9, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

// wraps wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 (A in registers)
TESSERA_DEVICE void wgmma_m64k8_tf32_rs(float (&d)[8], const uint32_t (&a)[4], uint64_t desc_b, uint32_t scale_d) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "setp.ne.b32 p, %13, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

// wraps wgmma.mma_async.sync.aligned.m64n24k8.f32.tf32.tf32 (A in registers)
TESSERA_DEVICE void wgmma_m64k8_tf32_rs(float (&d)[12], const uint32_t (&a)[4], uint64_t desc_b, uint32_t scale_d) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "setp.ne.b32 p, %17, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n24k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, %16, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

// wraps wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 (A in registers)
TESSERA_DEVICE void wgmma_m64k8_tf32_rs(float (&d)[16], const uint32_t (&a)[4], uint64_t desc_b, uint32_t scale_d) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "setp.ne.b32 p, %21, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, "
        "1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

}  // namespace tessera::ptx
