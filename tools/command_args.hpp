// Command-line and output helpers shared by the `tarry` tool and the
// samples: `--name value` arguments with usage errors (exit 2), JSON strings
// and epoch-second times.
#pragma once

#include "tarry/time/time_points.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

namespace cli {

class args {
public:
    /// Reads `--name value` pairs; anything else is a usage error. --help
    /// (or -h) prints the usage, then `help` when given, and exits 0.
    args(int argc, char** argv, const char* usage, const char* help = nullptr) : usage_(usage) {
        for (int i = 1; i < argc; ++i) {
            const std::string name = argv[i];
            if (name == "--help" || name == "-h") {
                std::fputs(usage_, stdout);
                if (help) std::fputs(help, stdout);
                std::exit(0);
            }
            if (name.rfind("--", 0) != 0 || i + 1 >= argc) fail("unexpected argument '" + name + "'");
            values_[name] = argv[++i];
        }
    }
    bool has(const std::string& name) const { return values_.count(name) != 0; }
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
        std::string v = it->second;
        values_.erase(it);
        return v;
    }
    const char* usage_;
    std::map<std::string, std::string> values_;
};

/// `s` as a JSON string literal.
inline std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (const unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

/// Epoch seconds with microseconds, e.g. 1767225600.250000.
inline std::string epoch_text(tarry::wall_time t) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
    char buf[40];
    std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(us / 1000000),
                  static_cast<long long>(us % 1000000 < 0 ? -(us % 1000000) : us % 1000000));
    return buf;
}

}  // namespace cli
