// JIT: in-memory map, disk cache, compile, load.
#include "jit/jit.hpp"

#include <cstdio>
#include <string_view>

#include "jit/ffma_hints.hpp"
#include "jit/hash.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "tessera/error.hpp"

namespace tessera::jit {

Kernel::Kernel(std::string cubin, std::string_view entry, std::string description)
    : description_(std::move(description)),
      smem_allowed_(new std::atomic<unsigned>[64]),
      functions_(new std::atomic<CUfunction>[64]),
      wide_clusters_allowed_(new std::atomic<bool>[64]) {
    for (int i = 0; i < 64; ++i) {
        smem_allowed_[i] = 0;
        functions_[i] = nullptr;
        wide_clusters_allowed_[i] = false;
    }
    const runtime::Driver& d = runtime::driver();
    TESSERA_CU_CHECK(d.cuLibraryLoadData(&library_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    const std::string name(entry);
    TESSERA_CU_CHECK(d.cuLibraryGetKernel(&kernel_, library_, name.c_str()));
    std::size_t offset = 0;
    TESSERA_CU_CHECK(d.cuKernelGetParamInfo(kernel_, 0, &offset, &param_bytes_));
    // The no-spill check, again from the loaded code: it also covers compiles whose ptxas report was missing.
    CUdevice dev = 0;
    TESSERA_CU_CHECK(d.cuCtxGetDevice(&dev));
    int local_bytes = 0;
    TESSERA_CU_CHECK(d.cuKernelGetAttribute(&local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, kernel_, dev));
    if (local_bytes > 0 && tessera::options().check_spills) {
        // The destructor does not run for a throwing constructor: unload here (the planner may try another tile).
        d.cuLibraryUnload(library_);
        throw SpillError(detail::str_cat("kernel ", description_, " uses ", local_bytes,
                                         " bytes of local memory per thread (spills); set TESSERA_JIT_CHECK_SPILLS=0 "
                                         "to run it anyway"));
    }
}

void Kernel::check_param_bytes(std::size_t host_bytes) const {
    if (host_bytes != param_bytes_) [[unlikely]]
        throw Error(detail::str_cat("tessera internal error: ", description_, " takes ", param_bytes_,
                                    " parameter bytes, the host passes ", host_bytes));
}

Kernel::~Kernel() {
    if (library_ != nullptr) runtime::driver().cuLibraryUnload(library_);
}

void Kernel::allow_smem(const LaunchConfig& c) const {
    std::atomic<unsigned>& allowed = smem_allowed_[c.device];
    if (c.smem_bytes > allowed.load(std::memory_order_relaxed)) {
        const runtime::Driver& d = runtime::driver();
        CUdevice dev = 0;
        TESSERA_CU_CHECK(d.cuCtxGetDevice(&dev));
        TESSERA_CU_CHECK(d.cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                static_cast<int>(c.smem_bytes), kernel_, dev));
        allowed.store(c.smem_bytes, std::memory_order_relaxed);
    }
    // Clusters above the portable 8 CTAs (SM90 has up to 16) need the kernel's opt-in, once per device.
    std::atomic<bool>& wide = wide_clusters_allowed_[c.device];
    if (c.cluster_x > 8 && !wide.load(std::memory_order_relaxed)) {
        const runtime::Driver& d = runtime::driver();
        CUdevice dev = 0;
        TESSERA_CU_CHECK(d.cuCtxGetDevice(&dev));
        TESSERA_CU_CHECK(d.cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1, kernel_, dev));
        wide.store(true, std::memory_order_relaxed);
    }
}

int Kernel::max_active_clusters(const LaunchConfig& c) const {
    runtime::make_current(c.device);
    allow_smem(c);
    CUlaunchAttribute attrs[2];
    CUlaunchConfig config = driver_config(c, attrs);
    // The occupancy query takes the current context's function, not the context-independent kernel handle.
    int clusters = 0;
    TESSERA_CU_CHECK(runtime::driver().cuOccupancyMaxActiveClusters(&clusters, function_for(c.device), &config));
    return clusters;
}

// The device's CUfunction, resolved once: launching through the context-independent CUkernel handle makes the
// driver resolve it on every launch.
CUfunction Kernel::function_for(int device) const {
    std::atomic<CUfunction>& slot = functions_[device];
    CUfunction function = slot.load(std::memory_order_acquire);
    if (function == nullptr) [[unlikely]] {
        TESSERA_CU_CHECK(runtime::driver().cuKernelGetFunction(&function, kernel_));
        slot.store(function, std::memory_order_release);
    }
    return function;
}

void Kernel::launch_raw(const LaunchConfig& c, void* params) const {
    runtime::make_current(c.device);
    allow_smem(c);
    CUlaunchAttribute attrs[2];
    const CUlaunchConfig config = driver_config(c, attrs);
    void* args[] = {params};
    TESSERA_CU_CHECK(runtime::driver().cuLaunchKernelEx(&config, function_for(c.device), args, nullptr));
}

CUlaunchConfig Kernel::driver_config(const LaunchConfig& c, CUlaunchAttribute* attrs) const {
    unsigned num_attrs = 0;
    if (c.cluster_x > 1) {
        attrs[num_attrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[num_attrs].value.clusterDim.x = c.cluster_x;
        attrs[num_attrs].value.clusterDim.y = 1;
        attrs[num_attrs].value.clusterDim.z = 1;
        ++num_attrs;
    }
    if (tessera::options().pdl) {
        attrs[num_attrs].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attrs[num_attrs].value.programmaticStreamSerializationAllowed = 1;
        ++num_attrs;
    }
    CUlaunchConfig config{};
    config.gridDimX = c.grid_x;
    config.gridDimY = c.grid_y;
    config.gridDimZ = c.grid_z;
    config.blockDimX = c.block_x;
    config.blockDimY = 1;
    config.blockDimZ = 1;
    config.sharedMemBytes = c.smem_bytes;
    config.hStream = c.stream;
    config.attrs = num_attrs ? attrs : nullptr;
    config.numAttrs = num_attrs;
    return config;
}

Jit::Jit(Options options) : options_(std::move(options)) {}

const Compiler& Jit::compiler() {
    std::lock_guard lock(mutex_);
    if (!compiler_) compiler_ = make_compiler(options_, options_.compiler);
    return *compiler_;
}

const DiskCache* Jit::disk_cache() {
    std::lock_guard lock(mutex_);
    if (!disk_cache_checked_) {
        if (!options_.cache_dir.empty()) disk_cache_ = std::make_unique<DiskCache>(options_.cache_dir);
        disk_cache_checked_ = true;
    }
    return disk_cache_.get();
}

std::string Jit::key(const KernelSpec& spec, const Compiler* with) {
    const Compiler& c = with ? *with : compiler();
    const std::string source = spec.render();
    std::string includes;
    {
        std::lock_guard lock(mutex_);
        if (!include_hasher_) include_hasher_ = std::make_unique<IncludeHasher>(options_.kernel_dir);
    }
    includes = include_hasher_->digest_of_includes(source);
    Digest digest;
    digest.update(source).update(includes).update(c.signature()).update(c.flags()).update("sm_90a");
    if (const int hints = spec.post.ffma_yield_interval) digest.update(detail::str_cat("ffma-hints-v1/", hints));
    return detail::str_cat("sm_", spec.arch, "a/", family_info(spec.family).name, "/", digest.hex());
}

BuildResult Jit::build(const KernelSpec& spec, const Compiler* with) {
    const Compiler& c = with ? *with : compiler();
    BuildResult result;
    result.key = key(spec, &c);
    const DiskCache* disk = disk_cache();
    if (disk != nullptr) {
        if (auto cubin = disk->load(result.key)) {
            result.cubin = std::move(*cubin);
            return result;
        }
    }
    const std::string source = spec.render();
    const std::string what = spec.describe();
    CompileResult compiled = c.compile(source, what);
    if (const int hints = spec.post.ffma_yield_interval) apply_ffma_reuse_hints(compiled.cubin, hints);
    if (options_.print_compile || options_.ptxas_verbose) {
        std::fprintf(stderr, "[tessera] compiled %s with %s in %.3f s%s%s\n", what.c_str(), c.signature().c_str(),
                     compiled.seconds, options_.ptxas_verbose ? "\n" : "",
                     options_.ptxas_verbose ? compiled.log.c_str() : "");
    }
    if (disk != nullptr) disk->store(result.key, compiled.cubin, source, compiled.ptx);
    result.cubin = std::move(compiled.cubin);
    result.compiled = true;
    result.compile_seconds = compiled.seconds;
    result.log = std::move(compiled.log);
    return result;
}

const Kernel& Jit::get(const KernelSpec& spec) {
    {
        std::lock_guard lock(mutex_);
        if (auto it = loaded_.find(spec); it != loaded_.end()) [[likely]] return *it->second;
    }
    BuildResult built = build(spec);
    auto kernel = std::make_unique<Kernel>(std::move(built.cubin), family_info(spec.family).entry, spec.describe());
    std::lock_guard lock(mutex_);
    auto [it, inserted] = loaded_.emplace(spec, std::move(kernel));
    return *it->second;  // a racing thread's copy wins; ours is released
}

Jit& jit() {
    static Jit instance(tessera::options());
    return instance;
}

}  // namespace tessera::jit
