// The on-disk kernel cache. Layout: <root>/<arch>/<family>/<digest>/{kernel.cubin, kernel.cu[, kernel.ptx]}.
// kernel.cubin is framed (magic, size, checksum) so that a truncated or corrupt file is detected and rebuilt, never
// loaded. Files are published by atomic rename, so any number of processes may compile the same kernel at once.
// The root must be private to the user: a directory others can write to could hold a planted cubin.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tessera::jit {

class DiskCache {
public:
    // Creates `root` (mode 0700) when missing; throws InvalidArgument when it exists but is not a directory owned
    // by this user, or is writable by group or others.
    explicit DiskCache(std::string root);

    const std::string& root() const { return root_; }

    // The cubin stored under `key` ("sm_90a/fp8_gemm/<digest>"), or nullopt when absent or corrupt.
    std::optional<std::string> load(const std::string& key) const;

    // Publishes the cubin (and the source, and PTX when given) under `key`.
    void store(const std::string& key, const std::string& cubin, const std::string& source,
               const std::string& ptx) const;

    // Total bytes under the root (for `tessera info`).
    std::uint64_t size_bytes() const;

private:
    std::string root_;
};

// Framing of a cached cubin, exposed for tests.
std::string frame_cubin(const std::string& cubin);
std::optional<std::string> unframe_cubin(const std::string& file_bytes);

// Creates dir (and missing parents) with mode 0700, or checks an existing one; throws InvalidArgument if insecure.
void ensure_private_directory(const std::string& dir);

}  // namespace tessera::jit
