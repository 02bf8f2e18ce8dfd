// The subcommands of the `tessera` command and their strict argument parsing: every option is known, takes a value
// exactly when it should (--name value or --name=value), and appears once unless repeatable; anything else is a
// UsageError, which main reports with the command's usage line and exit code 2.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::apps {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Option {
    const char* name;  // "--suite"
    bool takes_value;
    bool repeatable;
};

// The options given to a command, after parsing against its Option list.
class Args {
public:
    Args(const std::vector<std::string>& argv, const std::vector<Option>& options);
    bool help() const { return help_; }
    bool has(const std::string& name) const { return values_.count(name) != 0; }
    // The value of a non-repeatable option, or fallback.
    std::string get(const std::string& name, const std::string& fallback) const;
    // Every value of a repeatable option, in order.
    std::vector<std::string> all(const std::string& name) const;

private:
    bool help_ = false;
    std::map<std::string, std::vector<std::string>> values_;
};

struct Command {
    const char* name;
    const char* usage;  // one line: "tessera compile [--compiler C] ..."
    const char* help;   // the rest of --help: what it does, each option
    std::vector<Option> options;
    int (*run)(const Args& args);  // the process exit code
};

const Command& info_command();
const Command& compile_command();
const Command& bench_command();

// A positive integer option value, or a UsageError naming the option.
int positive_int(const std::string& option, const std::string& value);

}  // namespace tessera::apps
