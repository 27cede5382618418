// Fuzz target: the schedule-header contract (read_schedule, write_schedule,
// read_attempt, strip_broker_death_headers; docs/wire-contract.md).
//
// Input layout:
//   byte 0     bits 0-1: arrival (2026-01-01T00:00:00.123456789Z, the epoch,
//              1969-12-31T23:59:59.5Z, one second before the end of
//              wall_time); bits 2-3: default_delay (0, 1500 ms, 100 years,
//              milliseconds::max()); bits 4-5: max_delay (none, 0, 60 s,
//              100 years); bit 6: a `timestamp` property follows; bit 7: an
//              `expiration` property follows
//   [8 bytes]  timestamp, big-endian (bit 6)
//   [1 + n]    expiration: n = byte % 24, then n bytes of text (bit 7)
//   the rest   the headers: an AMQP field table (u32 length + entries);
//              none when empty; inputs that do not decode are skipped. An
//              entry named "@" is renamed perform_job_at and one named "+"
//              x-delay, so that mutations reach both headers easily.
//
// Properties, each one the contract states (schedule_headers.hpp,
// docs/wire-contract.md):
// - nothing throws; read_attempt is at least 1;
// - a refusal's reason starts with its prefix and names the header at
//   fault: `invalid-schedule: perform_job_at ` when perform_job_at is there
//   (it wins, even beside a good x-delay), else `invalid-schedule: x-delay `,
//   else `invalid-schedule: the default delay`;
// - an accepted schedule names its source, as the same rule says;
// - the header alone (no max_delay, no expiration) reads as documented for
//   integers, timestamps, numeric strings, RFC 3339 strings (as
//   parse_rfc3339 reads them), NaN / infinity / negatives (refused), wrong
//   types (refused), x-delay (at most 100 years, counted from `timestamp`
//   when it is set and not past the latest supported time, else from
//   arrival), and the default delay (from arrival); no due time is after the
//   latest supported time;
// - the checks run in order: max_delay (delay from arrival, rounded up to
//   the ms; equal is accepted) refuses only what the header accepted, then
//   expiration (digits only, from `timestamp` else arrival; expiring exactly
//   when due is accepted; anything else ignored);
// - write_schedule then read_schedule gives the same due time, rounded up
//   to the microsecond (exactly until 2^33 s, 2242-03-16; a few µs later,
//   never earlier, after that; a due time before 1970 reads as the epoch),
//   with one perform_job_at, no x-delay, and `timestamp` set;
// - strip_broker_death_headers removes exactly x-death, x-first-death-*
//   and x-last-death-*, keeping the other entries in order.
#include "fuzz_support.hpp"

#include "tarry/contract/schedule_headers.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace {

using namespace tarry_fuzz;
using namespace std::chrono_literals;
namespace contract = tarry::contract;
using tarry::wall_time;
using i128 = __int128;
using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr std::int64_t us_per_s = 1'000'000;
constexpr std::int64_t hundred_years_ms = 36'525LL * 86'400 * 1000;

// ---- time arithmetic, exact (ns in 128 bits) -------------------------------

i128 ns_of(wall_time t) {
    return static_cast<i128>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

// The latest due time accepted, in µs: 9999-12-31T23:59:59Z or the last
// whole µs of wall_time, whichever comes first.
std::int64_t latest_us() {
    const std::int64_t year_9999 = 253'402'300'799 * us_per_s;
    const std::int64_t clock_end = std::chrono::floor<microseconds>(wall_time::max().time_since_epoch()).count();
    return std::min(year_9999, clock_end);
}
i128 latest_ns() { return static_cast<i128>(latest_us()) * 1000; }

i128 floor_div(i128 a, i128 b) { return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0); }
i128 ceil_div(i128 a, i128 b) { return -floor_div(-a, b); }

std::string text(i128 v) {
    if (v == 0) return "0";
    const bool minus = v < 0;
    std::string s;
    for (; v != 0; v /= 10) s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(minus ? -(v % 10) : v % 10)));
    return minus ? "-" + s : s;
}

