// Reading and writing the schedule headers (see the header for the rules).
#include "tarry/contract/schedule_headers.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace tarry::contract {

namespace wire = amqp::wire;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

// 9999-12-31T23:59:59Z: nothing is scheduled later.
constexpr double max_epoch_seconds = 253402300799.0;
// x-delay: at most 100 years.
constexpr double max_delay_ms = 100.0 * 366 * 24 * 3600 * 1000;

// A number read from a header, or why it is not one.
struct number {
    double value = 0;          // for the range checks
    std::int64_t micros = 0;   // exact value in microseconds (seconds units) when exact
    bool exact = false;
    std::string problem;       // empty when a number was read
};

std::string quoted(std::string_view s) {
    std::string out = "\"";
    out += s.substr(0, 64);
    if (s.size() > 64) out += "...";
    return out + "\"";
}

std::string type_name(const wire::field_value& v) {
    switch (wire::field_tag(v)) {
        case 't': return "a boolean";
        case 'V': return "void";
        case 'F': return "a table";
        case 'A': return "an array";
        case 'x': return "a byte array";
        default: return std::string("type '") + wire::field_tag(v) + "'";
    }
}

std::string text_of(double d) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    return buf;
}

// A decimal number as text: digits, one optional '.', optional leading '-'.
std::optional<double> decimal_text(std::string_view s) {
    if (s.empty() || s.size() > 64) return std::nullopt;
    std::size_t i = s[0] == '-' ? 1 : 0;
    bool digit = false, dot = false;
    for (std::size_t k = i; k < s.size(); ++k) {
        if (s[k] >= '0' && s[k] <= '9') digit = true;
        else if (s[k] == '.' && !dot) dot = true;
        else return std::nullopt;
    }
    if (!digit) return std::nullopt;
    return std::strtod(std::string(s).c_str(), nullptr);
}

// The numeric value of v, in the header's own unit.
number numeric(const wire::field_value& v) {
    number n;
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, bool>) {
                n.problem = "is a boolean";
            } else if constexpr (std::is_integral_v<T>) {
                n.value = static_cast<double>(x);
            } else if constexpr (std::is_floating_point_v<T>) {
                n.value = static_cast<double>(x);
                if (std::isnan(n.value)) n.problem = "is NaN";
                else if (std::isinf(n.value)) n.problem = "is infinite";
            } else if constexpr (std::is_same_v<T, wire::decimal_value>) {
                if (x.scale > 30) n.problem = "is a decimal with scale " + std::to_string(x.scale);
                else n.value = static_cast<double>(x.value) / std::pow(10.0, x.scale);
            } else if constexpr (std::is_same_v<T, wire::timestamp_value>) {
                n.value = static_cast<double>(x.seconds);
            } else if constexpr (std::is_same_v<T, std::string>) {
                if (auto d = decimal_text(x)) n.value = *d;
                else n.problem = "is not a number: " + quoted(x);
            } else {
                n.problem = "is " + type_name(v) + ", not a number";
            }
        },
        v.value);
    return n;
}

// Seconds since the epoch → wall_time, to the nearest microsecond (a double
// holds an epoch time to about 0.2 µs, so that is all the precision there
// is). Precondition: 0 ≤ s ≤ max_epoch_seconds.
wall_time from_epoch_seconds(double s) {
    const auto us = std::llround(s * 1e6);  // a double cannot hold µs exactly at epoch scale
    return wall_time(std::chrono::duration_cast<wall_time::duration>(microseconds(us)));
}

// Integer seconds (exact) for the integer encodings.
std::optional<std::int64_t> exact_seconds(const wire::field_value& v) {
    return std::visit(
        [](const auto& x) -> std::optional<std::int64_t> {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
                if constexpr (std::is_unsigned_v<T>) {
                    if (x > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
                }
                return static_cast<std::int64_t>(x);
            } else if constexpr (std::is_same_v<T, wire::timestamp_value>) {
                if (x.seconds > static_cast<std::uint64_t>(max_epoch_seconds)) return std::nullopt;
                return static_cast<std::int64_t>(x.seconds);
            } else {
                return std::nullopt;
            }
        },
        v.value);
}

using due_or_reason = std::variant<wall_time, std::string>;

due_or_reason read_perform_job_at(const wire::field_value& v) {
    const std::string name(perform_job_at_header);
    if (const auto* s = v.get_if<std::string>()) {
        if (!decimal_text(*s)) {
            auto t = parse_rfc3339(*s);
            if (!t) return "invalid-schedule: " + name + " " + quoted(*s) +
                           " is neither a number nor an RFC 3339 time";
            if (t->time_since_epoch().count() < 0)
                return "invalid-schedule: " + name + " " + quoted(*s) + " is before 1970";
            return *t;
        }
    }
    const number n = numeric(v);
    if (!n.problem.empty()) return "invalid-schedule: " + name + " " + n.problem;
    if (n.value < 0) return "invalid-schedule: " + name + " is negative (" + text_of(n.value) + ")";
    if (n.value > max_epoch_seconds)
        return "invalid-schedule: " + name + " " + text_of(n.value) + " is after the year 9999";
    if (auto whole = exact_seconds(v)) return wall_time(std::chrono::seconds(*whole));
    return from_epoch_seconds(n.value);
}

