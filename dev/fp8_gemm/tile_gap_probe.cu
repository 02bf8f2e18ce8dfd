// Where the time between two tiles goes in the persistent FP8 kernel. Short-K rows pay a fixed cost per tile on top
// of their k-blocks: fitting the contiguous suite's tile periods against k-blocks per tile gives ~1.2 us per tile,
// the dense M = 4096 rows ~0.75 us (fp8_grouped.md v18). That is 12 % of a 16-k-block tile. This probe builds the
// kernel with its per-tile hook (TESSERA_TILE_MARK) defined. One consumer thread records clock64 at four steps of
// every tile:
//   tile start   the scheduler returned the tile;
//   loop enter   the B-scale loads issued (their latency shows in the first k-block), about to wait for the first
//                stage;
//   loop done    the last k-block promoted;
//   stored       the epilogue issued its TMA stores;
// and, inside a whole tile's store (fp8_gemm_epilogue.cuh, warp 0 of warpgroup 0):
//   entered      past the wait for the previous stores and the warpgroup barrier;
//   written      D converted and written to shared memory (stmatrix), the proxy fence done;
//   barrier      past the warpgroup barrier after the writes (the other warps' writes done), before the TMA issue.
// It prints, per plan, the medians over tiles of:
//   prologue     loop enter - tile start;
//   mainloop     loop done - loop enter, and the same per k-block;
//   epilogue     stored - loop done, split into: to entered | to written | to barrier | to stored;
//   to next      the next tile's start - stored (the scheduler's next()).
// Each step is read from the CTA's own SM clock (cycles). Runs after a 2 GB memset flush, as the benchmark does.
// The last four plans put one 128x192 plan on the same work as dense and as m-grouped contiguous.
//
//   nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels dev/fp8_gemm/tile_gap_probe.cu -lcuda \
//       -o /tmp/tile_gap_probe && /tmp/tile_gap_probe
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace tile_gap {
enum Field {
    kTileStart, kLoopEnter, kLoopDone, kStored, kEpiEntered, kEpiWritten, kEpiBarrier, kCta, kValidRows, kNumFields
};
constexpr int kNBlockStride = 512;  // tiles indexed (D row / 64) * stride + n_block (N / BN < 512 for every plan)
constexpr int kMaxRowBlocks = 2048;  // D rows / 64 (masked: every group's M_max rows)
__device__ long long marks[kMaxRowBlocks * kNBlockStride][kNumFields];
}  // namespace tile_gap

#define TESSERA_TILE_MARK(event, tile, cond)                                                                         \
    if (cond) {                                                                                                       \
        long long* row = tile_gap::marks[(tile).d_row / 64 * tile_gap::kNBlockStride + (tile).coord.n_block];        \
        row[tile_gap::event] = clock64();                                                                             \
        if (tile_gap::event == tile_gap::kTileStart) row[tile_gap::kCta] = blockIdx.x;                               \
        if (tile_gap::event == tile_gap::kTileStart) row[tile_gap::kValidRows] = (tile).valid_rows;                   \
    }

#include <tessera/sm90/fp8_gemm.cuh>

#include "dense_operands.hpp"

