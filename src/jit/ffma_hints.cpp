#include "jit/ffma_hints.hpp"

#include <cstdint>
#include <cstring>
#include <string_view>

namespace tessera::jit {
namespace {

// SASS of sm_90: 128-bit instructions, stored as two little-endian 64-bit words (lo, hi).
struct Instr {
    std::uint64_t lo, hi;
};
constexpr std::uint64_t kOpcodeMask = 0xFFF;
constexpr std::uint64_t kFfmaRrr = 0x223;          // FFMA Rd, Ra, Rb, Rc
constexpr std::uint64_t kNoPredicate = 0x7;        // bits 12-15 of lo: @PT, not negated
constexpr std::uint64_t kNoYield = 1ull << 45;     // hi bit 45 (control bit 109): 1 = do not yield after this one
constexpr std::uint64_t kReuseMask = 0xFull << 58; // hi bits 58-61 (control bits 122-125): reuse per operand slot
constexpr std::uint64_t kReuseB = 0x2ull << 58;    // slot b

bool is_plain_ffma(const Instr& i) {
    return (i.lo & kOpcodeMask) == kFfmaRrr && ((i.lo >> 12) & 0xF) == kNoPredicate;
}
unsigned reg_d(const Instr& i) { return static_cast<unsigned>((i.lo >> 16) & 0xFF); }
unsigned reg_b(const Instr& i) { return static_cast<unsigned>((i.lo >> 32) & 0xFF); }

template <class T>
T read(const std::string& s, std::size_t at) {
    T v;
    std::memcpy(&v, s.data() + at, sizeof(T));
    return v;
}

// Patches one section's instructions [begin, end) of the image.
void patch_text(std::string& image, std::size_t begin, std::size_t end, int yield_every, FfmaHintStats& st) {
    const std::size_t n = (end - begin) / 16;
    auto load = [&](std::size_t k) { return Instr{read<std::uint64_t>(image, begin + 16 * k),
                                                  read<std::uint64_t>(image, begin + 16 * k + 8)}; };
    std::size_t i = 0;
    while (i < n) {
        std::size_t j = i;
        while (j < n && is_plain_ffma(load(j))) ++j;
        if (j - i >= static_cast<std::size_t>(kMinFfmaRun)) {
            ++st.runs;
            for (std::size_t t = i; t < j; ++t) {
                const Instr cur = load(t);
                // The next FFMA reads the same scale register in slot b, and this one does not overwrite it.
                const bool chain = t + 1 < j && reg_b(load(t + 1)) == reg_b(cur) && reg_d(cur) != reg_b(cur);
                if (!chain) continue;  // a same-scale run's last FFMA keeps ptxas's hints
                const bool yields = (t - i) % static_cast<std::size_t>(yield_every) ==
                                    static_cast<std::size_t>(yield_every - 1);
                const std::uint64_t hi = yields ? (cur.hi & ~kReuseMask & ~kNoYield)
                                                : ((cur.hi & ~kReuseMask) | kReuseB | kNoYield);
                if (!yields) ++st.reuse;
                if (hi != cur.hi) {
                    std::memcpy(image.data() + begin + 16 * t + 8, &hi, sizeof(hi));
                    ++st.changed;
                }
            }
        }
        i = j > i ? j : i + 1;
    }
}

}  // namespace

bool apply_ffma_reuse_hints(std::string& cubin, int yield_every, FfmaHintStats* stats) {
    FfmaHintStats st;
    constexpr std::size_t kEhdr = 64, kShdr = 64;
    constexpr std::uint16_t kEmCuda = 190;
    if (yield_every < 1 || cubin.size() < kEhdr || std::memcmp(cubin.data(), "\x7f" "ELF", 4) != 0 ||
        cubin[4] != 2 /* ELFCLASS64 */ || cubin[5] != 1 /* little-endian */ || read<std::uint16_t>(cubin, 18) != kEmCuda)
        return false;
    const auto shoff = read<std::uint64_t>(cubin, 0x28);
    const auto shentsize = read<std::uint16_t>(cubin, 0x3A), shnum = read<std::uint16_t>(cubin, 0x3C),
               shstrndx = read<std::uint16_t>(cubin, 0x3E);
    if (shentsize != kShdr || shstrndx >= shnum || shoff > cubin.size() || shnum > (cubin.size() - shoff) / kShdr)
        return false;
    auto section = [&](std::size_t k, std::uint64_t& off, std::uint64_t& size) {
        const std::size_t h = shoff + k * kShdr;
        off = read<std::uint64_t>(cubin, h + 0x18);
        size = read<std::uint64_t>(cubin, h + 0x20);
        return read<std::uint32_t>(cubin, h);  // name offset
    };
    std::uint64_t str_off = 0, str_size = 0;
    section(shstrndx, str_off, str_size);
    if (str_off > cubin.size() || str_size > cubin.size() - str_off) return false;
    const std::string_view names(cubin.data() + str_off, str_size);
    for (std::size_t k = 0; k < shnum; ++k) {
        std::uint64_t off = 0, size = 0;
        const std::uint32_t name = section(k, off, size);
        if (name >= names.size() || off > cubin.size() || size > cubin.size() - off) continue;
        const std::string_view nm = names.substr(name, names.find('\0', name) - name);
        if (nm.substr(0, 6) == ".text." && size % 16 == 0) patch_text(cubin, off, off + size, yield_every, st);
    }
    if (stats != nullptr) *stats = st;
    return true;
}

}  // namespace tessera::jit