due_or_reason read_x_delay(const wire::field_value& v, wall_time base) {
    const std::string name(x_delay_header);
    const number n = numeric(v);
    if (!n.problem.empty()) return "invalid-schedule: " + name + " " + n.problem;
    if (n.value < 0) return "invalid-schedule: " + name + " is negative (" + text_of(n.value) + " ms)";
    if (n.value > max_delay_ms)
        return "invalid-schedule: " + name + " " + text_of(n.value) + " ms is over 100 years";
    const auto us = static_cast<std::int64_t>(std::ceil(n.value * 1000.0 - 1e-6));
    return base + std::chrono::duration_cast<wall_time::duration>(microseconds(us));
}

std::string epoch_text(wall_time t) {
    const auto us = std::chrono::duration_cast<microseconds>(t.time_since_epoch()).count();
    char buf[48];
    std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(us / 1000000),
                  static_cast<long long>(us % 1000000));
    return buf;
}

// The expiration property as milliseconds, if it is well formed.
std::optional<std::int64_t> expiration_ms(const std::string& e) {
    if (e.empty() || e.size() > 18) return std::nullopt;
    std::int64_t ms = 0;
    for (const char c : e) {
        if (c < '0' || c > '9') return std::nullopt;
        ms = ms * 10 + (c - '0');
    }
    return ms;
}

}  // namespace

schedule_result read_schedule(const wire::basic_properties& props, wall_time arrival,
                              const schedule_rules& rules) {
    const wire::field_table* headers = props.headers ? &*props.headers : nullptr;
    const wire::field_value* at = headers ? headers->find(perform_job_at_header) : nullptr;
    const wire::field_value* delay = headers ? headers->find(x_delay_header) : nullptr;
    const wall_time base =
        props.timestamp && *props.timestamp <= static_cast<std::uint64_t>(max_epoch_seconds)
            ? wall_time(std::chrono::seconds(static_cast<std::int64_t>(*props.timestamp)))
            : arrival;
    schedule s{arrival + rules.default_delay, schedule_source::default_delay};
    if (at != nullptr || delay != nullptr) {
        auto read = at != nullptr ? read_perform_job_at(*at) : read_x_delay(*delay, base);
        if (auto* why = std::get_if<std::string>(&read)) return schedule_refusal{std::move(*why)};
        s = {std::get<wall_time>(read), at != nullptr ? schedule_source::perform_job_at : schedule_source::x_delay};
    }
    if (rules.max_delay && s.due - arrival > *rules.max_delay) {
        const auto in = std::chrono::duration_cast<milliseconds>(s.due - arrival).count();
        return schedule_refusal{"delay-exceeds-max: due in " + std::to_string(in) + " ms, max " +
                                std::to_string(rules.max_delay->count()) + " ms"};
    }
    if (props.expiration) {
        if (auto ttl = expiration_ms(*props.expiration)) {
            const wall_time expires = base + milliseconds(*ttl);
            if (expires < s.due)
                return schedule_refusal{"expired-before-due: expiration " + *props.expiration +
                                        " ms ends at " + epoch_text(expires) + ", before due " +
                                        epoch_text(s.due)};
        }
    }
    return s;
}

void write_schedule(wire::basic_properties& props, wall_time due, wall_time now) {
    if (!props.headers) props.headers.emplace();
    const auto us = std::chrono::duration_cast<microseconds>(due.time_since_epoch()).count();
    props.headers->set(std::string(perform_job_at_header), static_cast<double>(us) / 1e6);
    props.headers->erase(x_delay_header);
    if (!props.timestamp) {
        const auto s = std::chrono::floor<std::chrono::seconds>(now.time_since_epoch()).count();
        props.timestamp = static_cast<std::uint64_t>(s < 0 ? 0 : s);
    }
}

void strip_broker_death_headers(wire::basic_properties& props) {
    if (!props.headers) return;
    auto& entries = props.headers->entries();
    std::erase_if(entries, [](const wire::field_entry& e) {
        return e.name == "x-death" || e.name.rfind("x-first-death-", 0) == 0 ||
               e.name.rfind("x-last-death-", 0) == 0;
    });
}

std::uint32_t read_attempt(const wire::basic_properties& props) noexcept {
    if (!props.headers) return 1;
    const auto* v = props.headers->find(attempt_header);
    if (v == nullptr) return 1;
    const auto n = exact_seconds(*v);  // any integer width
    if (!n || v->get_if<wire::timestamp_value>() || *n < 1 || *n > std::numeric_limits<std::uint32_t>::max())
        return 1;
    return static_cast<std::uint32_t>(*n);
}

}  // namespace tarry::contract
