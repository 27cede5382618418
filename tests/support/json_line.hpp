// Test helper: reads one flat JSON object (strings, numbers and true,
// false, null, as the echo_worker sample prints them) into name → text, and
// epoch-second texts into exact microseconds. Just enough for the samples'
// output (the tests, the benchmarks' worker fleets, the nemesis checker);
// anything else (nesting, arrays) is refused.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace json_line {

using fields = std::map<std::string, std::string>;

namespace detail {

inline void skip_ws(std::string_view s, std::size_t& i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) ++i;
}

inline void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

// A string literal at s[i] ('"'), unescaped; i moves past it.
inline std::optional<std::string> string_at(std::string_view s, std::size_t& i) {
    if (i >= s.size() || s[i] != '"') return std::nullopt;
    std::string out;
    for (++i; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '"') {
            ++i;
            return out;
        }
        if (c != '\\') {
            out += c;
            continue;
        }
        if (++i >= s.size()) return std::nullopt;
        switch (s[i]) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                if (i + 4 >= s.size()) return std::nullopt;
                unsigned cp = 0;
                for (int k = 1; k <= 4; ++k) {
                    const char h = s[i + static_cast<std::size_t>(k)];
                    cp <<= 4;
                    if (h >= '0' && h <= '9') cp |= static_cast<unsigned>(h - '0');
                    else if (h >= 'a' && h <= 'f') cp |= static_cast<unsigned>(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') cp |= static_cast<unsigned>(h - 'A' + 10);
                    else return std::nullopt;
                }
                put_utf8(out, cp);
                i += 4;
                break;
            }
            default: return std::nullopt;
        }
    }
    return std::nullopt;
}

// true, false or null at s[i], as its text; i moves past it.
inline std::optional<std::string> literal_at(std::string_view s, std::size_t& i) {
    for (std::string_view word : {"true", "false", "null"}) {
        if (s.substr(i, word.size()) == word) {
            i += word.size();
            return std::string(word);
        }
    }
    return std::nullopt;
}

// A number at s[i], as its text; i moves past it.
inline std::optional<std::string> number_at(std::string_view s, std::size_t& i) {
    const std::size_t start = i;
    if (i < s.size() && s[i] == '-') ++i;
    bool digits = false;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == 'e' || s[i] == 'E' ||
                            s[i] == '+' || s[i] == '-')) {
        digits = digits || (s[i] >= '0' && s[i] <= '9');
        ++i;
    }
    if (!digits) return std::nullopt;
    return std::string(s.substr(start, i - start));
}

}  // namespace detail

/// The members of a flat object: strings unescaped, numbers and true,
/// false, null as written.
/// Nothing when `line` is not such an object.
inline std::optional<fields> parse(std::string_view line) {
    fields out;
    std::size_t i = 0;
    detail::skip_ws(line, i);
    if (i >= line.size() || line[i] != '{') return std::nullopt;
    ++i;
    detail::skip_ws(line, i);
    if (i < line.size() && line[i] == '}') {
        ++i;
    } else {
        for (;;) {
            detail::skip_ws(line, i);
            auto name = detail::string_at(line, i);
            if (!name) return std::nullopt;
            detail::skip_ws(line, i);
            if (i >= line.size() || line[i] != ':') return std::nullopt;
            ++i;
            detail::skip_ws(line, i);
            auto value = i < line.size() && line[i] == '"' ? detail::string_at(line, i)
                         : i < line.size() && std::string_view("tfn").find(line[i]) != std::string_view::npos
                             ? detail::literal_at(line, i)
                             : detail::number_at(line, i);
            if (!value) return std::nullopt;
            out[*name] = std::move(*value);
            detail::skip_ws(line, i);
            if (i < line.size() && line[i] == ',') {
                ++i;
                continue;
            }
            if (i < line.size() && line[i] == '}') {
                ++i;
                break;
            }
            return std::nullopt;
        }
    }
    detail::skip_ws(line, i);
    if (i != line.size()) return std::nullopt;
    return out;
}

/// "1767225600.250000" (seconds, up to 6 fraction digits) as microseconds;
/// nothing when it is not that shape.
inline std::optional<std::int64_t> epoch_micros(std::string_view text) {
    std::int64_t sec = 0, frac = 0;
    std::size_t i = 0;
    if (text.empty()) return std::nullopt;
    for (; i < text.size() && text[i] != '.'; ++i) {
        if (text[i] < '0' || text[i] > '9' || i > 15) return std::nullopt;
        sec = sec * 10 + (text[i] - '0');
    }
    int digits = 0;
    if (i < text.size()) {
        for (++i; i < text.size(); ++i, ++digits) {
            if (text[i] < '0' || text[i] > '9' || digits >= 6) return std::nullopt;
            frac = frac * 10 + (text[i] - '0');
        }
    }
    for (; digits < 6; ++digits) frac *= 10;
    return sec * 1000000 + frac;
}

}  // namespace json_line