// ---- the input ---------------------------------------------------------------

struct input {
    wall_time arrival;
    contract::schedule_rules rules;
    wire::basic_properties props;
};

wall_time arrival_choice(unsigned bits) {
    switch (bits & 3) {
        case 0: return wall_time(std::chrono::duration_cast<wall_time::duration>(1'767'225'600s + 123'456'789ns));
        case 1: return wall_time{};
        case 2: return wall_time(std::chrono::duration_cast<wall_time::duration>(-500ms));
        default: return wall_time::max() - std::chrono::duration_cast<wall_time::duration>(1s);
    }
}

std::optional<input> parse(std::span<const std::uint8_t> data) {
    if (data.empty()) return std::nullopt;
    const std::uint8_t mode = data[0];
    std::size_t at = 1;
    input in;
    in.arrival = arrival_choice(mode);
    constexpr milliseconds defaults[] = {0ms, 1500ms, milliseconds(hundred_years_ms), milliseconds::max()};
    in.rules.default_delay = defaults[(mode >> 2) & 3];
    switch ((mode >> 4) & 3) {
        case 0: break;
        case 1: in.rules.max_delay = 0ms; break;
        case 2: in.rules.max_delay = 60s; break;
        default: in.rules.max_delay = milliseconds(hundred_years_ms); break;
    }
    if (mode & 0x40) {
        if (data.size() < at + 8) return std::nullopt;
        std::uint64_t ts = 0;
        for (int i = 0; i < 8; ++i) ts = ts << 8 | data[at++];
        in.props.timestamp = ts;
    }
    if (mode & 0x80) {
        if (data.size() < at + 1) return std::nullopt;
        const std::size_t n = data[at++] % 24;
        if (data.size() < at + n) return std::nullopt;
        in.props.expiration = std::string(reinterpret_cast<const char*>(data.data() + at), n);
        at += n;
    }
    if (at < data.size()) {
        wire::byte_reader r(data.subspan(at));
        auto t = wire::decode_table(r);
        if (!r.ok()) return std::nullopt;
        for (auto& e : t.entries()) {
            if (e.name == "@") e.name = std::string(contract::perform_job_at_header);
            else if (e.name == "+") e.name = std::string(contract::x_delay_header);
        }
        in.props.headers = std::move(t);
    }
    return in;
}

// ---- what the contract says about one header value -------------------------

// A header value's expected reading, where the contract pins it: the due
// time (ns), or a refusal; nothing where it is not checked here (floats,
// decimals below their scale limit, over-long texts).
struct expect {
    enum { unknown, due, refused } what = unknown;
    i128 due_ns = 0;
};

expect due_at_us(i128 us) {
    if (us > latest_us()) return {expect::refused, 0};
    return {expect::due, us * 1000};
}

// `-?[0-9]+(\.[0-9]+)?`
bool decimal_text(std::string_view s) {
    std::size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
    const std::size_t a = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == a) return false;
    if (i == s.size()) return true;
    if (s[i] != '.') return false;
    const std::size_t b = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > b && i == s.size();
}

// A decimal text × 10^digits, rounded up; saturates far above any latest
// time. Nothing for a negative non-zero value.
std::optional<i128> decimal_scaled(std::string_view s, int digits) {
    const bool minus = s[0] == '-';
    if (minus) s.remove_prefix(1);
    const i128 cap = static_cast<i128>(1) << 100;
    i128 v = 0;
    int frac = -1;  // digits after the point so far; -1 before it
    bool rest = false, nonzero = false;
    for (const char c : s) {
        if (c == '.') {
            frac = 0;
            continue;
        }
        nonzero |= c != '0';
        if (frac >= digits) {
            rest |= c != '0';
            continue;
        }
        if (v < cap) v = v * 10 + (c - '0');
        if (frac >= 0) ++frac;
    }
    if (minus && nonzero) return std::nullopt;
    for (int k = std::max(frac, 0); k < digits; ++k)
        if (v < cap) v *= 10;
    return v + (rest ? 1 : 0);
}

template <class T>
constexpr bool is_integer = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// A double or a decimal, in either header: what is refused (the exact due
// is not predicted here).
template <class T>
expect inexact(const T& x) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x) || std::isinf(x) || x < 0) return {expect::refused, 0};
    } else {
        if (x.scale > 30) return {expect::refused, 0};
    }
    return {};
}

