// Schedule upserts, removals and run claims as control-stream entries, and
// the occurrences made from a schedule's template.
#include "tarry/control/schedule_entry.hpp"

#include "tarry/contract/occurrence_headers.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/control/control_stream.hpp"
#include "tarry/control/tombstone.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

using namespace std::chrono_literals;
namespace amqp = tarry::amqp;
namespace contract = tarry::contract;
namespace control = tarry::control;
namespace wire = tarry::amqp::wire;
using tarry::wall_time;

namespace {

wall_time at_s(std::int64_t s) { return wall_time(std::chrono::seconds(s)); }

constexpr std::uint64_t generation = 1795613756873786u;

// What a user hands over as the schedule's job: a body, some properties,
// a header of its own, and the properties an entry replaces.
amqp::message sample_template() {
    amqp::message m("{\"report\":\"daily\"}");
    m.properties.content_type = std::string("application/json");
    m.properties.correlation_id = std::string("c-1");
    m.properties.priority = 5;
    m.properties.headers = wire::field_table{};
    m.properties.headers->set("customer", std::string("acme"));
    m.properties.headers->set("retries", std::int64_t{3});
    return m;
}

control::schedule_upsert sample_upsert() {
    return {"nightly-report", generation, "cron 0 3 * * * Europe/Paris", sample_template(), at_s(1795613756)};
}

control::schedule_removal sample_removal() { return {"nightly-report", generation, at_s(1795613756)}; }

control::run_claim sample_claim() {
    return {"nightly-report@1795613700", "nightly-report", "1795613700", "0123456789abcdef0123456789abcdef",
            at_s(1795613756)};
}

contract::occurrence_headers sample_occurrence() {
    return {"nightly-report", "1795613700", "cron 0 3 * * * Europe/Paris", 1, "0123456789abcdef0123456789abcdef"};
}

std::size_t count_named(const wire::field_table& t, std::string_view name) {
    std::size_t n = 0;
    for (const auto& e : t.entries()) n += e.name == name ? 1 : 0;
    return n;
}

const std::string* text(const amqp::message& m, std::string_view name) {
    const auto* v = m.properties.headers ? m.properties.headers->find(name) : nullptr;
    return v ? v->get_if<std::string>() : nullptr;
}

template <class T>
std::optional<T> read_as(const amqp::message& m, std::string& why) {
    const auto e = control::read_schedule_entry(m, why);
    if (!e || !std::holds_alternative<T>(*e)) return std::nullopt;
    return std::get<T>(*e);
}

// The due time a consumer reads from an occurrence.
std::optional<wall_time> due_of(const amqp::message& m) {
    const auto r = contract::read_schedule(m.properties, at_s(1795000000), {});
    const auto* s = std::get_if<contract::schedule>(&r);
    if (s == nullptr || s->source != contract::schedule_source::perform_job_at) return std::nullopt;
    return s->due;
}

}  // namespace

// ---- upserts ---------------------------------------------------------------

TEST_CASE("an upsert's entry: type, message_id, timestamp, generation, spec, persistent, the template's body") {
    const auto m = control::to_entry(sample_upsert());
    CHECK(m.properties.type == std::string("tarry.schedule"));
    CHECK(m.properties.message_id == std::string("nightly-report"));
    CHECK(m.properties.timestamp == 1795613756u);
    CHECK(m.properties.delivery_mode == 2);
    CHECK(contract::read_generation(m.properties) == generation);
    REQUIRE(text(m, "x-tarry-spec"));
    CHECK(*text(m, "x-tarry-spec") == "cron 0 3 * * * Europe/Paris");
    CHECK(m.body == sample_template().body);
    CHECK(m.properties.content_type == std::string("application/json"));
    REQUIRE(text(m, "customer"));
    CHECK(*text(m, "customer") == "acme");
}

TEST_CASE("an upsert reads back as written; its time to the whole second") {
    std::string why = "stale";
    auto u = sample_upsert();
    u.written += 700ms;
    const auto back = read_as<control::schedule_upsert>(control::to_entry(u), why);
    REQUIRE(back);
    CHECK(why.empty());
    auto expected = sample_upsert();
    expected.template_message.properties.delivery_mode = 2;  // every occurrence is persistent
    CHECK(*back == expected);
}

