// Hashes the content of every kernel header a generated source includes, recursively, so that editing any
// included header changes the cache key. Only `#include <tessera/...>` is allowed in kernel headers: any other
// include would put bytes outside the key into the kernel, so it is refused.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tessera::jit {

class IncludeHasher {
public:
    explicit IncludeHasher(std::string kernel_dir) : kernel_dir_(std::move(kernel_dir)) {}

    // 32-hex digest over the headers `source` includes (not over `source` itself). Header contents are memoized
    // for the life of this object: headers are assumed not to change while a process runs.
    std::string digest_of_includes(std::string_view source);

private:
    std::string header_digest(const std::string& relative_path, std::vector<std::string>& stack);

    std::string kernel_dir_;
    std::mutex mutex_;
    std::unordered_map<std::string, std::string> memo_;  // relative path -> digest of it and its includes
};

// The `tessera/...` paths a source includes, in order. Throws CompileError on any other #include form.
std::vector<std::string> parse_includes(std::string_view source, std::string_view where);

}  // namespace tessera::jit
