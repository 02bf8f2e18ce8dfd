// The text form of a GEMM problem for `tessera compile` and tessera/aot.hpp: "KIND:MxNxK[:G[:E]]" (G groups,
// E expected rows). The FP8 and BF16 problem parsers share it; each checks its own KIND.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::catalog {

struct ProblemText {
    std::string_view kind;
    std::int64_t m = 0, n = 0, k = 0;
    std::int64_t groups = 1, expected_m = 0;
};

// What a problem text of `family` ("fp8", "bf16") must look like, for error messages: "fp8 problem: expected
// KIND:MxNxK[:G[:E]] with KIND <kinds> (<detail>), got '<text>'".
std::string problem_text_error(std::string_view family, std::string_view kinds, std::string_view detail,
                               std::string_view text);

// Splits `text` into its fields and checks their syntax (not the KIND, not the values): throws InvalidArgument with
// problem_text_error's message.
ProblemText parse_problem_text(std::string_view text, std::string_view family, std::string_view kinds);

// "KIND:MxNxK", then ":G" when groups != 1 or expected_m != 0, then ":E" when expected_m != 0.
std::string problem_text(std::string_view kind, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t groups,
                         std::int64_t expected_m);

}  // namespace tessera::catalog
