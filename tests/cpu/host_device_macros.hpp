// Lets a host test include a kernel header whose functions are plain C++ under __host__ __device__ (scheduler.cuh):
// the CUDA qualifiers become nothing. Include it before such a header.
#pragma once

#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