TEST_CASE("an upsert's template reads back without the entry's type, message_id and timestamp, persistent") {
    auto u = sample_upsert();
    u.template_message.properties.type = std::string("report.job");
    u.template_message.properties.message_id = std::string("template-1");
    u.template_message.properties.timestamp = 42;
    u.template_message.properties.delivery_mode = 1;
    std::string why;
    const auto back = read_as<control::schedule_upsert>(control::to_entry(u), why);
    REQUIRE(back);
    const auto& p = back->template_message.properties;
    CHECK_FALSE(p.type);
    CHECK_FALSE(p.message_id);
    CHECK_FALSE(p.timestamp);
    CHECK(p.delivery_mode == 2);
    CHECK(p.content_type == std::string("application/json"));
    CHECK(p.correlation_id == std::string("c-1"));
    CHECK(p.priority == 5);
    CHECK(p.headers == sample_template().properties.headers);
    CHECK(back->template_message.body == sample_template().body);
}

TEST_CASE("a template's occurrence headers stay out of the entry; its own headers stay in") {
    auto u = sample_upsert();
    auto& h = *u.template_message.properties.headers;
    h.set("x-tarry-schedule", std::string("old-schedule"));
    h.set("x-tarry-nominal", std::string("1700000000"));
    h.set("x-tarry-spec", std::string("every 5m"));
    h.set("x-tarry-occurrence", std::int64_t{12});
    h.set("x-tarry-copy", std::string("ffffffffffffffffffffffffffffffff"));
    h.set("x-tarry-generation", std::int64_t{5});
    const auto m = control::to_entry(u);
    REQUIRE(m.properties.headers);
    const auto& eh = *m.properties.headers;
    CHECK(eh.find("x-tarry-schedule") == nullptr);
    CHECK(eh.find("x-tarry-nominal") == nullptr);
    CHECK(eh.find("x-tarry-occurrence") == nullptr);
    CHECK(eh.find("x-tarry-copy") == nullptr);
    CHECK(count_named(eh, "x-tarry-spec") == 1);
    CHECK(*text(m, "x-tarry-spec") == "cron 0 3 * * * Europe/Paris");
    CHECK(count_named(eh, "x-tarry-generation") == 1);
    CHECK(contract::read_generation(m.properties) == generation);
    CHECK(*text(m, "customer") == "acme");

    std::string why;
    const auto back = read_as<control::schedule_upsert>(m, why);
    REQUIRE(back);
    CHECK(back->spec == "cron 0 3 * * * Europe/Paris");
    CHECK(back->generation == generation);
    CHECK(back->template_message.properties.headers == sample_template().properties.headers);
}

TEST_CASE("a template without headers reads back without headers, an empty table included") {
    std::string why;
    SUBCASE("none") {
        auto u = sample_upsert();
        u.template_message.properties.headers.reset();
        const auto back = read_as<control::schedule_upsert>(control::to_entry(u), why);
        REQUIRE(back);
        CHECK_FALSE(back->template_message.properties.headers);
    }
    SUBCASE("an empty table") {
        auto u = sample_upsert();
        u.template_message.properties.headers = wire::field_table{};
        const auto back = read_as<control::schedule_upsert>(control::to_entry(u), why);
        REQUIRE(back);
        CHECK_FALSE(back->template_message.properties.headers);
    }
    SUBCASE("only occurrence headers") {
        auto u = sample_upsert();
        u.template_message.properties.headers = wire::field_table{};
        contract::write_occurrence(u.template_message.properties, sample_occurrence());
        const auto back = read_as<control::schedule_upsert>(control::to_entry(u), why);
        REQUIRE(back);
        CHECK_FALSE(back->template_message.properties.headers);
    }
}

// ---- removals and claims -----------------------------------------------------

TEST_CASE("a removal's entry: type, message_id, timestamp, generation, persistent, empty body") {
    const auto m = control::to_entry(sample_removal());
    CHECK(m.body.empty());
    CHECK(m.properties.type == std::string("tarry.unschedule"));
    CHECK(m.properties.message_id == std::string("nightly-report"));
    CHECK(m.properties.timestamp == 1795613756u);
    CHECK(m.properties.delivery_mode == 2);
    CHECK(contract::read_generation(m.properties) == generation);
}