expect perform_job_at_expect(const wire::field_value& v) {
    return std::visit(
        [](const auto& x) -> expect {
            using T = std::decay_t<decltype(x)>;
            if constexpr (is_integer<T>) {
                if (std::cmp_less(x, 0)) return {expect::refused, 0};
                return due_at_us(static_cast<i128>(x) * us_per_s);
            } else if constexpr (std::is_same_v<T, wire::timestamp_value>) {
                return due_at_us(static_cast<i128>(x.seconds) * us_per_s);
            } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, wire::decimal_value>) {
                return inexact(x);
            } else if constexpr (std::is_same_v<T, std::string>) {
                if (decimal_text(x)) {
                    const auto us = decimal_scaled(x, 6);
                    if (!us) return {expect::refused, 0};
                    return due_at_us(*us);
                }
                const auto t = contract::parse_rfc3339(x);
                if (!t || ns_of(*t) < 0) return {expect::refused, 0};
                return {expect::due, ns_of(*t)};
            } else {  // bool, void, table, array, byte array
                return {expect::refused, 0};
            }
        },
        v.value);
}

// base + ms, as a due time: refused past 100 years or the latest time.
expect after_ms(i128 base_ns, i128 ms) {
    if (ms > hundred_years_ms) return {expect::refused, 0};
    const i128 t = base_ns + ms * 1'000'000;
    if (t > latest_ns()) return {expect::refused, 0};
    return {expect::due, t};
}

expect x_delay_expect(const wire::field_value& v, i128 base_ns) {
    return std::visit(
        [base_ns](const auto& x) -> expect {
            using T = std::decay_t<decltype(x)>;
            if constexpr (is_integer<T>) {
                if (std::cmp_less(x, 0)) return {expect::refused, 0};
                return after_ms(base_ns, static_cast<i128>(x));
            } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, wire::decimal_value>) {
                return inexact(x);
            } else if constexpr (std::is_same_v<T, std::string>) {
                if (!decimal_text(x)) return {expect::refused, 0};
                const auto us = decimal_scaled(x, 3);
                if (!us) return {expect::refused, 0};
                if (*us > static_cast<i128>(hundred_years_ms) * 1000) return {expect::refused, 0};
                const i128 t = base_ns + *us * 1000;
                if (t > latest_ns()) return {expect::refused, 0};
                return {expect::due, t};
            } else {  // bool, void, table, array, byte array, timestamp
                return {expect::refused, 0};
            }
        },
        v.value);
}