namespace {

template <int BM, int BN, int S, int N, int K, int Group, int DInRing = 0, int Kind = 0>
struct Plan {
    static constexpr int kBlockM = BM, kBlockN = BN, kBlockK = 128, kNumStages = S,
                         kNumMathWarpgroups = BM > 64 ? 2 : 1, kClusterM = 1, kClusterN = 1, kNumSMs = 132,
                         kShapeM = 0, kShapeN = N, kShapeK = K, kGroupSize = Group, kMode = 0, kDInRing = DInRing,
                         kGemmKind = Kind;
};

double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <class C>
void run_plan(const char* name, uint32_t m, void* flush, uint32_t groups = 1, uint32_t masked_m = 0) {
    using Kernel = tessera::sm90::Fp8GemmKernel<C>;
    constexpr int kFields = tile_gap::kNumFields;
    const int row_blocks = static_cast<int>((m + 63) / 64);
    constexpr int n_blocks = (C::kShapeN + C::kBlockN - 1) / C::kBlockN;
    static_assert(n_blocks <= tile_gap::kNBlockStride, "raise kNBlockStride");
    if (row_blocks > tile_gap::kMaxRowBlocks) {
        std::printf("== %s: more rows than the probe records\n", name);
        return;
    }
    DenseOperands<Kernel, C> ops(m, groups, masked_m);
    check(cudaFuncSetAttribute(probe_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, Kernel::kSmemBytes),
          "cudaFuncSetAttribute");
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    void* marks = nullptr;  // a __device__ array is no host-side pointer: cudaMemset needs its device address
    check(cudaGetSymbolAddress(&marks, tile_gap::marks), "cudaGetSymbolAddress");
    std::vector<long long> host(static_cast<size_t>(row_blocks) * tile_gap::kNBlockStride * kFields);
    std::vector<double> prologue, mainloop, epilogue, to_next, kernel_us, epi_enter, epi_write, epi_barrier, epi_issue;
    std::vector<double> part_epilogue, part_to_next;  // tiles whose rows stop early (masked)
    constexpr int kReps = 10;
    for (int rep = 0; rep < kReps + 2; ++rep) {
        check(cudaMemset(marks, 0, sizeof(tile_gap::marks)), "cudaMemset");
        const double us = flushed_launch_us<C>(ops.p, flush, rep, start, stop);
        if (rep < 2) continue;  // warm-up
        kernel_us.push_back(us);
        check(cudaMemcpyFromSymbol(host.data(), tile_gap::marks, host.size() * sizeof(host[0])),
              "cudaMemcpyFromSymbol");
        // Each CTA's tiles in the order it ran them.
        std::vector<std::vector<const long long*>> by_cta(C::kNumSMs);
        for (int mb = 0; mb < row_blocks; ++mb)
            for (int nb = 0; nb < n_blocks; ++nb) {
                const long long* row = &host[(static_cast<size_t>(mb) * tile_gap::kNBlockStride + nb) * kFields];
                if (row[tile_gap::kStored] != 0) by_cta[row[tile_gap::kCta]].push_back(row);
            }
        for (auto& tiles : by_cta) {
            std::sort(tiles.begin(), tiles.end(), [](const long long* x, const long long* y) {
                return x[tile_gap::kTileStart] < y[tile_gap::kTileStart];
            });
            for (size_t i = 0; i < tiles.size(); ++i) {
                const long long* t = tiles[i];
                prologue.push_back(static_cast<double>(t[tile_gap::kLoopEnter] - t[tile_gap::kTileStart]));
                mainloop.push_back(static_cast<double>(t[tile_gap::kLoopDone] - t[tile_gap::kLoopEnter]));
                epilogue.push_back(static_cast<double>(t[tile_gap::kStored] - t[tile_gap::kLoopDone]));
                if (t[tile_gap::kEpiWritten] != 0) {
                    epi_enter.push_back(static_cast<double>(t[tile_gap::kEpiEntered] - t[tile_gap::kLoopDone]));
                    epi_write.push_back(static_cast<double>(t[tile_gap::kEpiWritten] - t[tile_gap::kEpiEntered]));
                    epi_barrier.push_back(static_cast<double>(t[tile_gap::kEpiBarrier] - t[tile_gap::kEpiWritten]));
                    epi_issue.push_back(static_cast<double>(t[tile_gap::kStored] - t[tile_gap::kEpiBarrier]));
                }
                if (i + 1 < tiles.size())
                    to_next.push_back(static_cast<double>(tiles[i + 1][tile_gap::kTileStart] - t[tile_gap::kStored]));
                if (t[tile_gap::kValidRows] < C::kBlockM) {
                    part_epilogue.push_back(static_cast<double>(t[tile_gap::kStored] - t[tile_gap::kLoopDone]));
                    if (i + 1 < tiles.size())
                        part_to_next.push_back(
                            static_cast<double>(tiles[i + 1][tile_gap::kTileStart] - t[tile_gap::kStored]));
                }
            }
        }
    }
    constexpr int kb = (C::kShapeK + 127) / 128;
    const double loop = median(mainloop);
    std::printf("== %s  %ux%dx%d, block %dx%d, %d stages%s: kernel %.1f us (events)\n", name, m, C::kShapeN,
                C::kShapeK, C::kBlockM, C::kBlockN, C::kNumStages, C::kDInRing ? ", D in ring" : "",
                median(kernel_us));
    std::printf("   cycles per tile (medians): prologue %.0f | mainloop %.0f (%d k-blocks, %.0f each) | epilogue %.0f | "
                "to next %.0f\n",
                median(prologue), loop, kb, loop / kb, median(epilogue), median(to_next));
    std::printf("   epilogue: to entered %.0f | to written %.0f | to barrier %.0f | to stored %.0f\n",
                median(epi_enter), median(epi_write), median(epi_barrier), median(epi_issue));
    if (!part_epilogue.empty())
        std::printf("   tiles whose rows stop early (%zu of %zu): epilogue %.0f | to next %.0f\n", part_epilogue.size(),
                    epilogue.size(), median(part_epilogue), median(part_to_next));
    std::printf("   fixed per tile (prologue + epilogue + to next) = %.1f k-blocks' worth\n",
                (median(prologue) + median(epilogue) + median(to_next)) / (loop / kb));
    cudaEventDestroy(start), cudaEventDestroy(stop);
}

}  // namespace