TEST_CASE("a removal reads back as written; its time to the whole second") {
    std::string why = "stale";
    auto r = sample_removal();
    r.written += 999ms;
    const auto back = read_as<control::schedule_removal>(control::to_entry(r), why);
    REQUIRE(back);
    CHECK(why.empty());
    CHECK(*back == sample_removal());
}

TEST_CASE("a claim's entry: type, the occurrence id, timestamp, whose occurrence, which copy, persistent") {
    const auto m = control::to_entry(sample_claim());
    CHECK(m.body.empty());
    CHECK(m.properties.type == std::string("tarry.claim"));
    CHECK(m.properties.message_id == std::string("nightly-report@1795613700"));
    CHECK(m.properties.timestamp == 1795613756u);
    CHECK(m.properties.delivery_mode == 2);
    REQUIRE(text(m, "x-tarry-schedule"));
    CHECK(*text(m, "x-tarry-schedule") == "nightly-report");
    REQUIRE(text(m, "x-tarry-nominal"));
    CHECK(*text(m, "x-tarry-nominal") == "1795613700");
    REQUIRE(text(m, "x-tarry-copy"));
    CHECK(*text(m, "x-tarry-copy") == "0123456789abcdef0123456789abcdef");
}

TEST_CASE("a claim reads back as written; its time to the whole second") {
    std::string why = "stale";
    auto c = sample_claim();
    c.written += 1ms;
    const auto back = read_as<control::run_claim>(control::to_entry(c), why);
    REQUIRE(back);
    CHECK(why.empty());
    CHECK(*back == sample_claim());
}

TEST_CASE("a timestamp past the clock's range reads as a time the clock holds") {
    std::vector<amqp::message> entries = {control::to_entry(sample_upsert()), control::to_entry(sample_removal()),
                                          control::to_entry(sample_claim())};
    for (auto& m : entries) {
        CAPTURE(*m.properties.type);
        m.properties.timestamp = std::numeric_limits<std::uint64_t>::max();
        std::string why;
        const auto back = control::read_schedule_entry(m, why);
        REQUIRE(back);
        const auto written = std::visit([](const auto& e) { return e.written; }, *back);
        CHECK(written > at_s(1795613756));
        CHECK(written <= wall_time::max());
    }
}

// ---- what is not a schedule entry --------------------------------------------

TEST_CASE("an entry of another type is no schedule entry and no error: the reader skips it") {
    std::string why = "stale";
    CHECK_FALSE(control::read_schedule_entry(control::to_message(control::tombstone{"job-1", generation, at_s(1)}), why));
    CHECK(why.empty());

    why = "stale";
    CHECK_FALSE(control::read_schedule_entry(control::marker_message("list-1-2"), why));
    CHECK(why.empty());

    why = "stale";
    auto m = control::to_entry(sample_upsert());
    m.properties.type.reset();
    CHECK_FALSE(control::read_schedule_entry(m, why));
    CHECK(why.empty());

    why = "stale";
    m.properties.type = std::string("tarry.schedules");
    CHECK_FALSE(control::read_schedule_entry(m, why));
    CHECK(why.empty());

    why = "stale";
    const auto occurrence = control::occurrence_message(sample_template(), sample_occurrence(), at_s(1795613700),
                                                        generation, at_s(1795613756));
    CHECK_FALSE(control::read_schedule_entry(occurrence, why));
    CHECK(why.empty());
}

TEST_CASE("a schedule entry without a message_id or a timestamp is refused with what is wrong") {
    for (const auto& entry : {control::to_entry(sample_upsert()), control::to_entry(sample_removal()),
                              control::to_entry(sample_claim())}) {
        CAPTURE(*entry.properties.type);
        std::string why;
        auto m = entry;
        m.properties.message_id.reset();
        CHECK_FALSE(control::read_schedule_entry(m, why));
        CHECK(why.find("message_id") != std::string::npos);

        m = entry;
        m.properties.message_id = std::string();
        CHECK_FALSE(control::read_schedule_entry(m, why));
        CHECK(why.find("message_id") != std::string::npos);

        m = entry;
        m.properties.timestamp.reset();
        CHECK_FALSE(control::read_schedule_entry(m, why));
        CHECK(why.find("timestamp") != std::string::npos);
    }
}

