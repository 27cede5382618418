// Header values as exact numbers: every AMQP numeric encoding and numeric
// strings, scaled to microseconds and rounded up, never throwing.
#include "contract_detail.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>

namespace tarry::contract::detail {

namespace wire = amqp::wire;

namespace {

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
constexpr int max_decimal_scale = 30;

// 10^n for 0 ≤ n ≤ 18.
constexpr std::int64_t pow10(int n) noexcept {
    std::int64_t p = 1;
    for (int i = 0; i < n; ++i) p *= 10;
    return p;
}

// a × b, saturating at INT64_MAX (both ≥ 0).
std::int64_t saturating_mul(std::uint64_t a, std::int64_t b) noexcept {
    std::int64_t out = 0;
    if (a > static_cast<std::uint64_t>(int64_max) ||
        __builtin_mul_overflow(static_cast<std::int64_t>(a), b, &out))
        return int64_max;
    return out;
}

template <class F>
std::string float_text(F f) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, f);
    return std::string(buf, r.ptr);
}

// A decimal_value as text: scale 2, value 1767225 → "17672.25".
std::string decimal_text(const wire::decimal_value& d) {
    std::string digits = std::to_string(d.value);
    if (d.scale == 0) return digits;
    if (digits.size() <= d.scale) digits.insert(0, d.scale + 1 - digits.size(), '0');
    digits.insert(digits.size() - d.scale, 1, '.');
    return digits;
}

// value / 10^scale × 10^digits, rounded up.
std::int64_t decimal_scaled(const wire::decimal_value& d, int digits) noexcept {
    if (d.scale <= digits) return saturating_mul(d.value, pow10(digits - d.scale));
    const int down = d.scale - digits;
    if (down > 18) return d.value > 0 ? 1 : 0;  // 10^19 > UINT32_MAX: below one unit
    const std::int64_t div = pow10(down);
    return d.value / div + (d.value % div != 0 ? 1 : 0);
}

// A string that is_decimal_text() accepted, scaled and rounded up; nothing
// when it is below zero.
std::optional<std::int64_t> text_scaled(std::string_view s, int digits) noexcept {
    const bool minus = s[0] == '-';
    if (minus) s.remove_prefix(1);
    std::int64_t whole = 0;
    std::size_t i = 0;
    bool nonzero = false;
    for (; i < s.size() && s[i] != '.'; ++i) {
        const int c = s[i] - '0';
        nonzero |= c != 0;
        if (whole != int64_max &&
            (__builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, c, &whole)))
            whole = int64_max;
    }
    std::int64_t part = 0;
    bool rest = false;  // a non-zero digit below the last kept one
    int kept = 0;
    for (++i; i < s.size(); ++i) {
        const int c = s[i] - '0';
        nonzero |= c != 0;
        if (kept < digits) {
            part = part * 10 + c;
            ++kept;
        } else if (c != 0) {
            rest = true;
        }
    }
    if (minus && nonzero) return std::nullopt;
    for (; kept < digits; ++kept) part *= 10;
    std::int64_t out = saturating_mul(static_cast<std::uint64_t>(whole), pow10(digits));
    if (out == int64_max || __builtin_add_overflow(out, part + (rest ? 1 : 0), &out)) return int64_max;
    return out;
}

}  // namespace

bool is_decimal_text(std::string_view s) noexcept {
    std::size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
    const std::size_t int_start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == int_start) return false;
    if (i == s.size()) return true;
    if (s[i] != '.') return false;
    const std::size_t frac_start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > frac_start && i == s.size();
}

std::int64_t ceil_scaled(double d, int digits) noexcept {
    const std::int64_t p = pow10(digits);
    const double whole = std::floor(d);
    if (!(whole < static_cast<double>(int64_max / p - 1))) return int64_max;
    const double frac = d - whole;  // exact: the bits below the units of d
    const double f = frac * static_cast<double>(p);
    return static_cast<std::int64_t>(whole) * p + static_cast<std::int64_t>(std::ceil(f));
}

std::string quoted(std::string_view s) {
    constexpr std::size_t limit = 64;
    static constexpr char hex[] = "0123456789abcdef";
    std::string out = "\"";
    for (const char ch : s.substr(0, limit)) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xf];
        } else {
            out += ch;
        }
    }
    if (s.size() > limit) out += "...";
    return out + "\"";
}

number read_number(const wire::field_value& v, int digits, bool timestamps) {
    number n;
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, bool>) {
                n.text = x ? "true" : "false";
                n.problem = "is a boolean (" + n.text + "), not a number";
            } else if constexpr (std::is_integral_v<T>) {
                n.text = std::to_string(x);
                if constexpr (std::is_signed_v<T>) {
                    if (x < 0) {
                        n.problem = n.text + " is negative";
                        return;
                    }
                }
                n.scaled = saturating_mul(static_cast<std::uint64_t>(x), pow10(digits));
            } else if constexpr (std::is_floating_point_v<T>) {
                n.text = float_text(x);
                if (std::isnan(x)) n.problem = "is NaN";
                else if (std::isinf(x)) n.problem = "is infinite (" + n.text + ")";
                else if (x < 0) n.problem = n.text + " is negative";
                else n.scaled = ceil_scaled(static_cast<double>(x), digits);
            } else if constexpr (std::is_same_v<T, wire::decimal_value>) {
                n.text = decimal_text(x);
                if (x.scale > max_decimal_scale)
                    n.problem = "is a decimal with scale " + std::to_string(x.scale) + " (at most " +
                                std::to_string(max_decimal_scale) + ")";
                else n.scaled = decimal_scaled(x, digits);
            } else if constexpr (std::is_same_v<T, wire::timestamp_value>) {
                n.text = std::to_string(x.seconds);
                if (!timestamps) n.problem = "is a timestamp (" + n.text + "), not a number";
                else n.scaled = saturating_mul(x.seconds, pow10(digits));
            } else if constexpr (std::is_same_v<T, std::string>) {
                n.text = quoted(x);
                if (!is_decimal_text(x)) {
                    n.problem = n.text + " is not a number";
                } else if (auto s = text_scaled(x, digits)) {
                    n.scaled = *s;
                } else {
                    n.problem = n.text + " is negative";
                }
            } else if constexpr (std::is_same_v<T, wire::void_value>) {
                n.problem = "is void, not a number";
            } else if constexpr (std::is_same_v<T, wire::field_table>) {
                n.problem = "is a table, not a number";
            } else if constexpr (std::is_same_v<T, wire::field_array>) {
                n.problem = "is an array, not a number";
            } else {
                static_assert(std::is_same_v<T, wire::byte_array>);
                n.problem = "is a byte array, not a number";
            }
        },
        v.value);
    return n;
}

}  // namespace tarry::contract::detail
