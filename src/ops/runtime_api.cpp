// Runtime settings and system information.
#include <cuda.h>

#include "jit/jit.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"
#include "tessera/runtime.hpp"

namespace tessera {
namespace {

int current_device() {
    const runtime::Driver& d = runtime::driver();
    CUcontext ctx = nullptr;
    TESSERA_CU_CHECK(d.cuCtxGetCurrent(&ctx));
    if (ctx == nullptr) return 0;
    CUdevice dev = 0;
    TESSERA_CU_CHECK(d.cuCtxGetDevice(&dev));
    return static_cast<int>(dev);
}

int g_tc_util = 100;
int g_mk_alignment = 128;

}  // namespace

void set_num_sms(int num_sms) {
    const int max = runtime::device_info(current_device()).num_sms;
    TESSERA_CHECK(num_sms >= 0 && num_sms <= max, "set_num_sms: argument 'num_sms': expected 0 <= num_sms <= ", max,
                  ", got ", num_sms);
    options().num_sms = num_sms;
}

int get_num_sms() {
    const int all = runtime::device_info(current_device()).num_sms;
    return options().num_sms > 0 ? options().num_sms : all;
}

void set_pdl(bool enable) { options().pdl = enable; }
bool get_pdl() { return options().pdl; }

void set_tc_util(int percent) {
    TESSERA_CHECK(percent >= 0 && percent <= 100, "set_tc_util: argument 'new_tc_util': expected 0..100, got ", percent);
    g_tc_util = percent == 0 ? 100 : percent;
}
int get_tc_util() { return g_tc_util; }

void set_block_size_multiple_of(int m_multiple, int n_multiple) {
    TESSERA_CHECK(m_multiple > 0 && n_multiple > 0, "set_block_size_multiple_of: argument 'new_value': expected "
                  "positive multiples, got (", m_multiple, ", ", n_multiple, ")");
    options().block_n_multiple = n_multiple;
}

void set_mk_alignment_for_contiguous_layout(int alignment) {
    TESSERA_CHECK(alignment > 0, "set_mk_alignment_for_contiguous_layout: argument 'new_value': expected > 0, got ",
                  alignment);
    g_mk_alignment = alignment;
}
int get_mk_alignment_for_contiguous_layout() { return g_mk_alignment; }

void set_kernel_dir(const std::string& dir) { options().kernel_dir = dir; }

SystemInfo system_info() {
    SystemInfo info;
    const Options& o = options();
    info.cache_dir = o.cache_dir;
    info.kernel_dir = o.kernel_dir;
    info.compiler = o.compiler == CompilerKind::kNvrtc ? "nvrtc" : "nvcc";
    try {
        const runtime::Driver& d = runtime::driver();
        info.driver_loaded = true;
        d.cuDriverGetVersion(&info.driver_version);
        for (int i = 0; i < runtime::device_count(); ++i) {
            const runtime::DeviceInfo& dev = runtime::device_info(i);
            info.devices.push_back(detail::str_cat(dev.name, " (sm_", dev.cc_major, dev.cc_minor, ", ", dev.num_sms,
                                                   " SMs, ", dev.max_smem_per_block / 1024, " KiB smem/block, ",
                                                   dev.l2_bytes / (1024 * 1024), " MiB L2)"));
        }
    } catch (const Error& e) {
        info.driver_error = e.what();
    }
    for (CompilerKind kind : {CompilerKind::kNvrtc, CompilerKind::kNvcc}) {
        std::string& slot = kind == CompilerKind::kNvrtc ? info.nvrtc : info.nvcc;
        try {
            slot = jit::make_compiler(o, kind)->signature();
        } catch (const Error& e) {
            slot = std::string("unavailable: ") + e.what();
        }
    }
    try {
        if (const jit::DiskCache* cache = jit::jit().disk_cache()) info.cache_bytes = cache->size_bytes();
    } catch (const Error& e) {
        info.cache_dir += std::string(" (unusable: ") + e.what() + ")";
    }
    return info;
}

}  // namespace tessera
