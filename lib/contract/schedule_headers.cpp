// Reading a message's due time (with every refusal and its reason) and
// writing the headers tarry sets; see tarry/contract/schedule_headers.hpp.
#include "contract_detail.hpp"

#include "tarry/time/epoch_text.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

namespace tarry::contract {

namespace wire = amqp::wire;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

constexpr std::int64_t us_per_second = 1'000'000;
// x-delay: at most 100 years of 365.25 days.
constexpr std::int64_t longest_delay_us = 36'525LL * 86'400 * us_per_second;

// A due time read from a header, with the value as written (for reasons).
struct reading {
    wall_time due;
    std::string what;  // "x-delay 1500", "perform_job_at \"2026-01-01T00:00:00Z\""
};
using reading_or_reason = std::variant<reading, std::string>;

// µs since the epoch → wall_time. Precondition: within wall_time's range.
wall_time at_micros(std::int64_t us) noexcept {
    return wall_time(std::chrono::ceil<wall_time::duration>(microseconds(us)));
}

std::string text_of(wall_time t) {
    return detail::format_rfc3339(std::chrono::floor<microseconds>(t.time_since_epoch()).count());
}

std::string latest_text() { return detail::format_rfc3339(detail::latest_micros()); }

// base + delta µs, when the sum is no later than the latest supported time.
std::optional<wall_time> after(wall_time base, std::int64_t delta_us) noexcept {
    const auto max_us = std::chrono::floor<microseconds>(wall_time::duration::max()).count();
    if (delta_us > max_us || delta_us < -max_us) return std::nullopt;
    const auto delta = std::chrono::ceil<wall_time::duration>(microseconds(delta_us));
    wall_time::rep sum = 0;
    if (__builtin_add_overflow(base.time_since_epoch().count(), delta.count(), &sum)) return std::nullopt;
    const wall_time t{wall_time::duration(sum)};
    if (t > at_micros(detail::latest_micros())) return std::nullopt;
    return t;
}

// ceil((to − from) / 1 ms) for any two wall_times, without overflow.
std::int64_t ceil_ms_between(wall_time from, wall_time to) noexcept {
    using D = wall_time::duration;
    constexpr D::rep per_ms = std::chrono::duration_cast<D>(milliseconds(1)).count();
    static_assert(per_ms >= 1 && D(per_ms) == milliseconds(1), "wall_time must divide a millisecond");
    const auto split = [](D d, std::int64_t& q, std::int64_t& r) {
        q = d.count() / per_ms;
        r = d.count() % per_ms;
        if (r < 0) {
            r += per_ms;
            q -= 1;
        }
    };
    std::int64_t qf = 0, rf = 0, qt = 0, rt = 0;
    split(from.time_since_epoch(), qf, rf);
    split(to.time_since_epoch(), qt, rt);
    return qt - qf + (rt > rf ? 1 : 0);
}

reading_or_reason read_perform_job_at(const wire::field_value& v) {
    const std::string name(perform_job_at_header);
    const auto refuse = [&](const std::string& what) { return "invalid-schedule: " + name + " " + what; };
    std::int64_t us = 0;
    std::string text;
    if (const auto* s = v.get_if<std::string>(); s != nullptr && !detail::is_decimal_text(*s)) {
        text = detail::quoted(*s);
        const auto t = detail::parse_rfc3339_micros(*s);
        if (!t) return refuse(text + " is neither a number nor an RFC 3339 time");
        if (*t < 0) return refuse(text + " is before 1970");
        us = *t;
    } else {
        auto n = detail::read_number(v, 6, true);
        if (!n.problem.empty()) return refuse(n.problem);
        us = n.scaled;
        text = std::move(n.text);
    }
    if (us > detail::latest_micros())
        return refuse(text + " is after the latest supported time, " + latest_text());
    return reading{at_micros(us), name + " " + text};
}

reading_or_reason read_x_delay(const wire::field_value& v, wall_time base, const std::string& from) {
    const std::string name(x_delay_header);
    const auto refuse = [&](const std::string& what) { return "invalid-schedule: " + name + " " + what; };
    auto n = detail::read_number(v, 3, false);
    if (!n.problem.empty()) return refuse(n.problem);
    if (n.scaled > longest_delay_us) return refuse(n.text + " ms is over 100 years");
    const auto due = after(base, n.scaled);
    if (!due)
        return refuse(n.text + " ms from " + from + " ends after the latest supported time, " +
                      latest_text());
    return reading{*due, name + " " + n.text};
}

// The `expiration` property in µs, when it is digits only (as RabbitMQ
// requires); saturates at INT64_MAX.
std::optional<std::int64_t> expiration_us(const std::string& e) noexcept {
    if (e.empty()) return std::nullopt;
    std::int64_t ms = 0;
    for (const char c : e) {
        if (c < '0' || c > '9') return std::nullopt;
        if (ms != std::numeric_limits<std::int64_t>::max() &&
            (__builtin_mul_overflow(ms, 10, &ms) || __builtin_add_overflow(ms, c - '0', &ms)))
            ms = std::numeric_limits<std::int64_t>::max();
    }
    std::int64_t us = 0;
    if (__builtin_mul_overflow(ms, 1000, &us)) return std::numeric_limits<std::int64_t>::max();
    return us;
}

// The double that write_schedule sends for `us`: the one nearest us / 10^6
// that reads back (rounded up to the µs) as exactly `us`; where doubles are
// too sparse for that (after about 2242), the nearest that reads back later.
double seconds_double(std::int64_t us) noexcept {
    const auto back = [](double d) { return detail::ceil_scaled(d, 6); };
    double d = static_cast<double>(us) / 1e6;
    if (back(d) > us) {
        const double lower = std::nextafter(d, 0.0);
        if (back(lower) >= us) d = lower;
    }
    for (int i = 0; i < 8 && back(d) < us; ++i) d = std::nextafter(d, HUGE_VAL);
    return d;
}

}  // namespace

