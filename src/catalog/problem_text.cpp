#include "catalog/problem_text.hpp"

#include <algorithm>
#include <vector>

#include "tessera/error.hpp"

namespace tessera::catalog {

std::string problem_text_error(std::string_view family, std::string_view kinds, std::string_view detail,
                               std::string_view text) {
    return detail::str_cat(family, " problem: expected KIND:MxNxK[:G[:E]] with KIND ", kinds, " (", detail, "), got '",
                           text, "'");
}

ProblemText parse_problem_text(std::string_view text, std::string_view family, std::string_view kinds) {
    const auto fail = [&](std::string_view what) {
        return InvalidArgument(problem_text_error(family, kinds, what, text));
    };
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
        const std::size_t end = text.find(':', start);
        parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos) break;
        start = end + 1;
    }
    if (parts.size() < 2 || parts.size() > 4) throw fail("2 to 4 fields separated by ':'");
    const auto count = [&](std::string_view digits, std::string_view what) {
        std::int64_t v = 0;
        if (digits.empty() || digits.size() > 18) throw fail(what);
        for (char c : digits) {
            if (c < '0' || c > '9') throw fail(what);
            v = v * 10 + (c - '0');
        }
        return v;
    };
    std::int64_t mnk[3];
    std::string_view sizes = parts[1];
    for (int i = 0; i < 3; ++i) {
        const std::size_t end = i < 2 ? sizes.find('x') : sizes.size();
        if (end == std::string_view::npos) throw fail("sizes MxNxK");
        mnk[i] = count(sizes.substr(0, end), "sizes MxNxK of non-negative integers");
        sizes = sizes.substr(std::min(end + 1, sizes.size()));
    }
    ProblemText p;
    p.kind = parts[0];
    p.m = mnk[0];
    p.n = mnk[1];
    p.k = mnk[2];
    if (parts.size() > 2) p.groups = count(parts[2], "a group count G");
    if (parts.size() > 3) p.expected_m = count(parts[3], "an expected row count E");
    return p;
}

std::string problem_text(std::string_view kind, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t groups,
                         std::int64_t expected_m) {
    std::string text = detail::str_cat(kind, ":", m, "x", n, "x", k);
    if (groups != 1 || expected_m != 0) text += detail::str_cat(":", groups);
    if (expected_m != 0) text += detail::str_cat(":", expected_m);
    return text;
}

}  // namespace tessera::catalog
