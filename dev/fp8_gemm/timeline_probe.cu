// Where a decode GEMM's microseconds go inside its CTAs (docs/perf/fp8_gemm.md v10: ours stay active ~1 us longer
// than cuBLASLt's on 1x7168x2048 and 128x7168x2048, for the same DRAM bytes). Builds the FP8 kernel with its timeline
// hooks defined (they are empty in the library), runs each plan after a 2 GB memset flush as the benchmark does, and
// prints, per event, when CTAs reach it relative to the first CTA's entry (%globaltimer, ns): the earliest CTA,
// the median and the latest, medians over the repeats.
//
//   nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels dev/fp8_gemm/timeline_probe.cu -lcuda \
//       -o /tmp/timeline_probe && /tmp/timeline_probe
//
// Events (kernels/tessera/sm90/fp8_gemm.cuh, TESSERA_TIMELINE_*): CTA entry; producer start (barriers initialized,
// about when the first TMA loads go out); the producer's last load issued; a consumer's first full stage (the first
// bytes arrived); its last tile's mainloop done; its last store issued; CTA exit (stores complete). Inputs are
// constant bytes: a timing probe, not a check (the library's tests check these plans).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace timeline {
enum Event { kEntry, kProducerStart, kProducerLastLoad, kFirstFull, kMainloopDone, kStoreIssued, kExit, kNumEvents };
constexpr int kMaxCtas = 264;
__device__ unsigned long long marks[kMaxCtas][kNumEvents];
__device__ __forceinline__ unsigned long long now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
}  // namespace timeline

// The earliest (FIRST) or latest (LAST) time this CTA reaches the event; `cond` picks the one thread that records.
#define TESSERA_TIMELINE_FIRST(event, cond) \
    if (cond) atomicMin(&timeline::marks[blockIdx.x][timeline::event], timeline::now())
#define TESSERA_TIMELINE_LAST(event, cond) \
    if (cond) atomicMax(&timeline::marks[blockIdx.x][timeline::event], timeline::now())

#include <tessera/sm90/fp8_gemm.cuh>

#include "dense_operands.hpp"

namespace {

template <int BM, int BN, int S, int N, int K>
struct Plan {
    static constexpr int kBlockM = BM, kBlockN = BN, kBlockK = 128, kNumStages = S,
                         kNumMathWarpgroups = BM > 64 ? 2 : 1, kClusterM = 1, kClusterN = 1, kNumSMs = 132,
                         kShapeM = 0, kShapeN = N, kShapeK = K, kGroupSize = 8, kMode = 0;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

template <class C>
void run_plan(const char* name, uint32_t m, void* flush) {
    using Kernel = tessera::sm90::Fp8GemmKernel<C>;
    constexpr uint32_t n = C::kShapeN, k = C::kShapeK;
    DenseOperands<Kernel, C> ops(m);
    const typename Kernel::Params& p = ops.p;
    check(cudaFuncSetAttribute(probe_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, Kernel::kSmemBytes),
          "cudaFuncSetAttribute");

    constexpr int kReps = 20;
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    // [event][statistic: earliest, median, latest CTA] over repeats; CTAs without a tile leave their marks unset.
    std::vector<double> stats[timeline::kNumEvents][3];
    std::vector<double> event_us;
    std::vector<unsigned long long> host(timeline::kMaxCtas * timeline::kNumEvents);
    for (int rep = 0; rep < kReps + 2; ++rep) {
        for (int c = 0; c < timeline::kMaxCtas; ++c)
            for (int e = 0; e < timeline::kNumEvents; ++e)
                host[c * timeline::kNumEvents + e] =
                    e == timeline::kProducerLastLoad || e >= timeline::kMainloopDone ? 0ull : ~0ull;
        check(cudaMemcpyToSymbol(timeline::marks, host.data(), host.size() * sizeof(host[0])), "cudaMemcpyToSymbol");
        const double us = flushed_launch_us<C>(p, flush, rep, start, stop);
        if (rep < 2) continue;  // warm-up
        event_us.push_back(us);
        check(cudaMemcpyFromSymbol(host.data(), timeline::marks, host.size() * sizeof(host[0])),
              "cudaMemcpyFromSymbol");
        unsigned long long t0 = ~0ull;
        for (int c = 0; c < C::kNumSMs; ++c) t0 = std::min(t0, host[c * timeline::kNumEvents + timeline::kEntry]);
        for (int e = 0; e < timeline::kNumEvents; ++e) {
            std::vector<double> at;
            for (int c = 0; c < C::kNumSMs; ++c) {
                const unsigned long long t = host[c * timeline::kNumEvents + e];
                if (t != 0ull && t != ~0ull) at.push_back(static_cast<double>(t - t0) * 1e-3);
            }
            if (at.empty()) continue;
            std::sort(at.begin(), at.end());
            stats[e][0].push_back(at.front());
            stats[e][1].push_back(at[at.size() / 2]);
            stats[e][2].push_back(at.back());
        }
    }
    static const char* names[] = {"CTA entry", "producer start", "producer last load", "first full stage",
                                  "mainloop done", "store issued", "CTA exit"};
    const double mb = (double(n) * k + double(m) * k) / 1e6;
    std::printf("== %s  %ux%ux%u, block %dx%d, %d stages, %.1f MB of operands; events: %.2f us (launch gap included)\n",
                name, m, n, k, C::kBlockM, C::kBlockN, C::kNumStages, mb, median(event_us));
    std::printf("   %-20s %10s %10s %10s   (us after the first CTA entry; CTAs with a tile)\n", "event", "earliest",
                "median", "latest");
    for (int e = 0; e < timeline::kNumEvents; ++e)
        std::printf("   %-20s %10.2f %10.2f %10.2f\n", names[e], median(stats[e][0]), median(stats[e][1]),
                    median(stats[e][2]));
    cudaEventDestroy(start), cudaEventDestroy(stop);
}

}  // namespace

int main() {
    void* flush = nullptr;
    check(cudaMalloc(&flush, 2ull << 30), "cudaMalloc");
    // The heuristic's plans (fp8_gemm_config) for the rows in question; stages as the planner derives them.
    run_plan<Plan<64, 64, 12, 7168, 2048>>("1x7168x2048 pick", 1, flush);
    run_plan<Plan<64, 128, 8, 7168, 2048>>("128x7168x2048 pick (v10)", 128, flush);
    run_plan<Plan<64, 112, 9, 7168, 2048>>("128x7168x2048 v9 pick", 128, flush);
    run_plan<Plan<64, 64, 12, 4096, 7168>>("128x4096x7168 pick", 128, flush);
    run_plan<Plan<128, 128, 5, 32768, 512>>("128x32768x512 pick", 128, flush);
    return 0;
}
