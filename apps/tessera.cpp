// The `tessera` command: `tessera <command> [options]`, commands info, compile and bench (apps/commands.hpp).
// Exit codes: 0 done, 1 a failure while doing it (a kernel that did not compile, a CUDA error), 2 a usage mistake or
// input that could not run (nothing was done).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "tessera/error.hpp"

namespace tessera::apps {

Args::Args(const std::vector<std::string>& argv, const std::vector<Option>& options) {
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            help_ = true;
            continue;
        }
        if (arg.rfind("--", 0) != 0 || arg.size() == 2)
            throw UsageError("unexpected argument '" + arg + "' (options start with --)");
        const std::size_t eq = arg.find('=');
        const std::string name = arg.substr(0, eq);
        const Option* option = nullptr;
        for (const Option& o : options)
            if (name == o.name) option = &o;
        if (option == nullptr) throw UsageError("unknown option '" + name + "'");
        std::string value;
        if (!option->takes_value) {
            if (eq != std::string::npos) throw UsageError("option '" + name + "' takes no value, got '" + arg + "'");
        } else if (eq != std::string::npos) {
            value = arg.substr(eq + 1);
        } else if (i + 1 < argv.size() && argv[i + 1].rfind("--", 0) != 0 && argv[i + 1] != "-h") {
            value = argv[++i];
        } else {
            throw UsageError("option '" + name + "' needs a value");
        }
        if (option->takes_value && value.empty()) throw UsageError("option '" + name + "' needs a value");
        std::vector<std::string>& slot = values_[name];
        if (!slot.empty() && !option->repeatable) throw UsageError("option '" + name + "' given twice");
        slot.push_back(value);
    }
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
    const auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second.front();
}

std::vector<std::string> Args::all(const std::string& name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? std::vector<std::string>{} : it->second;
}

int positive_int(const std::string& option, const std::string& value) {
    int v = 0;
    bool ok = !value.empty() && value.size() <= 9;
    for (char c : value) ok = ok && c >= '0' && c <= '9';
    if (ok) v = std::stoi(value);
    if (!ok || v <= 0) throw UsageError("option '" + option + "': expected a positive integer, got '" + value + "'");
    return v;
}

}  // namespace tessera::apps

namespace {

using tessera::apps::Command;

const std::vector<const Command*>& commands() {
    static const std::vector<const Command*> all = {&tessera::apps::info_command(), &tessera::apps::compile_command(),
                                                    &tessera::apps::bench_command()};
    return all;
}

void print_usage(std::FILE* out) {
    std::fprintf(out, "usage: tessera <command> [options]    (tessera <command> --help for its options)\n");
    for (const Command* c : commands()) std::fprintf(out, "  %s\n", c->usage);
    std::fprintf(out, "  tessera --version\n");
}

}  // namespace

int main(int argc, char** argv) {
    // Progress lines reach a pipe (a log, CI) as they happen.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    const std::string name = argv[1];
    if ((name == "-h" || name == "--help" || name == "--version") && argc > 2) {
        std::fprintf(stderr, "tessera: unexpected argument '%s' after %s\n", argv[2], name.c_str());
        print_usage(stderr);
        return 2;
    }
    if (name == "-h" || name == "--help") {
        print_usage(stdout);
        return 0;
    }
    if (name == "--version") {
        std::printf("tessera %s\n", TESSERA_VERSION);
        return 0;
    }
    const Command* command = nullptr;
    for (const Command* c : commands())
        if (name == c->name) command = c;
    if (command == nullptr) {
        std::fprintf(stderr, "tessera: unknown %s '%s'\n", name.rfind("-", 0) == 0 ? "option" : "command",
                     name.c_str());
        print_usage(stderr);
        return 2;
    }
    try {
        const tessera::apps::Args args(std::vector<std::string>(argv + 2, argv + argc), command->options);
        if (args.help()) {
            std::printf("usage: %s\n%s", command->usage, command->help);
            return 0;
        }
        return command->run(args);
    } catch (const tessera::apps::UsageError& e) {
        std::fprintf(stderr, "tessera %s: %s\nusage: %s\n", command->name, e.what(), command->usage);
        return 2;
    } catch (const tessera::InvalidArgument& e) {
        std::fprintf(stderr, "tessera %s: %s\n", command->name, e.what());
        return 2;
    } catch (const tessera::Error& e) {
        std::fprintf(stderr, "tessera %s: %s\n", command->name, e.what());
        return 1;
    }
}