bool starts(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

const contract::schedule* accepted(const contract::schedule_result& r) { return std::get_if<contract::schedule>(&r); }
const std::string* refused(const contract::schedule_result& r) {
    const auto* x = std::get_if<contract::schedule_refusal>(&r);
    return x ? &x->reason : nullptr;
}

std::string describe(const contract::schedule_result& r) {
    if (const auto* why = refused(r)) return "refused: " + *why;
    return "due " + text(ns_of(accepted(r)->due)) + " ns, source " +
           std::to_string(static_cast<int>(accepted(r)->source));
}

// The `expiration` property in ms when digits only (saturating far above
// any time); nothing when it is ignored.
std::optional<i128> expiration_ms(const std::optional<std::string>& e) {
    if (!e || e->empty()) return std::nullopt;
    i128 ms = 0;
    for (const char c : *e) {
        if (c < '0' || c > '9') return std::nullopt;
        if (ms < (static_cast<i128>(1) << 100)) ms = ms * 10 + (c - '0');
    }
    return ms;
}

// ---- the checks ------------------------------------------------------------

void check_header_reading(const input& in, const contract::schedule_result& r0, i128 base_ns) {
    const auto* headers = in.props.headers ? &*in.props.headers : nullptr;
    const auto* at = headers ? headers->find(contract::perform_job_at_header) : nullptr;
    const auto* delay = headers ? headers->find(contract::x_delay_header) : nullptr;
    const char* prefix = at      ? "invalid-schedule: perform_job_at "
                         : delay ? "invalid-schedule: x-delay "
                                 : "invalid-schedule: the default delay";
    const auto source = at      ? contract::schedule_source::perform_job_at
                        : delay ? contract::schedule_source::x_delay
                                : contract::schedule_source::default_delay;
    if (const auto* why = refused(r0)) {
        check(starts(*why, prefix), "a refusal does not name the header at fault", *why);
    } else {
        check(accepted(r0)->source == source, "an accepted schedule names another source", describe(r0));
        const i128 due = ns_of(accepted(r0)->due);
        check(due <= latest_ns(), "a due time after the latest supported time", describe(r0));
        if (at) {
            check(due >= 0, "perform_job_at accepted before 1970", describe(r0));
            check(due % 1000 == 0, "perform_job_at not a whole microsecond", describe(r0));
        }
    }

    const i128 arrival_ns = ns_of(in.arrival);
    expect e;
    if (at) {
        e = perform_job_at_expect(*at);
    } else if (delay) {
        e = x_delay_expect(*delay, base_ns);
    } else {
        const i128 t = arrival_ns + static_cast<i128>(in.rules.default_delay.count()) * 1'000'000;
        e = t > latest_ns() ? expect{expect::refused, 0} : expect{expect::due, t};
    }
    if (e.what == expect::refused) check(refused(r0) != nullptr, "a value the contract refuses was accepted", describe(r0));
    if (e.what == expect::due) {
        check(accepted(r0) != nullptr, "a value the contract accepts was refused", describe(r0));
        check(ns_of(accepted(r0)->due) == e.due_ns, "a due time other than the contract's",
              describe(r0) + ", expected " + text(e.due_ns) + " ns");
    }
}

void check_order(const input& in, const contract::schedule_result& r, const contract::schedule_result& r0,
                 i128 base_ns) {
    if (const auto* why = refused(r0)) {
        check(refused(r) && *refused(r) == *why, "max_delay or expiration changed a header refusal", describe(r));
        return;
    }
    const auto& s = *accepted(r0);
    const i128 due = ns_of(s.due);
    const i128 in_ms = ceil_div(due - ns_of(in.arrival), 1'000'000);
    if (in.rules.max_delay && in_ms > in.rules.max_delay->count()) {
        const std::string want = "delay-exceeds-max: due in " + text(in_ms) + " ms, max " +
                                 std::to_string(in.rules.max_delay->count()) + " ms (";
        check(refused(r) && starts(*refused(r), want), "a delay over max_delay not refused as such",
              describe(r) + ", expected " + want);
        return;
    }
    if (const auto ttl = expiration_ms(in.props.expiration)) {
        const i128 ends = base_ns + *ttl * 1'000'000;
        // A TTL longer than wall_time's whole span (only reachable from an
        // arrival before 1970) is not pinned down by the contract: either.
        const i128 span_us = std::chrono::floor<microseconds>(wall_time::duration::max()).count();
        if (*ttl * 1000 > span_us && refused(r) && starts(*refused(r), "expired-before-due: ")) return;
        if (ends <= latest_ns() && ends < due) {
            check(refused(r) && starts(*refused(r), "expired-before-due: "), "expiring before due not refused",
                  describe(r));
            return;
        }
    }
    check(accepted(r) && accepted(r)->due == s.due && accepted(r)->source == s.source,
          "max_delay or expiration refused or changed a schedule they allow", describe(r) + " vs " + describe(r0));
}

void check_round_trip(const input& in, wall_time due) {
    wire::basic_properties p = in.props;
    p.expiration.reset();  // copies are sent without it
    const bool had_timestamp = p.timestamp.has_value();
    contract::write_schedule(p, due, in.arrival);
    check(p.headers.has_value(), "write_schedule left no headers");
    std::size_t n = 0;
    for (const auto& e : p.headers->entries()) {
        n += e.name == contract::perform_job_at_header;
        check(e.name != contract::x_delay_header, "write_schedule left an x-delay");
    }
    check(n == 1, "write_schedule left other than one perform_job_at", std::to_string(n));
    check(p.headers->find(contract::perform_job_at_header)->get_if<double>() != nullptr,
          "write_schedule wrote perform_job_at as other than a double");
    check(p.timestamp.has_value(), "write_schedule left no timestamp");
    if (!had_timestamp) {
        const auto s = std::chrono::floor<std::chrono::seconds>(in.arrival.time_since_epoch()).count();
        check(*p.timestamp == static_cast<std::uint64_t>(std::max<std::int64_t>(s, 0)),
              "write_schedule set a timestamp other than now");
    }

    const auto back = contract::read_schedule(p, in.arrival, {});
    const i128 want = std::max<i128>(ceil_div(ns_of(due), 1000), 0) * 1000;  // before 1970: at once
    const auto* s = accepted(back);
    if (s == nullptr && want + 4000 > latest_ns() && starts(*refused(back), "invalid-schedule: perform_job_at ") &&
        refused(back)->find("is after the latest supported time") != std::string::npos)
        return;  // due within a few µs of the latest time: read back "a few µs later", past it
    check(s != nullptr, "a written schedule does not read back", describe(back));
    check(s->source == contract::schedule_source::perform_job_at, "a written schedule reads from another source");
    const i128 got = ns_of(s->due);
    if (want < (static_cast<i128>(1) << 33) * us_per_s * 1000) {
        check(got == want, "a written schedule reads back another due time",
              "wrote " + text(ns_of(due)) + " ns, read " + text(got));
    } else {
        check(got >= want && got - want < 4000, "a written schedule after 2242 reads back early or late",
              "wrote " + text(ns_of(due)) + " ns, read " + text(got));
    }
}

bool death_header(std::string_view n) {
    return n == "x-death" || starts(n, "x-first-death-") || starts(n, "x-last-death-");
}

void check_strip(const input& in) {
    if (!in.props.headers) return;
    wire::basic_properties p = in.props;
    contract::strip_broker_death_headers(p);
    std::vector<std::string> kept;
    for (const auto& e : in.props.headers->entries())
        if (!death_header(e.name)) kept.push_back(e.name);
    check(p.headers->entries().size() == kept.size(), "strip_broker_death_headers kept the wrong entries");
    for (std::size_t i = 0; i < kept.size(); ++i)
        check(p.headers->entries()[i].name == kept[i], "strip_broker_death_headers reordered the entries");
}

void run(const input& in) {
    check(contract::read_attempt(in.props) >= 1, "read_attempt below 1");
    check_strip(in);

    const auto r = contract::read_schedule(in.props, in.arrival, in.rules);
    if (const auto* why = refused(r)) {
        check(starts(*why, "invalid-schedule: ") || starts(*why, "delay-exceeds-max: ") ||
                  starts(*why, "expired-before-due: "),
              "a refusal without a documented prefix", *why);
    }

    // The header alone: no max_delay, no expiration.
    wire::basic_properties bare = in.props;
    bare.expiration.reset();
    const auto r0 = contract::read_schedule(bare, in.arrival, {in.rules.default_delay, std::nullopt});
    const bool stamped = in.props.timestamp && static_cast<i128>(*in.props.timestamp) * us_per_s <= latest_us();
    const i128 base_ns = stamped ? static_cast<i128>(*in.props.timestamp) * us_per_s * 1000 : ns_of(in.arrival);
    check_header_reading(in, r0, base_ns);
    check_order(in, r, r0, base_ns);
    if (const auto* s = accepted(r)) check_round_trip(in, s->due);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const auto in = parse(std::span<const std::uint8_t>(data, size));
        if (in) run(*in);
    } catch (const std::exception& e) {
        fail("the schedule contract threw", e.what());
    } catch (...) {
        fail("the schedule contract threw");
    }
    return 0;
}