schedule_result read_schedule(const wire::basic_properties& props, wall_time arrival,
                              const schedule_rules& rules) {
    const wire::field_value* at = wire::header_of(props, perform_job_at_header);
    const wire::field_value* delay = wire::header_of(props, x_delay_header);
    // The base of x-delay and expiration; a timestamp past the latest
    // supported time is ignored.
    const bool stamped = props.timestamp &&
                         *props.timestamp <= static_cast<std::uint64_t>(detail::latest_micros() / us_per_second);
    const wall_time base = stamped ? at_micros(static_cast<std::int64_t>(*props.timestamp) * us_per_second) : arrival;
    const std::string from = stamped ? "timestamp " + text_of(base) : "arrival " + text_of(arrival);

    reading read;
    if (at != nullptr || delay != nullptr) {
        auto r = at != nullptr ? read_perform_job_at(*at) : read_x_delay(*delay, base, from);
        if (auto* why = std::get_if<std::string>(&r)) return schedule_refusal{std::move(*why)};
        read = std::move(std::get<reading>(r));
    } else {
        std::int64_t us = 0;
        const auto due = __builtin_mul_overflow(rules.default_delay.count(), 1000, &us)
                             ? std::nullopt
                             : after(arrival, us);
        read.what = "default delay " + std::to_string(rules.default_delay.count()) + " ms";
        if (!due)
            return schedule_refusal{"invalid-schedule: the " + read.what +
                                    " ends after the latest supported time, " + latest_text()};
        read.due = *due;
    }
    const schedule s{read.due, at != nullptr      ? schedule_source::perform_job_at
                               : delay != nullptr ? schedule_source::x_delay
                                                  : schedule_source::default_delay};

    if (rules.max_delay) {
        const std::int64_t in = ceil_ms_between(arrival, s.due);
        if (in > rules.max_delay->count())
            return schedule_refusal{"delay-exceeds-max: due in " + std::to_string(in) + " ms, max " +
                                    std::to_string(rules.max_delay->count()) + " ms (" + read.what + ")"};
    }

    if (props.expiration) {
        const auto ttl = expiration_us(*props.expiration);
        const auto ends = ttl ? after(base, *ttl) : std::nullopt;  // none: never, as far as we can tell
        if (ends && *ends < s.due)
            return schedule_refusal{"expired-before-due: expires " + text_of(*ends) + " (expiration " +
                                    detail::quoted(*props.expiration) + " ms from " + from +
                                    "), before due " + text_of(s.due) + " (" + read.what + ")"};
    }
    return s;
}

void write_schedule(wire::basic_properties& props, wall_time due, wall_time now) {
    if (!props.headers) props.headers.emplace();
    // Rounded up (never early); a time before 1970 is simply due at once.
    const auto us = std::chrono::ceil<microseconds>(due.time_since_epoch()).count();
    props.headers->erase(perform_job_at_header);
    props.headers->set(std::string(perform_job_at_header), seconds_double(us < 0 ? 0 : us));
    props.headers->erase(x_delay_header);
    if (!props.timestamp) props.timestamp = epoch_whole_seconds(now);
}

void strip_broker_death_headers(wire::basic_properties& props) {
    if (!props.headers) return;
    std::erase_if(props.headers->entries(), [](const wire::field_entry& e) {
        const std::string_view n = e.name;
        return n == "x-death" || n.starts_with("x-first-death-") || n.starts_with("x-last-death-");
    });
}

std::uint32_t read_attempt(const wire::basic_properties& props) noexcept {
    const auto n = wire::integer_header(props, attempt_header);
    if (!n || *n < 1 || std::cmp_greater(*n, std::numeric_limits<std::uint32_t>::max())) return 1;
    return static_cast<std::uint32_t>(*n);
}

std::uint64_t read_generation(const wire::basic_properties& props) noexcept {
    const auto n = wire::integer_header(props, generation_header);
    return n && *n > 0 ? static_cast<std::uint64_t>(*n) : 0;
}

void write_generation(wire::basic_properties& props, std::uint64_t generation) {
    if (!props.headers) props.headers.emplace();
    const auto g = std::min<std::uint64_t>(generation, std::numeric_limits<std::int64_t>::max());
    props.headers->set(std::string(generation_header), static_cast<std::int64_t>(g));
}

std::uint64_t next_generation(wall_time now) noexcept {
    static std::atomic<std::uint64_t> last{0};
    const std::int64_t us = epoch_microseconds(now);
    std::uint64_t seen = last.load(std::memory_order_relaxed);
    std::uint64_t g = 0;
    do {
        g = std::max<std::uint64_t>(static_cast<std::uint64_t>(std::max<std::int64_t>(us, 0)), seen + 1);
    } while (!last.compare_exchange_weak(seen, g, std::memory_order_relaxed));
    return g;
}

}  // namespace tarry::contract
