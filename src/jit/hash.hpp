// Non-cryptographic hashing for cache keys: a 128-bit digest (two FNV-1a lanes with different seeds, each finished
// with a SplitMix64 mix) and a 64-bit mixer for in-memory keys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::jit {

constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

class Digest {
public:
    Digest& update(std::string_view bytes) noexcept {
        for (unsigned char c : bytes) {
            lo_ = (lo_ ^ c) * kPrime;
            hi_ = (hi_ ^ c) * kPrime;
        }
        // Length-delimit each piece so that ("ab","c") and ("a","bc") differ.
        lo_ = (lo_ ^ bytes.size()) * kPrime;
        hi_ = (hi_ ^ (bytes.size() + 0x5bd1e995)) * kPrime;
        return *this;
    }
    std::uint64_t value64() const noexcept { return mix64(lo_) ^ mix64(hi_ + 0x9e3779b97f4a7c15ULL); }
    std::string hex() const;  // 32 hex characters

private:
    static constexpr std::uint64_t kPrime = 0x100000001b3ULL;
    std::uint64_t lo_ = 0xcbf29ce484222325ULL;
    std::uint64_t hi_ = 0x84222325cbf29ce4ULL;
};

inline std::string Digest::hex() const {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out(32, '0');
    const std::uint64_t words[2] = {mix64(lo_), mix64(hi_ + 0x9e3779b97f4a7c15ULL)};
    for (int w = 0; w < 2; ++w)
        for (int i = 0; i < 16; ++i) out[w * 16 + i] = kDigits[(words[w] >> (60 - 4 * i)) & 0xf];
    return out;
}

}  // namespace tessera::jit
