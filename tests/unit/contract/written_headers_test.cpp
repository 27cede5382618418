// What tarry writes: write_schedule (and its exact round trip through
// read_schedule), strip_broker_death_headers, and reading x-tarry-attempt.
#include "contract_test_support.hpp"
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


using contract_test::arrival;
using contract_test::micros;
using contract_test::with;

wall_time at_us(std::int64_t us) { return wall_time(std::chrono::microseconds(us)); }

// The due time read back from what write_schedule wrote, arriving an hour
// after `due` (so x-delay or the default delay would give something else).
std::int64_t round_trip(std::int64_t us) {
    wire::basic_properties p;
    contract::write_schedule(p, at_us(us), arrival);
    const auto res = contract::read_schedule(p, at_us(us) + 1h, {});
    REQUIRE(std::holds_alternative<contract::schedule>(res));
    return micros(std::get<contract::schedule>(res).due);
}

std::size_t count(const wire::field_table& t, std::string_view name) {
    std::size_t n = 0;
    for (const auto& e : t.entries()) n += e.name == name ? 1 : 0;
    return n;
}

}  // namespace

TEST_CASE("write_schedule: perform_job_at as a double, x-delay removed, others kept") {
    wire::basic_properties p;
    p.headers = wire::field_table{{"x-delay", std::int32_t{100}},
                                  {"perform_job_at", "2030-01-01T00:00:00Z"},
                                  {"keep", "me"},
                                  {"perform_job_at", 5.0}};
    const wall_time due = at_us(1767225600123456);
    contract::write_schedule(p, due, arrival);
    CHECK(p.headers->find("x-delay") == nullptr);
    CHECK(*p.headers->find("keep") == wire::field_value("me"));
    CHECK(count(*p.headers, "perform_job_at") == 1);
    const double* d = p.headers->find("perform_job_at")->get_if<double>();
    REQUIRE(d);
    CHECK(std::abs(*d - 1767225600.123456) < 1e-6);  // the nearest double, as others read it
    const auto res = contract::read_schedule(p, arrival + 1h, {});
    REQUIRE(std::holds_alternative<contract::schedule>(res));
    CHECK(std::get<contract::schedule>(res).due == due);
    CHECK(std::get<contract::schedule>(res).source == contract::schedule_source::perform_job_at);
}

TEST_CASE("write_schedule: timestamp set to now in whole seconds only when unset") {
    wire::basic_properties p;
    contract::write_schedule(p, arrival, arrival + 900ms);
    CHECK(p.timestamp == std::optional<std::uint64_t>(1767225600));  // rounded down
    CHECK(p.headers);  // created
    wire::basic_properties q;
    q.timestamp = 42;
    contract::write_schedule(q, arrival, arrival);
    CHECK(q.timestamp == std::optional<std::uint64_t>(42));
    wire::basic_properties r;
    contract::write_schedule(r, arrival, wall_time(-5s));  // a clock before 1970
    CHECK(r.timestamp == std::optional<std::uint64_t>(0));
}

TEST_CASE("write_schedule: sub-microsecond times are rounded up, times before 1970 are due at once") {
    CHECK(round_trip(0) == 0);
    wire::basic_properties p;
    contract::write_schedule(p, arrival + 1ns, arrival);
    auto res = contract::read_schedule(p, arrival, {});
    REQUIRE(std::holds_alternative<contract::schedule>(res));
    CHECK(micros(std::get<contract::schedule>(res).due) == micros(arrival) + 1);
    wire::basic_properties old;
    contract::write_schedule(old, wall_time(-10s), arrival);
    CHECK(*old.headers->find("perform_job_at") == wire::field_value(0.0));
}

TEST_CASE("write_schedule: read_schedule gives back the exact microsecond") {
    // Every microsecond of a stretch around now, and random ones from 1970
    // to 2242 (while a double still holds every microsecond of an epoch time).
    for (std::int64_t us = 1767225600000000; us < 1767225600000000 + 20000; ++us) {
        CAPTURE(us);
        CHECK(round_trip(us) == us);
    }
    std::mt19937_64 rng(42);
    for (int i = 0; i < 20000; ++i) {
        const auto us = static_cast<std::int64_t>(rng() % 8589934592000000);  // 2^33 s
        CAPTURE(us);
        CHECK(round_trip(us) == us);
    }
}

TEST_CASE("write_schedule: later than 2242 a job is at most a few µs late, never early") {
    const std::int64_t clock_end =
        std::chrono::floor<std::chrono::microseconds>(wall_time::max().time_since_epoch()).count();
    const std::int64_t last = std::min<std::int64_t>(253402300799000000, clock_end);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 5000; ++i) {
        const std::int64_t us = last - static_cast<std::int64_t>(rng() % (last - 8589934592000000));
        CAPTURE(us);
        wire::basic_properties p;
        contract::write_schedule(p, at_us(us), arrival);
        const auto res = contract::read_schedule(p, arrival, {});
        if (std::holds_alternative<contract::schedule_refusal>(res)) {
            // Only when no double at or after `us` is within the supported range.
            CHECK(us > last - 64);
            continue;
        }
        const auto back = micros(std::get<contract::schedule>(res).due);
        CHECK(back >= us);
        CHECK(back - us < 64);
    }
}

