// The subcommands of the `tessera` command; each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace tessera::apps {

int info(const std::vector<std::string>& args);
int compile(const std::vector<std::string>& args);
int bench(const std::vector<std::string>& args);

// The value following `flag` in args, or fallback.
std::string flag_value(const std::vector<std::string>& args, const std::string& flag, const std::string& fallback);

}  // namespace tessera::apps
