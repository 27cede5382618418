// The schedule-header contract: every accepted encoding, every refusal and
// its reason, precedence, default delay, max_delay and expiration bounds,
// RFC 3339, what tarry writes, and no throw on arbitrary values.
#include "tarry/contract/schedule_headers.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace std::chrono_literals;
namespace wire = tarry::amqp::wire;
namespace contract = tarry::contract;
using tarry::wall_time;

namespace {

const wall_time arrival = wall_time(1767225600s);  // 2026-01-01T00:00:00Z

wire::basic_properties with(std::string name, wire::field_value v) {
    wire::basic_properties p;
    p.headers = wire::field_table{};
    p.headers->set(std::move(name), std::move(v));
    return p;
}

std::int64_t micros(wall_time t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

// The due time read, or a failed check naming the reason.
std::optional<contract::schedule> read(const wire::basic_properties& p, contract::schedule_rules r = {}) {
    auto res = contract::read_schedule(p, arrival, r);
    if (auto* no = std::get_if<contract::schedule_refusal>(&res)) {
        FAIL_CHECK("refused: " << no->reason);
        return std::nullopt;
    }
    return std::get<contract::schedule>(res);
}

std::string refusal(const wire::basic_properties& p, contract::schedule_rules r = {}) {
    auto res = contract::read_schedule(p, arrival, r);
    if (auto* no = std::get_if<contract::schedule_refusal>(&res)) return no->reason;
    FAIL_CHECK("accepted, due " << micros(std::get<contract::schedule>(res).due));
    return {};
}

bool starts(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("perform_job_at: every numeric encoding gives the exact due time") {
    struct c {
        const char* what;
        wire::field_value v;
        std::int64_t us;
    };
    const c cases[] = {
        {"double", 1767225600.25, 1767225600250000},
        {"double, µs", 1767225600.000001, 1767225600000001},
        {"float", 1024.5f, 1024500000},
        {"int8", std::int8_t{7}, 7000000},
        {"uint8", std::uint8_t{255}, 255000000},
        {"int16", std::int16_t{32767}, 32767000000},
        {"uint16", std::uint16_t{65535}, 65535000000},
        {"int32", std::int32_t{1767225601}, 1767225601000000},
        {"uint32", std::uint32_t{4000000000u}, 4000000000000000},
        {"int64", std::int64_t{1767225602}, 1767225602000000},
        {"decimal", wire::decimal_value{2, 1767225}, 17672250000},  // 17672.25 s
        {"timestamp", wire::timestamp_value{1767225603}, 1767225603000000},
        {"numeric string", "1767225600.5", 1767225600500000},
        {"integer string", "1767225604", 1767225604000000},
        {"zero", 0.0, 0},
    };
    for (const auto& k : cases) {
        CAPTURE(k.what);
        const auto s = read(with("perform_job_at", k.v));
        REQUIRE(s);
        CHECK(micros(s->due) == k.us);
        CHECK(s->source == contract::schedule_source::perform_job_at);
    }
}

TEST_CASE("perform_job_at: RFC 3339 strings") {
    struct c {
        const char* text;
        std::int64_t us;
    };
    const c cases[] = {
        {"2026-01-01T00:00:00Z", 1767225600000000},
        {"2026-01-01t00:00:00z", 1767225600000000},
        {"2026-01-01 00:00:00Z", 1767225600000000},
        {"2026-01-01T02:30:00+02:30", 1767225600000000},
        {"2025-12-31T23:00:00-01:00", 1767225600000000},
        {"2026-01-01T00:00:00.125Z", 1767225600125000},
        {"2026-01-01T00:00:00.1234567Z", 1767225600123457},  // rounded up below a µs
        {"2024-02-29T12:00:00Z", 1709208000000000},          // leap day
        {"2016-12-31T23:59:60Z", 1483228800000000},          // leap second: next minute
    };
    for (const auto& k : cases) {
        CAPTURE(k.text);
        const auto t = contract::parse_rfc3339(k.text);
        REQUIRE(t);
        CHECK(micros(*t) == k.us);
        const auto s = read(with("perform_job_at", std::string(k.text)));
        REQUIRE(s);
        CHECK(micros(s->due) == k.us);
    }
    for (const char* bad : {"2026-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
                            "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-01-01T00:00:00",
                            "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00+2:00", "2026-01-01T00:00:00+24:00",
                            "2026-01-01T00:00:00Zjunk", "2026-1-01T00:00:00Z", "", "tomorrow"}) {
        CAPTURE(bad);
        CHECK_FALSE(contract::parse_rfc3339(bad));
    }
}

TEST_CASE("perform_job_at: each malformed value is refused with invalid-schedule and says why") {
    struct c {
        const char* what;
        wire::field_value v;
        const char* says;
    };
    const c cases[] = {
        {"bool", true, "boolean"},
        {"void", wire::void_value{}, "void"},
        {"table", wire::field_table{{"a", 1}}, "table"},
        {"array", wire::field_array{1.0}, "array"},
        {"bytes", wire::byte_array{{1, 2}}, "byte array"},
        {"NaN", std::numeric_limits<double>::quiet_NaN(), "NaN"},
        {"+inf", std::numeric_limits<double>::infinity(), "infinite"},
        {"-inf float", -std::numeric_limits<float>::infinity(), "infinite"},
        {"negative", -1.5, "negative"},
        {"negative int", std::int32_t{-10}, "negative"},
        {"year 10000", 253402300800.0, "9999"},
        {"huge uint", std::numeric_limits<std::int64_t>::max(), "9999"},
        {"garbage", "next tuesday", "next tuesday"},
        {"hex", "0x10", "0x10"},
        {"padded", " 12", " 12"},
        {"decimal scale", wire::decimal_value{200, 1}, "scale"},
        {"before 1970", "1969-12-31T23:59:59Z", "1970"},
    };
    for (const auto& k : cases) {
        CAPTURE(k.what);
        const auto why = refusal(with("perform_job_at", k.v));
        CHECK(starts(why, "invalid-schedule: perform_job_at"));
        CHECK_MESSAGE(why.find(k.says) != std::string::npos, why);
    }
    const auto long_garbage = refusal(with("perform_job_at", std::string(1000, 'z')));
    CHECK(long_garbage.size() < 200);  // the value is quoted, cut short
}

TEST_CASE("x-delay: counted from the timestamp property, else from arrival") {
    auto p = with("x-delay", std::int32_t{1500});
    auto s = read(p);
    REQUIRE(s);
    CHECK(s->due == arrival + 1500ms);
    CHECK(s->source == contract::schedule_source::x_delay);
    p.timestamp = 1767225500;  // 100 s before arrival
    s = read(p);
    REQUIRE(s);
    CHECK(s->due == wall_time(1767225500s) + 1500ms);
    for (wire::field_value v : {wire::field_value(2.5), wire::field_value("2.5"),
                                wire::field_value(wire::decimal_value{1, 25}), wire::field_value(std::uint8_t{2})}) {
        const auto d = read(with("x-delay", v));
        REQUIRE(d);
        CHECK(d->due > arrival);
        CHECK(d->due <= arrival + 3ms);
    }
    for (wire::field_value v : {wire::field_value(std::int32_t{-1}), wire::field_value(-0.5),
                                wire::field_value(std::numeric_limits<double>::quiet_NaN()),
                                wire::field_value("soon"), wire::field_value(true), wire::field_value(1e20)}) {
        CHECK(starts(refusal(with("x-delay", v)), "invalid-schedule: x-delay"));
    }
}

TEST_CASE("perform_job_at wins over x-delay, and its own fault is reported") {
    auto p = with("perform_job_at", 1767225700.0);
    p.headers->set("x-delay", std::int32_t{5});
    auto s = read(p);
    REQUIRE(s);
    CHECK(s->due == wall_time(1767225700s));
    p.headers->set("x-delay", "garbage");  // ignored
    CHECK(read(p));
    p.headers->set("perform_job_at", true);
    CHECK(starts(refusal(p), "invalid-schedule: perform_job_at"));
}

TEST_CASE("no schedule header: the default delay") {
    wire::basic_properties p;
    auto s = read(p);
    REQUIRE(s);
    CHECK(s->due == arrival);
    CHECK(s->source == contract::schedule_source::default_delay);
    s = read(p, {2500ms, std::nullopt});
    REQUIRE(s);
    CHECK(s->due == arrival + 2500ms);
    p.headers = wire::field_table{{"other", 1}};
    CHECK(read(p, {10ms, std::nullopt})->due == arrival + 10ms);
}

TEST_CASE("max_delay: equal is accepted, beyond is refused with delay-exceeds-max") {
    const contract::schedule_rules rules{0ms, 60000ms};
    CHECK(read(with("x-delay", std::int32_t{60000}), rules));
    const auto why = refusal(with("x-delay", std::int32_t{60001}), rules);
    CHECK(starts(why, "delay-exceeds-max: "));
    CHECK(why.find("60001") != std::string::npos);
    CHECK(why.find("60000") != std::string::npos);
    CHECK(starts(refusal(with("perform_job_at", 1767225600.0 + 3600), rules), "delay-exceeds-max: "));
    // A due time in the past is never "too far".
    CHECK(read(with("perform_job_at", 1.0), rules));
}

TEST_CASE("expiration before the due time: expired-before-due; exactly at it is accepted") {
    auto p = with("x-delay", std::int32_t{5000});
    p.expiration = "5000";
    CHECK(read(p));
    p.expiration = "4999";
    const auto why = refusal(p);
    CHECK(starts(why, "expired-before-due: "));
    CHECK(why.find("4999") != std::string::npos);
    // Counted from the timestamp when present.
    p.timestamp = 1767225590;  // 10 s before arrival: due at -5 s, expires at -5.001 s
    CHECK(starts(refusal(p), "expired-before-due: "));
    p.expiration = "not digits";  // the broker validates expiration; ignored here
    CHECK(read(p));
}

TEST_CASE("write_schedule round-trips through read_schedule and replaces x-delay") {
    wire::basic_properties p;
    p.headers = wire::field_table{{"x-delay", std::int32_t{100}}, {"keep", "me"}};
    const wall_time due = wall_time(1767225600123456us);
    contract::write_schedule(p, due, arrival);
    CHECK(p.headers->find("x-delay") == nullptr);
    CHECK(*p.headers->find("keep") == wire::field_value("me"));
    REQUIRE(p.headers->find("perform_job_at")->get_if<double>());
    CHECK(p.timestamp == std::optional<std::uint64_t>(1767225600));
    const auto s = read(p);
    REQUIRE(s);
    CHECK(s->due == due);
    // An existing timestamp is kept; headers are created when absent.
    wire::basic_properties q;
    q.timestamp = 42;
    contract::write_schedule(q, due, arrival);
    CHECK(q.timestamp == std::optional<std::uint64_t>(42));
    CHECK(q.headers);
}

TEST_CASE("strip_broker_death_headers removes x-death and x-first/last-death-* only") {
    wire::basic_properties p;
    p.headers = wire::field_table{{"x-death", wire::field_array{}},
                                  {"x-first-death-queue", "q"},
                                  {"x-first-death-reason", "expired"},
                                  {"x-last-death-exchange", ""},
                                  {"x-deathly", "kept"},
                                  {"perform_job_at", 1.0}};
    contract::strip_broker_death_headers(p);
    REQUIRE(p.headers->size() == 2);
    CHECK(p.headers->find("x-deathly"));
    CHECK(p.headers->find("perform_job_at"));
    wire::basic_properties none;
    contract::strip_broker_death_headers(none);  // no headers: nothing to do
    CHECK_FALSE(none.headers);
}

TEST_CASE("read_attempt: any integer ≥ 1, else 1") {
    CHECK(contract::read_attempt({}) == 1);
    CHECK(contract::read_attempt(with("x-tarry-attempt", std::int64_t{3})) == 3);
    CHECK(contract::read_attempt(with("x-tarry-attempt", std::uint8_t{7})) == 7);
    CHECK(contract::read_attempt(with("x-tarry-attempt", std::int32_t{0})) == 1);
    CHECK(contract::read_attempt(with("x-tarry-attempt", std::int32_t{-2})) == 1);
    CHECK(contract::read_attempt(with("x-tarry-attempt", std::int64_t{1} << 40)) == 1);
    CHECK(contract::read_attempt(with("x-tarry-attempt", "3")) == 1);
    CHECK(contract::read_attempt(with("x-tarry-attempt", 3.0)) == 1);
}

TEST_CASE("arbitrary values never throw and always answer") {
    std::mt19937_64 rng(2026);
    auto random_value = [&]() -> wire::field_value {
        const double d = std::bit_cast<double>(rng());
        switch (rng() % 12) {
            case 0: return d;
            case 1: return static_cast<float>(d);
            case 2: return static_cast<std::int64_t>(rng());
            case 3: return static_cast<std::uint32_t>(rng());
            case 4: return wire::decimal_value{static_cast<std::uint8_t>(rng()), static_cast<std::uint32_t>(rng())};
            case 5: return wire::timestamp_value{rng()};
            case 6: return std::to_string(d);
            case 7: return std::string("2026-01-0") + std::to_string(rng() % 10) + "T00:00:00Z";
            case 8: return static_cast<std::int8_t>(rng());
            case 9: return static_cast<bool>(rng() & 1);
            case 10: {
                std::string s(rng() % 40, ' ');
                for (auto& ch : s) ch = static_cast<char>(rng());
                return s;
            }
            default: return wire::void_value{};
        }
    };
    for (int i = 0; i < 20000; ++i) {
        auto p = with(rng() % 2 ? "perform_job_at" : "x-delay", random_value());
        if (rng() % 3 == 0) p.expiration = std::to_string(rng() % 100000);
        if (rng() % 3 == 0) p.timestamp = rng();
        contract::schedule_result r;
        CHECK_NOTHROW(r = contract::read_schedule(p, arrival, {0ms, 3600000ms}));
        if (auto* no = std::get_if<contract::schedule_refusal>(&r)) {
            CHECK((starts(no->reason, "invalid-schedule: ") || starts(no->reason, "delay-exceeds-max: ") ||
                   starts(no->reason, "expired-before-due: ")));
        }
    }
}