TEST_CASE("an upsert or a removal without a positive generation is refused with what is wrong") {
    for (const auto& entry : {control::to_entry(sample_upsert()), control::to_entry(sample_removal())}) {
        CAPTURE(*entry.properties.type);
        std::string why;
        for (const wire::field_value& v : {wire::field_value(std::int64_t{0}), wire::field_value(std::int64_t{-3}),
                                          wire::field_value("17"), wire::field_value(17.0)}) {
            auto m = entry;
            m.properties.headers->set("x-tarry-generation", v);
            CHECK_FALSE(control::read_schedule_entry(m, why));
            CHECK(why.find("x-tarry-generation") != std::string::npos);
        }
        auto m = entry;
        m.properties.headers->erase("x-tarry-generation");
        CHECK_FALSE(control::read_schedule_entry(m, why));
        CHECK(why.find("x-tarry-generation") != std::string::npos);

        m = entry;
        m.properties.headers.reset();
        CHECK_FALSE(control::read_schedule_entry(m, why));
        CHECK(why.find("x-tarry-generation") != std::string::npos);
    }
}

TEST_CASE("an upsert without a spec is refused with what is wrong") {
    std::string why;
    for (const wire::field_value& v : {wire::field_value(std::string()), wire::field_value(std::int64_t{5}),
                                      wire::field_value(wire::byte_array{{'e', 'v'}})}) {
        auto m = control::to_entry(sample_upsert());
        m.properties.headers->set("x-tarry-spec", v);
        CHECK_FALSE(control::read_schedule_entry(m, why));
        CHECK(why.find("x-tarry-spec") != std::string::npos);
    }
    auto m = control::to_entry(sample_upsert());
    m.properties.headers->erase("x-tarry-spec");
    CHECK_FALSE(control::read_schedule_entry(m, why));
    CHECK(why.find("x-tarry-spec") != std::string::npos);
}

TEST_CASE("a claim without whose occurrence it is or which copy runs is refused with what is wrong") {
    for (const std::string_view name : {"x-tarry-schedule", "x-tarry-nominal", "x-tarry-copy"}) {
        CAPTURE(name);
        std::string why;
        auto m = control::to_entry(sample_claim());
        m.properties.headers->erase(name);
        CHECK_FALSE(control::read_schedule_entry(m, why));
        CHECK(why.find(name) != std::string::npos);

        for (const wire::field_value& v : {wire::field_value(std::string()), wire::field_value(std::int64_t{5})}) {
            m = control::to_entry(sample_claim());
            m.properties.headers->set(std::string(name), v);
            CHECK_FALSE(control::read_schedule_entry(m, why));
            CHECK(why.find(name) != std::string::npos);
        }
    }
    std::string why;
    auto m = control::to_entry(sample_claim());
    m.properties.headers.reset();
    CHECK_FALSE(control::read_schedule_entry(m, why));
    CHECK_FALSE(why.empty());
}

TEST_CASE("reading a schedule entry never throws, whatever the message") {
    std::vector<amqp::message> odd;
    for (const std::string_view type : {"tarry.schedule", "tarry.unschedule", "tarry.claim"}) {
        amqp::message bare;
        bare.properties.type = std::string(type);
        odd.push_back(bare);
        bare.properties.message_id = std::string("x");
        odd.push_back(bare);
        bare.properties.timestamp = 0;
        odd.push_back(bare);
        bare.properties.headers = wire::field_table{};
        odd.push_back(bare);
        bare.properties.headers->set("x-tarry-generation", std::int64_t{1});
        odd.push_back(bare);
        bare.properties.headers->set("x-tarry-spec", std::string("every 1m"));
        odd.push_back(bare);
    }
    for (const auto& m : odd) {
        std::string why;
        CHECK_NOTHROW(control::read_schedule_entry(m, why));
    }
}

// ---- occurrences ------------------------------------------------------------------

