// Basic types, qualifiers and the JIT entry convention shared by every device header.
// Device headers include no system headers: NVRTC compiles them without a host toolchain, and that keeps
// cold compiles fast. Every kernel family header defines `template <class Config> struct <Family>Kernel` with
// `Params`, `kNumThreads` and `static __device__ void run(const Params&)`; the JIT renders one
// `extern "C" __global__` entry named `tessera_kernel` that forwards to it.
#pragma once

namespace tessera {

using int8_t = signed char;
using uint8_t = unsigned char;
using int16_t = short;
using uint16_t = unsigned short;
using int32_t = int;
using uint32_t = unsigned int;
using int64_t = long long;
using uint64_t = unsigned long long;

// Bit-compatible with the driver's CUtensorMap (128 bytes, 64-byte aligned); passed as a __grid_constant__ member.
struct alignas(64) TmaDescriptor {
    uint64_t opaque[16];
};
static_assert(sizeof(TmaDescriptor) == 128, "CUtensorMap is 128 bytes");

// A Config field equal to kDynamic means "read the value from Params at run time".
constexpr int kDynamic = 0;

template <class T>
__host__ __device__ constexpr T ceil_div(T a, T b) { return (a + b - 1) / b; }

template <class T>
__host__ __device__ constexpr T align_up(T a, T b) { return ceil_div(a, b) * b; }

// std::conditional without <type_traits> (see above: no system headers).
template <bool kCond, class T, class F>
struct Conditional {
    using type = T;
};
template <class T, class F>
struct Conditional<false, T, F> {
    using type = F;
};
template <bool kCond, class T, class F>
using conditional_t = typename Conditional<kCond, T, F>::type;

// Registers per thread of a one-CTA-per-SM launch of `threads` (what ptxas gives under __launch_bounds__(threads, 1):
// the 64K-register file over the warps, counted in fours, in units of 8, at most 255). setmaxnreg only moves
// registers within this CTA pool: a warp role's increase past what the others release waits forever.
__host__ __device__ constexpr int launch_regs_per_thread(int threads) {
    const int regs = 65536 / (align_up(threads / 32, 4) * 32) / 8 * 8;
    return regs < 255 ? regs : 255;
}

}  // namespace tessera

#define TESSERA_DEVICE __device__ __forceinline__

// Every kernel body is guarded so that a non-sm_90a pass (or a host pass) cannot silently compile a wrong kernel.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 900)
#error "tessera kernels need sm_90a"
#endif