TEST_CASE("strip_broker_death_headers removes x-death and x-first/last-death-* only") {
    wire::basic_properties p;
    p.headers = wire::field_table{{"x-death", wire::field_array{}},
                                  {"x-first-death-queue", "q"},
                                  {"x-first-death-reason", "expired"},
                                  {"x-last-death-exchange", ""},
                                  {"x-last-death-queue", "q"},
                                  {"x-death", "a second one"},
                                  {"x-deathly", "kept"},
                                  {"x-first-death", "kept: no dash"},
                                  {"x-tarry-reason", "kept"},
                                  {"perform_job_at", 1.0}};
    contract::strip_broker_death_headers(p);
    REQUIRE(p.headers->size() == 4);
    CHECK(p.headers->entries()[0].name == "x-deathly");
    CHECK(p.headers->entries()[1].name == "x-first-death");
    CHECK(p.headers->entries()[2].name == "x-tarry-reason");
    CHECK(p.headers->entries()[3].name == "perform_job_at");
    wire::basic_properties none;
    contract::strip_broker_death_headers(none);  // no headers: nothing to do
    CHECK_FALSE(none.headers);
}

TEST_CASE("read_attempt: any integer type from 1 to 2^32-1, else 1") {
    static_assert(noexcept(contract::read_attempt(wire::basic_properties{})));
    struct c {
        const char* what;
        wire::field_value v;
        std::uint32_t attempt;
    };
    const c cases[] = {
        {"int8", std::int8_t{2}, 2},
        {"uint8", std::uint8_t{7}, 7},
        {"int16", std::int16_t{300}, 300},
        {"uint16", std::uint16_t{65535}, 65535},
        {"int32", std::int32_t{5}, 5},
        {"uint32, largest", std::uint32_t{4294967295u}, 4294967295u},
        {"int64", std::int64_t{3}, 3},
        {"int64 at 2^32-1", std::int64_t{4294967295}, 4294967295u},
        {"int64 at 2^32", std::int64_t{4294967296}, 1},
        {"int64 huge", std::numeric_limits<std::int64_t>::max(), 1},
        {"zero", std::int32_t{0}, 1},
        {"negative", std::int8_t{-2}, 1},
        {"string", "3", 1},
        {"double", 3.0, 1},
        {"bool", true, 1},
        {"timestamp", wire::timestamp_value{3}, 1},
        {"decimal", wire::decimal_value{0, 3}, 1},
        {"void", wire::void_value{}, 1},
    };
    for (const auto& k : cases) {
        CAPTURE(k.what);
        CHECK(contract::read_attempt(with("x-tarry-attempt", k.v)) == k.attempt);
    }
    CHECK(contract::read_attempt({}) == 1);
    CHECK(contract::read_attempt(with("other", std::int32_t{4})) == 1);
}

TEST_CASE("read_generation: any integer type from 0 up, else 0 (a message published without one)") {
    static_assert(noexcept(contract::read_generation(wire::basic_properties{})));
    struct kase {
        const char* what;
        wire::field_value v;
        std::uint64_t generation;
    };
    const kase cases[] = {
        {"uint8", std::uint8_t{7}, 7},
        {"int32", std::int32_t{70000}, 70000},
        {"uint32", std::uint32_t{4294967295u}, 4294967295u},
        {"int64, µs now", std::int64_t{1795613756873786}, 1795613756873786u},
        {"int64 max", std::numeric_limits<std::int64_t>::max(), 9223372036854775807u},
        {"zero", std::int64_t{0}, 0},
        {"negative", std::int64_t{-5}, 0},
        {"string", "1795613756873786", 0},
        {"double", 1.5e15, 0},
        {"bool", true, 0},
        {"timestamp", wire::timestamp_value{3}, 0},
        {"table", wire::field_table{}, 0},
    };
    for (const auto& k : cases) {
        CAPTURE(k.what);
        CHECK(contract::read_generation(with("x-tarry-generation", k.v)) == k.generation);
    }
    CHECK(contract::read_generation({}) == 0);
    CHECK(contract::read_generation(with("x-tarry-attempt", std::int64_t{4})) == 0);
}

TEST_CASE("write_generation: one signed 64-bit header, replacing an earlier one, read back exactly") {
    wire::basic_properties p;
    contract::write_generation(p, 1795613756873786u);
    REQUIRE(p.headers);
    const auto* v = p.headers->find("x-tarry-generation");
    REQUIRE(v != nullptr);
    CHECK(v->get_if<std::int64_t>() != nullptr);
    CHECK(contract::read_generation(p) == 1795613756873786u);

    contract::write_generation(p, 42);
    CHECK(count(*p.headers, "x-tarry-generation") == 1);
    CHECK(contract::read_generation(p) == 42);

    // Above INT64_MAX it is held at INT64_MAX (the header is signed).
    contract::write_generation(p, std::numeric_limits<std::uint64_t>::max());
    CHECK(contract::read_generation(p) == static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));

    // Other headers are kept.
    wire::basic_properties q = with("keep", "me");
    contract::write_generation(q, 5);
    CHECK(q.headers->find("keep") != nullptr);
}
