// Command-line and output helpers shared by the `tarry` tool and the
// samples: `--name value` arguments and `--flag`s with usage errors (exit 2),
// JSON strings and epoch-second times.
#pragma once

#include "tarry/amqp/queue_kind.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace cli {

class args {
public:
    /// Reads `--name value` pairs, and the names in `flags` alone (no
    /// value); anything else is a usage error. --help (or -h) prints the
    /// usage, then `help` when given, and exits 0. An option given twice is a
    /// usage error when read as one value (text, number, ...); all() reads
    /// every value of an option that may repeat.
    args(int argc, char** argv, const char* usage, const char* help = nullptr,
         std::initializer_list<std::string_view> flags = {})
        : usage_(usage) {
        for (int i = 1; i < argc; ++i) {
            const std::string name = argv[i];
            if (name == "--help" || name == "-h") {
                std::fputs(usage_, stdout);
                if (help) std::fputs(help, stdout);
                std::exit(0);
            }
            bool is_flag = false;
            for (auto f : flags) is_flag = is_flag || f == name;
            if (is_flag) {
                values_[name].emplace_back();
                continue;
            }
            if (name.rfind("--", 0) != 0 || i + 1 >= argc) fail("unexpected argument '" + name + "'");
            values_[name].emplace_back(argv[++i]);
        }
    }
    bool has(const std::string& name) const { return values_.count(name) != 0; }
    /// A flag: whether it was given.
    bool flag(const std::string& name) {
        const bool given = has(name);
        values_.erase(name);
        return given;
    }
    /// Every value of an option that may be given more than once, in order.
    std::vector<std::string> all(const std::string& name) {
        auto it = values_.find(name);
        if (it == values_.end()) return {};
        auto v = std::move(it->second);
        values_.erase(it);
        return v;
    }
    std::string required(const std::string& name) {
        if (!has(name)) fail(name + " is required");
        return take(name);
    }
    std::string text(const std::string& name, std::string fallback) {
        return has(name) ? take(name) : fallback;
    }
    /// A non-negative integer.
    std::size_t number(const std::string& name, std::size_t fallback) {
        if (!has(name)) return fallback;
        const std::string v = take(name);
        char* end = nullptr;
        const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || v[0] == '-') fail(name + " needs a non-negative integer, not '" + v + "'");
        return static_cast<std::size_t>(n);
    }
    std::chrono::milliseconds millis(const std::string& name, std::chrono::milliseconds fallback) {
        if (!has(name)) return fallback;
        return std::chrono::milliseconds(static_cast<std::int64_t>(number(name, 0)));
    }
    /// A finite number (e.g. epoch seconds with a fraction).
    /// The text of the file option `name` names (required), its trailing
    /// newlines and spaces cut: a secret kept out of the process list (a
    /// token, a URL with its password). A usage error when it cannot be read.
    std::string file_text(const std::string& name) {
        const std::string path = required(name);
        std::ifstream in(path);
        if (!in) fail(name + ": cannot read '" + path + "'");
        std::ostringstream text;
        text << in.rdbuf();
        std::string t = text.str();
        while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
        return t;
    }
    double real(const std::string& name) {
        const std::string v = take(name);
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || d != d || d > 1e15 || d < -1e15) fail(name + " needs a number, not '" + v + "'");
        return d;
    }
    /// Fails on arguments nobody asked for.
    void finish() {
        if (!values_.empty()) fail("unknown option '" + values_.begin()->first + "'");
    }
    [[noreturn]] void fail(const std::string& why) const {
        std::fprintf(stderr, "%s\n%s", why.c_str(), usage_);
        std::exit(2);
    }

private:
    std::string take(const std::string& name) {
        auto it = values_.find(name);
        if (it->second.size() > 1) fail(name + " is given more than once");
        std::string v = std::move(it->second.front());
        values_.erase(it);
        return v;
    }
    const char* usage_;
    std::map<std::string, std::vector<std::string>> values_;
};

/// --queue-type classic|quorum, or classic when absent; a usage error for
/// any other value.
inline tarry::amqp::queue_kind queue_type_option(args& a) {
    const std::string text = a.text("--queue-type", "classic");
    const auto kind = tarry::amqp::queue_kind_from_string(text);
    if (!kind) a.fail("--queue-type is classic or quorum, not '" + text + "'");
    return *kind;
}

}  // namespace cli
