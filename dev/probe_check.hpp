// Error checks shared by the standalone probes in dev/ (launch_probe.cu, stream_probe.cu): a failed driver or
// runtime call prints what failed and exits, since a probe's numbers mean nothing after one.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

inline void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        const char* msg = nullptr;
        cuGetErrorString(r, &msg);
        std::fprintf(stderr, "%s: %s\n", what, msg ? msg : "?");
        std::exit(1);
    }
}

inline void check(cudaError_t r, const char* what) {
    if (r != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(r));
        std::exit(1);
    }
}