TEST_CASE("an occurrence from a template: its headers, its id, due at its nominal time, persistent") {
    auto from = sample_template();
    from.properties.type = std::string("report.job");
    from.properties.message_id = std::string("template-1");
    from.properties.timestamp = 42;
    from.properties.delivery_mode = 1;
    from.properties.headers->set("x-delay", std::int64_t{5000});
    const auto now = at_s(1795613000) + 300ms;
    const auto m = control::occurrence_message(from, sample_occurrence(), at_s(1795613700), generation, now);

    CHECK(m.body == from.body);
    CHECK(m.properties.message_id == std::string("nightly-report@1795613700"));
    std::string why;
    const auto o = contract::read_occurrence(m.properties, why);
    REQUIRE(o);
    CHECK(*o == sample_occurrence());
    CHECK(due_of(m) == at_s(1795613700));
    REQUIRE(m.properties.headers);
    CHECK(m.properties.headers->find("x-delay") == nullptr);
    CHECK(contract::read_generation(m.properties) == generation);
    CHECK(m.properties.delivery_mode == 2);
    CHECK_FALSE(m.properties.type);                 // the template's type is not the occurrence's
    CHECK(m.properties.timestamp == 1795613000u);   // `now`, to the whole second
    CHECK(m.properties.content_type == std::string("application/json"));
    CHECK(m.properties.correlation_id == std::string("c-1"));
    CHECK(m.properties.priority == 5);
    REQUIRE(text(m, "customer"));
    CHECK(*text(m, "customer") == "acme");
}

TEST_CASE("a successor from the occurrence before: attempt, reason and death headers gone, headers replaced") {
    auto before = control::occurrence_message(sample_template(), sample_occurrence(), at_s(1795613700), 17,
                                              at_s(1795613000));
    auto& h = *before.properties.headers;
    h.set("x-tarry-attempt", std::int64_t{3});
    h.set("x-tarry-reason", std::string("handler-failed: boom"));
    h.set("x-death", wire::field_array{wire::field_value(wire::field_table{})});
    h.set("x-first-death-queue", std::string("jobs"));
    h.set("x-first-death-reason", std::string("rejected"));
    h.set("x-last-death-queue", std::string("jobs"));
    h.set("x-last-death-reason", std::string("rejected"));
    h.set("x-delay", std::int64_t{1000});

    auto next = sample_occurrence();
    next.nominal = "1795700100.5";
    next.number = 2;
    next.copy = "fedcba9876543210fedcba9876543210";
    const auto nominal = at_s(1795700100) + 500ms;
    const auto m = control::occurrence_message(before, next, nominal, generation, at_s(1795613800));

    REQUIRE(m.properties.headers);
    const auto& mh = *m.properties.headers;
    for (const std::string_view gone : {"x-tarry-attempt", "x-tarry-reason", "x-death", "x-first-death-queue",
                                        "x-first-death-reason", "x-last-death-queue", "x-last-death-reason",
                                        "x-delay"}) {
        CAPTURE(gone);
        CHECK(mh.find(gone) == nullptr);
    }
    CHECK(contract::read_attempt(m.properties) == 1);
    for (const std::string_view once : {"x-tarry-schedule", "x-tarry-nominal", "x-tarry-spec", "x-tarry-occurrence",
                                        "x-tarry-copy", "x-tarry-generation", "perform_job_at"}) {
        CAPTURE(once);
        CHECK(count_named(mh, once) == 1);
    }
    std::string why;
    const auto o = contract::read_occurrence(m.properties, why);
    REQUIRE(o);
    CHECK(*o == next);
    CHECK(m.properties.message_id == std::string("nightly-report@1795700100.5"));
    CHECK(due_of(m) == nominal);
    CHECK(contract::read_generation(m.properties) == generation);
    CHECK(m.properties.timestamp == 1795613800u);  // this one's `now`, not the one before's
    CHECK(m.properties.delivery_mode == 2);
    CHECK(m.body == sample_template().body);
    CHECK(*text(m, "customer") == "acme");
}

TEST_CASE("an occurrence from a message without headers gets them") {
    amqp::message from("ping");
    const auto m = control::occurrence_message(from, sample_occurrence(), at_s(1795613700), generation,
                                               at_s(1795613000));
    std::string why;
    const auto o = contract::read_occurrence(m.properties, why);
    REQUIRE(o);
    CHECK(*o == sample_occurrence());
    CHECK(due_of(m) == at_s(1795613700));
    CHECK(contract::read_generation(m.properties) == generation);
    CHECK(m.properties.delivery_mode == 2);
    CHECK(m.body_view() == "ping");
}
