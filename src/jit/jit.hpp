// The JIT facade: spec -> cached, loaded kernel. Lookup order: in-memory map (a hit allocates nothing and formats
// no strings), then the disk cache, then a compile (published to disk). build() stops before loading, so the cache
// can be filled on a machine without a GPU.
#pragma once

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "jit/include_hash.hpp"
#include "jit/spec.hpp"
#include "tessera/options.hpp"

namespace tessera::jit {

struct LaunchConfig {
    unsigned grid_x = 1, grid_y = 1, grid_z = 1;
    unsigned block_x = 1;
    unsigned smem_bytes = 0;  // dynamic shared memory
    unsigned cluster_x = 1;
    CUstream stream = nullptr;
    int device = 0;
};

// A loaded kernel: one CUlibrary holding one entry. Launchable on any device.
class Kernel {
public:
    Kernel(std::string cubin, std::string_view entry, std::string description);
    ~Kernel();
    Kernel(const Kernel&) = delete;
    Kernel& operator=(const Kernel&) = delete;

    // Launches with `params` as the kernel's single by-value argument. The host mirror of Params must have the
    // size of the compiled one: a mismatch (a struct edited on one side only) throws instead of launching garbage.
    template <class Params>
    void launch(const LaunchConfig& config, const Params& params) const {
        check_param_bytes(sizeof(Params));
        launch_raw(config, const_cast<Params*>(&params));
    }
    // The same for a parameter block assembled as bytes (its layout depends on compile-time constants).
    void launch_bytes(const LaunchConfig& config, const void* params, std::size_t bytes) const {
        check_param_bytes(bytes);
        launch_raw(config, const_cast<void*>(params));
    }
    const std::string& description() const { return description_; }
    // Clusters of config.cluster_x CTAs (with config's block and shared memory) the device keeps resident at once.
    int max_active_clusters(const LaunchConfig& config) const;

private:
    void allow_smem(const LaunchConfig& config) const;  // and the opt-in for clusters of more than 8 CTAs
    CUlaunchConfig driver_config(const LaunchConfig& config, CUlaunchAttribute* attrs) const;
    void check_param_bytes(std::size_t host_bytes) const;
    void launch_raw(const LaunchConfig& config, void* params) const;
    CUfunction function_for(int device) const;  // the current context must be the device's

    CUlibrary library_ = nullptr;
    std::size_t param_bytes_ = 0;
    CUkernel kernel_ = nullptr;
    std::string description_;
    // Highest dynamic smem already allowed, per device, so the attribute is set once rather than per launch.
    mutable std::unique_ptr<std::atomic<unsigned>[]> smem_allowed_;
    mutable std::unique_ptr<std::atomic<CUfunction>[]> functions_;  // per device, resolved at first launch
    mutable std::unique_ptr<std::atomic<bool>[]> wide_clusters_allowed_;  // per device: clusters of 9-16 CTAs
};

struct BuildResult {
    std::string cubin;
    std::string key;          // "<arch>/<family>/<digest>"
    bool compiled = false;    // false when it came from the disk cache
    double compile_seconds = 0.0;
    std::string log;
};

class Jit {
public:
    explicit Jit(Options options);

    // The loaded kernel for `spec`; compiles or reads the disk cache on a miss.
    const Kernel& get(const KernelSpec& spec);

    // The cubin for `spec` with `compiler` (default: the configured one), via the disk cache; needs no GPU.
    BuildResult build(const KernelSpec& spec, const Compiler* compiler = nullptr);

    // The cache key of `spec` with `compiler` (default: the configured one).
    std::string key(const KernelSpec& spec, const Compiler* compiler = nullptr);

    const Compiler& compiler();
    const Options& options() const { return options_; }
    const DiskCache* disk_cache();  // nullptr when the cache is disabled

private:
    Options options_;
    std::mutex mutex_;
    std::unique_ptr<Compiler> compiler_;
    std::unique_ptr<IncludeHasher> include_hasher_;
    std::unique_ptr<DiskCache> disk_cache_;
    bool disk_cache_checked_ = false;
    std::unordered_map<KernelSpec, std::unique_ptr<Kernel>, KernelSpecHash> loaded_;
};

// The process-wide JIT, built from tessera::options() on first use.
Jit& jit();

}  // namespace tessera::jit
