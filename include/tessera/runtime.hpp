// Process-wide runtime settings of the DeepGEMM API (SM count, PDL, alignment of contiguous grouped layouts) and
// what tessera sees of the machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

using Stream = void*;  // a CUstream, as in tessera/layout.hpp; nullptr is the legacy default stream

// Upper bound on the SMs persistent kernels use; 0 resets to all SMs of the current device. Any value in
// [0, SM count] is honored, odd ones too.
void set_num_sms(int num_sms);
int get_num_sms();  // needs a device

void set_pdl(bool enable);
bool get_pdl();

// Stored for API compatibility; as in DeepGEMM, no SM90 kernel uses it.
void set_tc_util(int percent);
int get_tc_util();

// Constrains the planner's block sizes, as DeepGEMM does on SM90: block N becomes a multiple of lcm(16, n_multiple)
// when n_multiple > 1 (1 lifts the constraint); the M multiple is checked and, as on DeepGEMM's SM90 path, not
// used. A problem no legal tile satisfies then fails to plan with InvalidArgument.
void set_block_size_multiple_of(int m_multiple, int n_multiple);

void set_mk_alignment_for_contiguous_layout(int alignment);
int get_mk_alignment_for_contiguous_layout();

// Where the JIT reads kernel headers from (the Python package points it at its bundled copy).
void set_kernel_dir(const std::string& dir);

struct SystemInfo {
    bool driver_loaded = false;
    std::string driver_error;  // why not, when not
    int driver_version = 0;
    std::vector<std::string> devices;  // "NVIDIA H200 (sm_90, 132 SMs, 227 KiB smem/block, 60 MiB L2)"
    std::string nvrtc;                 // signature or why unavailable
    std::string nvcc;
    std::string compiler;              // the one in use
    std::string cache_dir;
    unsigned long long cache_bytes = 0;
    std::string kernel_dir;
};

SystemInfo system_info();

// Device memory for C++ callers with no framework to allocate it (the `tessera bench` command): `bytes` on GPU
// `device`, freed by the destructor. Throws CudaError without a driver or device, or when the allocation fails.
class DeviceBuffer {
public:
    DeviceBuffer(int device, std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    void* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }
    int device() const { return device_; }
    // Queues a fill of every 32-bit word with `word` on `stream` (bytes() must be a multiple of 4).
    void fill_async(std::uint32_t word, Stream stream) const;

private:
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
    int device_ = 0;
};

// Waits until the work queued on `stream` (of the current device) has finished.
void synchronize(Stream stream);

}  // namespace tessera
