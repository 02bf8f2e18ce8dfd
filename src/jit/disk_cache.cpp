// Disk cache: secure directory handling, framing and atomic publication.
#include "jit/disk_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "jit/hash.hpp"
#include "tessera/error.hpp"

namespace tessera::jit {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'T', 'S', 'R', 'C', 'U', 'B', '0', '1'};
constexpr std::size_t kHeaderBytes = 8 + 8 + 8;  // magic, payload size, payload checksum

std::uint64_t checksum(std::string_view bytes) { return Digest().update(bytes).value64(); }

void put_u64(std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

std::uint64_t get_u64(const std::string& in, std::size_t at) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
    return v;
}

// Writes bytes to a unique temporary file beside `target`, flushes it to disk, then renames it over `target`.
void publish(const fs::path& target, const std::string& bytes) {
    static thread_local std::mt19937_64 rng(std::random_device{}() ^ static_cast<std::uint64_t>(getpid()));
    const fs::path tmp = target.parent_path() / detail::str_cat(".tmp-", getpid(), "-", std::hex, rng());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw Error(detail::str_cat("kernel cache: cannot create ", tmp.string(), ": ", std::strerror(errno)));
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n <= 0) {
            ::close(fd);
            ::unlink(tmp.c_str());
            throw Error(detail::str_cat("kernel cache: write to ", tmp.string(), " failed: ", std::strerror(errno)));
        }
        written += static_cast<std::size_t>(n);
    }
    ::fsync(fd);
    ::close(fd);
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        ::unlink(tmp.c_str());
        throw Error(detail::str_cat("kernel cache: cannot publish ", target.string(), ": ", std::strerror(errno)));
    }
}

}  // namespace

std::string frame_cubin(const std::string& cubin) {
    std::string out(kMagic, sizeof(kMagic));
    put_u64(out, cubin.size());
    put_u64(out, checksum(cubin));
    out += cubin;
    return out;
}

std::optional<std::string> unframe_cubin(const std::string& bytes) {
    if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return std::nullopt;
    const std::uint64_t size = get_u64(bytes, 8);
    if (size != bytes.size() - kHeaderBytes) return std::nullopt;
    std::string payload = bytes.substr(kHeaderBytes);
    if (checksum(payload) != get_u64(bytes, 16)) return std::nullopt;
    return payload;
}

void ensure_private_directory(const std::string& dir) {
    std::error_code ec;
    fs::path path(dir);
    if (!fs::exists(path, ec)) {
        // Create missing parents normally (e.g. ~/.cache), the cache root itself private.
        if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
        if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
            throw InvalidArgument(detail::str_cat("cache directory '", dir, "': cannot create it: ", std::strerror(errno)));
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw InvalidArgument(detail::str_cat("cache directory '", dir, "': cannot stat: ", std::strerror(errno)));
    if (!S_ISDIR(st.st_mode))
        throw InvalidArgument(detail::str_cat("cache directory '", dir, "': expected a directory"));
    if (st.st_uid != ::geteuid())
        throw InvalidArgument(detail::str_cat("cache directory '", dir, "': expected to be owned by uid ", ::geteuid(),
                                              ", owned by uid ", st.st_uid,
                                              " (a cubin planted there would run as your code)"));
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        throw InvalidArgument(detail::str_cat("cache directory '", dir, "': expected not writable by group or others, ",
                                              "mode is ", std::oct, (st.st_mode & 0777),
                                              " (a cubin planted there would run as your code); chmod 700 it or set "
                                              "TESSERA_CACHE_DIR"));
}

DiskCache::DiskCache(std::string root) : root_(std::move(root)) { ensure_private_directory(root_); }

std::optional<std::string> DiskCache::load(const std::string& key) const {
    std::ifstream in(fs::path(root_) / key / "kernel.cubin", std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return unframe_cubin(s.str());
}

void DiskCache::store(const std::string& key, const std::string& cubin, const std::string& source,
                      const std::string& ptx) const {
    const fs::path dir = fs::path(root_) / key;
    std::error_code ec;
    fs::create_directories(dir, ec);  // inside the private root; racing creators are fine
    if (!fs::is_directory(dir, ec))
        throw Error(detail::str_cat("kernel cache: cannot create ", dir.string(), ": ", ec.message()));
    publish(dir / "kernel.cu", source);
    if (!ptx.empty()) publish(dir / "kernel.ptx", ptx);
    publish(dir / "kernel.cubin", frame_cubin(cubin));  // last: its presence means the entry is complete
}

std::uint64_t DiskCache::size_bytes() const {
    std::uint64_t total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root_, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        if (it->is_regular_file(ec)) total += it->file_size(ec);
    }
    return total;
}

}  // namespace tessera::jit
