// Process-wide runtime settings of the DeepGEMM API (SM count, PDL, alignment of contiguous grouped layouts) and
// what tessera sees of the machine.
#pragma once

#include <string>
#include <vector>

namespace tessera {

// Upper bound on the SMs persistent kernels use; 0 resets to all SMs of the current device. Any value in
// [0, SM count] is honored, odd ones too.
void set_num_sms(int num_sms);
int get_num_sms();  // needs a device

void set_pdl(bool enable);
bool get_pdl();

// Stored for API compatibility; no SM90 kernel uses it.
void set_tc_util(int percent);
int get_tc_util();

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

}  // namespace tessera
