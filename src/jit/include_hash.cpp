// Recursive include hashing for cache keys.
#include "jit/include_hash.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "jit/hash.hpp"
#include "tessera/error.hpp"

namespace tessera::jit {

std::vector<std::string> parse_includes(std::string_view source, std::string_view where) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < source.size()) {
        std::size_t end = source.find('\n', pos);
        if (end == std::string_view::npos) end = source.size();
        std::string_view line = source.substr(pos, end - pos);
        pos = end + 1;
        const std::size_t first = line.find_first_not_of(" \t");
        if (first == std::string_view::npos || line[first] != '#') continue;
        std::string_view rest = line.substr(first + 1);
        rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(" \t")));
        if (rest.substr(0, 7) != "include") continue;
        rest.remove_prefix(7);
        rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(" \t")));
        const std::size_t close = rest.find('>');
        if (rest.empty() || rest[0] != '<' || close == std::string_view::npos || rest.substr(1, 8) != "tessera/") {
            throw CompileError(detail::str_cat("kernel source ", where, ": only #include <tessera/...> is allowed, got '",
                                               line, "'"));
        }
        out.emplace_back(rest.substr(1, close - 1));
    }
    return out;
}

std::string IncludeHasher::digest_of_includes(std::string_view source) {
    std::lock_guard lock(mutex_);
    Digest digest;
    std::vector<std::string> stack;
    for (const std::string& inc : parse_includes(source, "generated")) digest.update(inc).update(header_digest(inc, stack));
    return digest.hex();
}

std::string IncludeHasher::header_digest(const std::string& relative_path, std::vector<std::string>& stack) {
    if (auto it = memo_.find(relative_path); it != memo_.end()) return it->second;
    if (std::find(stack.begin(), stack.end(), relative_path) != stack.end()) return "cycle";  // #pragma once breaks it
    const std::string full = kernel_dir_ + "/" + relative_path;
    std::ifstream in(full, std::ios::binary);
    if (!in) throw CompileError(detail::str_cat("kernel header not found: ", full, " (kernel_dir = '", kernel_dir_, "')"));
    std::ostringstream content;
    content << in.rdbuf();
    const std::string text = content.str();

    stack.push_back(relative_path);
    Digest digest;
    digest.update(relative_path).update(text);
    for (const std::string& inc : parse_includes(text, full)) digest.update(header_digest(inc, stack));
    stack.pop_back();
    return memo_[relative_path] = digest.hex();
}

}  // namespace tessera::jit