int main() {
    void* flush = nullptr;
    check(cudaMalloc(&flush, 2ull << 30), "cudaMalloc");
    // The heuristic's M = 4096 plans (tessera compile --suite fp8_gemm), short K to long K.
    run_plan<Plan<128, 192, 4, 32768, 512, 16>>("4096x32768x512 pick", 4096, flush);
    run_plan<Plan<128, 192, 4, 24576, 1536, 16>>("4096x24576x1536 pick", 4096, flush);
    run_plan<Plan<128, 192, 4, 2112, 7168, 16>>("4096x2112x7168 pick", 4096, flush);
    run_plan<Plan<128, 144, 6, 576, 7168, 16, 1>>("4096x576x7168 pick (one tile per CTA)", 4096, flush);
    // The same 128x192 plan on the same work, dense and m-grouped contiguous (4 experts of 8192 rows): what the
    // contiguous kind adds per tile (the expert id read, B-scale rows by expert). K = 2048 (16 k-blocks) is where the
    // contiguous suite is furthest behind DeepGEMM; K = 7168 for the per-k-block rate.
    run_plan<Plan<128, 192, 4, 4096, 2048, 16>>("32768x4096x2048 dense", 32768, flush);
    run_plan<Plan<128, 192, 4, 4096, 2048, 16, 0, 1>>("g4 32768x4096x2048 contiguous", 32768, flush, 4);
    run_plan<Plan<128, 192, 4, 4096, 7168, 16>>("32768x4096x7168 dense", 32768, flush);
    run_plan<Plan<128, 192, 4, 4096, 7168, 16, 0, 1>>("g4 32768x4096x7168 contiguous", 32768, flush, 4);
    // Masked, the suite's g32 e192 N = 4096, K = 2048 row with 192 rows in every group (its 128x192 pick): a group
    // walk in next() for about every tile (a group has 2 x 22 tiles, a CTA's stride is 132).
    run_plan<Plan<128, 192, 4, 4096, 2048, 8, 0, 3>>("g32 masked 192 of 4096 rows, 4096x2048", 32 * 4096, flush, 32,
                                                     192);
    return 0;
}
