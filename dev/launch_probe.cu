// Host cost of one kernel launch on this machine, by what the launch carries: the floor under tessera's host rows
// (`tessera bench` layout suite, bench/python_overhead.py). Each row times `kCalls` launches of an empty kernel while
// a spin kernel keeps the GPU busy, so the launches queue and only the host path is timed (kCalls stays below the
// launch-queue depth). Median of 7 repeats, microseconds per launch.
//
//   nvcc -std=c++20 -O2 -gencode arch=compute_90a,code=sm_90a dev/launch_probe.cu -lcuda -o /tmp/launch_probe
//   /tmp/launch_probe
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_check.hpp"

namespace {

template <int kBytes>
struct Blob {
    alignas(64) unsigned char bytes[kBytes];
};

// 704 bytes: the size of the FP8 GEMM's parameter struct (five 128-byte tensor maps and 64 bytes of scalars).
using GemmSized = Blob<704>;

template <int kBytes>
__global__ void empty_kernel(const __grid_constant__ Blob<kBytes> blob) {
    if (blob.bytes[0] == 1 && threadIdx.x == 1000) __trap();  // never: keeps the parameter live
}

__global__ void spin_kernel(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

constexpr int kCalls = 300;

template <class Launch>
double us_per_launch(CUstream stream, Launch launch) {
    std::vector<double> runs;
    for (int rep = 0; rep < 7; ++rep) {
        spin_kernel<<<1, 1, 0, stream>>>(100'000'000);  // ~50 ms at 1.98 GHz: longer than kCalls launches take
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kCalls; ++i) launch();
        const auto t1 = std::chrono::steady_clock::now();
        runs.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kCalls);
        cudaStreamSynchronize(stream);
    }
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
}

template <int kBytes>
CUfunction function_of() {
    cudaFunction_t f = nullptr;
    cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(&empty_kernel<kBytes>));
    return reinterpret_cast<CUfunction>(f);
}

template <int kBytes>
double launch_ex(CUstream stream, unsigned cluster, bool pdl, unsigned smem, unsigned grid, bool ctx_query) {
    static Blob<kBytes> blob{};
    CUfunction f = function_of<kBytes>();
    if (smem > 48 * 1024)
        check(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(smem)),
              "max smem");
    return us_per_launch(stream, [&] {
        if (ctx_query) {
            CUcontext ctx = nullptr;
            check(cuCtxGetCurrent(&ctx), "ctx");
        }
        CUlaunchAttribute attrs[2];
        unsigned n = 0;
        if (cluster > 1) {
            attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attrs[n].value.clusterDim.x = cluster;
            attrs[n].value.clusterDim.y = attrs[n].value.clusterDim.z = 1;
            ++n;
        }
        if (pdl) {
            attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attrs[n].value.programmaticStreamSerializationAllowed = 1;
            ++n;
        }
        CUlaunchConfig config{};
        config.gridDimX = grid;
        config.gridDimY = config.gridDimZ = 1;
        config.blockDimX = 384;
        config.blockDimY = config.blockDimZ = 1;
        config.sharedMemBytes = smem;
        config.hStream = stream;
        config.attrs = n ? attrs : nullptr;
        config.numAttrs = n;
        void* args[] = {&blob};
        check(cuLaunchKernelEx(&config, f, args, nullptr), "cuLaunchKernelEx");
    });
}

}  // namespace

int main() {
    cudaFree(nullptr);  // the primary context
    cudaStream_t rt_stream = nullptr;
    cudaStreamCreateWithFlags(&rt_stream, cudaStreamNonBlocking);
    const auto stream = reinterpret_cast<CUstream>(rt_stream);
    struct Row {
        const char* name;
        double us;
    };
    std::vector<Row> rows;
    {
        static Blob<8> blob{};
        CUfunction f = function_of<8>();
        rows.push_back({"cuLaunchKernel, 8 B params", us_per_launch(stream, [&] {
                            void* args[] = {&blob};
                            check(cuLaunchKernel(f, 132, 1, 1, 384, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel");
                        })});
        rows.push_back({"cudaLaunchKernel <<<>>>, 8 B params",
                        us_per_launch(stream, [&] { empty_kernel<8><<<132, 384, 0, rt_stream>>>(blob); })});
    }
    rows.push_back({"cuLaunchKernelEx, 8 B", launch_ex<8>(stream, 1, false, 0, 132, false)});
    rows.push_back({"cuLaunchKernelEx, 704 B (GEMM-sized)", launch_ex<704>(stream, 1, false, 0, 132, false)});
    rows.push_back({"cuLaunchKernelEx, 4096 B", launch_ex<4096>(stream, 1, false, 0, 132, false)});
    rows.push_back({"cuLaunchKernelEx, 704 B + 216 KB smem", launch_ex<704>(stream, 1, false, 216 * 1024, 132, false)});
    rows.push_back({"cuLaunchKernelEx, 704 B + cluster 2", launch_ex<704>(stream, 2, false, 0, 132, false)});
    rows.push_back({"cuLaunchKernelEx, 704 B + PDL", launch_ex<704>(stream, 1, true, 0, 132, false)});
    rows.push_back({"cuLaunchKernelEx, 704 B + cuCtxGetCurrent", launch_ex<704>(stream, 1, false, 0, 132, true)});
    rows.push_back({"cuLaunchKernelEx, 704 B, grid 1", launch_ex<704>(stream, 1, false, 0, 1, false)});
    rows.push_back({"cuLaunchKernel, 704 B, legacy NULL stream", [&] {
                        // the NULL stream: what a caller passing stream 0 gets
                        static Blob<704> blob{};
                        CUfunction f = function_of<704>();
                        return us_per_launch(nullptr, [&] {
                            void* args[] = {&blob};
                            check(cuLaunchKernel(f, 132, 1, 1, 384, 1, 1, 0, nullptr, args, nullptr), "legacy");
                        });
                    }()});
    {
        // The host-only encode of a GEMM's five tensor maps (fp8 A and B boxes 128x128, fp32 scales, bf16 D), which
        // tessera does on every call because the pointers change.
        void* base = nullptr;
        cudaMalloc(&base, 64 << 20);
        rows.push_back({"5x cuTensorMapEncodeTiled (no launch)", [&] {
                            std::vector<double> runs;
                            for (int rep = 0; rep < 7; ++rep) {
                                const auto t0 = std::chrono::steady_clock::now();
                                for (int i = 0; i < kCalls; ++i) {
                                    for (int m = 0; m < 5; ++m) {
                                        CUtensorMap map;
                                        const cuuint64_t dims[2] = {7168, 2112};
                                        const cuuint64_t strides[1] = {7168};
                                        const cuuint32_t box[2] = {128, 128}, elem[2] = {1, 1};
                                        check(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, base, dims,
                                                                     strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                                                     CU_TENSOR_MAP_SWIZZLE_128B,
                                                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                                                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                                              "encode");
                                    }
                                }
                                const auto t1 = std::chrono::steady_clock::now();
                                runs.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kCalls);
                            }
                            std::sort(runs.begin(), runs.end());
                            return runs[runs.size() / 2];
                        }()});
    }
    std::printf("%-48s %8s\n", "launch", "us/call");
    for (const Row& r : rows) std::printf("%-48s %8.2f\n", r.name, r.us);
    for (const Row& r : rows) std::printf("{\"bench\": \"launch_probe\", \"launch\": \"%s\", \"us_per_call\": %.3f}\n", r.name, r.us);
    return 0;
}
