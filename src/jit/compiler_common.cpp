// ptxas report parsing shared by both compilers.
#include <algorithm>
#include <cstdlib>

#include "jit/compiler.hpp"
#include "tessera/error.hpp"

namespace tessera::jit {
namespace {

// The integer just before `suffix` at or after `from` (e.g. "12 bytes stack frame"), or -1.
int number_before(std::string_view log, std::string_view suffix) {
    const std::size_t at = log.find(suffix);
    if (at == std::string_view::npos) return -1;
    std::size_t end = at;
    while (end > 0 && log[end - 1] == ' ') --end;
    std::size_t begin = end;
    while (begin > 0 && log[begin - 1] >= '0' && log[begin - 1] <= '9') --begin;
    if (begin == end) return -1;
    return std::atoi(std::string(log.substr(begin, end - begin)).c_str());
}

}  // namespace

PtxasUsage parse_ptxas_usage(std::string_view log) {
    PtxasUsage usage;
    usage.registers = number_before(log, "registers");
    usage.stack_frame_bytes = std::max(0, number_before(log, "bytes stack frame"));
    usage.spill_store_bytes = std::max(0, number_before(log, "bytes spill stores"));
    usage.spill_load_bytes = std::max(0, number_before(log, "bytes spill loads"));
    if (const std::size_t at = log.find("wgmma.mma_async instructions are serialized"); at != std::string_view::npos) {
        const std::size_t begin = log.rfind('\n', at), end = log.find('\n', at);
        usage.wgmma_serialized = true;
        usage.wgmma_serialized_reason = std::string(log.substr(begin == std::string_view::npos ? 0 : begin + 1,
                                                               end == std::string_view::npos ? end : end - begin - 1));
    }
    usage.local_memory = log.find("Local memory used") != std::string_view::npos ||
                         log.find("bytes lmem") != std::string_view::npos;
    return usage;
}

bool check_ptxas_report(std::string_view log, std::string_view what) {
    const PtxasUsage u = parse_ptxas_usage(log);
    if (u.registers < 0) return false;
    if (u.stack_frame_bytes > 0 || u.spill_store_bytes > 0 || u.spill_load_bytes > 0 || u.local_memory) {
        throw SpillError(detail::str_cat("kernel ", what, " uses local memory (stack frame ", u.stack_frame_bytes,
                                           " B, spill stores ", u.spill_store_bytes, " B, spill loads ",
                                           u.spill_load_bytes, " B); ptxas said:\n", log));
    }
    if (u.wgmma_serialized) {
        // Correct results at a fraction of the speed, which nothing else would tell: refused like a spill, so the FP8
        // planner picks another tile.
        throw SpillError(detail::str_cat("kernel ", what, ": ptxas serialized its wgmma (", u.wgmma_serialized_reason,
                                         ")"));
    }
    return true;
}

}  // namespace tessera::jit
