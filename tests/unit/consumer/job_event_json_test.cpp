// One JSON encoder of job events: the body of a lifecycle event and an
// echo_worker line. Its fields, their order and number format, optional
// fields only when they apply, every kind by its name, and valid UTF-8
// whatever the bytes; the lifecycle event's message and routing key.
#include "event_publisher.hpp"

#include "tarry/consumer/job_event_json.hpp"

#include <doctest/doctest.h>

using namespace tarry;
using namespace std::chrono_literals;

namespace {
wall_time at_us(std::int64_t us) { return wall_time(std::chrono::microseconds(us)); }
}  // namespace

TEST_CASE("a job event as JSON: the fields in order, times with six decimals") {
    job_event e{job_event::kind::run, "job-1", at_us(1767225600'250000), at_us(1767225600'251234), 2, {}, {}, false};
    CHECK(to_json(e, "emails") ==
          R"({"event":"run","queue":"emails","id":"job-1","due":1767225600.250000,"at":1767225600.251234,"attempt":2})");
    CHECK(to_json(e, "") ==
          R"({"event":"run","id":"job-1","due":1767225600.250000,"at":1767225600.251234,"attempt":2})");
}

TEST_CASE("a job event as JSON: reason, next_due and cancel_requested only when they apply") {
    job_event e{job_event::kind::retry, "j", at_us(1'000000), at_us(2'000000), 1, "boom", at_us(3'500000), true};
    CHECK(to_json(e, "q") ==
          R"({"event":"retry","queue":"q","id":"j","due":1.000000,"at":2.000000,"attempt":1,"reason":"boom",)"
          R"("next_due":3.500000,"cancel_requested":true})");
    e.reason.clear();
    e.next_due.reset();
    e.cancel_requested = false;
    CHECK(to_json(e, "q") == R"({"event":"retry","queue":"q","id":"j","due":1.000000,"at":2.000000,"attempt":1})");
}

TEST_CASE("a job event as JSON: every kind by its own name") {
    // Kinds are numbered from 0, and to_string names each ("unknown" past
    // the last): every kind there is, whatever is added later.
    int kinds = 0;
    for (int k = 0; k < 256; ++k, ++kinds) {
        job_event e{static_cast<job_event::kind>(k), "", {}, {}, 1, {}, {}, false};
        const std::string name = to_string(e.what);
        if (name == "unknown") break;
        CAPTURE(name);
        CHECK_FALSE(name.empty());
        CHECK(to_json(e, "q").starts_with("{\"event\":\"" + name + "\",\"queue\":\"q\""));
        CHECK(detail::event_routing_key(e, "q") == name + ".q");
    }
    CHECK(kinds >= 12);
    CHECK(kinds > static_cast<int>(job_event::kind::skipped));
}

TEST_CASE("a job event as JSON: always valid UTF-8 and escaped") {
    job_event e{job_event::kind::dead, std::string("a\"b\\c\n\xff", 7), {}, {}, 1, "bad \xc3\x28 \xe2\x82\xac", {}, false};
    const auto j = to_json(e, "q\x01");
    CHECK(j.find(R"("queue":"q\u0001")") != std::string::npos);
    CHECK(j.find(R"("id":"a\"b\\c\u000a\ufffd")") != std::string::npos);
    CHECK(j.find("\"reason\":\"bad \\ufffd( \xe2\x82\xac\"") != std::string::npos);
}

TEST_CASE("epoch seconds text: before the epoch too") {
    CHECK(epoch_seconds_text(at_us(0)) == "0.000000");
    CHECK(epoch_seconds_text(at_us(-500000)) == "-0.500000");
    CHECK(epoch_seconds_text(at_us(-1'500000)) == "-1.500000");
    CHECK(epoch_seconds_text(at_us(1767225600'000001)) == "1767225600.000001");
}

TEST_CASE("a lifecycle event's message: JSON body, application/json, transient, timestamp of the event") {
    job_event e{job_event::kind::succeeded, "j", at_us(10'000000), at_us(12'700000), 1, {}, {}, false};
    const auto m = detail::event_message(e, "q");
    CHECK(m.body_view() == to_json(e, "q"));
    CHECK(m.properties.content_type == "application/json");
    CHECK(m.properties.delivery_mode == std::uint8_t{1});
    CHECK(m.properties.timestamp == std::uint64_t{12});
    CHECK_FALSE(m.properties.headers);
}

TEST_CASE("lifecycle events one a message: each its own message, in order") {
    std::vector<job_event> events;
    for (auto k : {job_event::kind::run, job_event::kind::succeeded, job_event::kind::run})
        events.push_back({k, "j", at_us(1'000000), at_us(2'000000), 1, {}, {}, false});
    const auto out = detail::event_messages(events, "q", 1);
    REQUIRE(out.size() == 3);
    CHECK(out[0].routing_key == "run.q");
    CHECK(out[1].routing_key == "succeeded.q");
    CHECK(out[2].routing_key == "run.q");
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(out[i].events == 1);
        CHECK(out[i].msg.body_view() == to_json(events[i], "q"));
    }
}

TEST_CASE("lifecycle events several a message: grouped by kind in order, a JSON array of at most N each") {
    std::vector<job_event> events;
    // run j0, succeeded j0, run j1, succeeded j1, ... and one dead at the end.
    for (int i = 0; i < 5; ++i) {
        const auto id = "j" + std::to_string(i);
        events.push_back({job_event::kind::run, id, at_us(1'000000), at_us(2'000000 + i), 1, {}, {}, false});
        events.push_back({job_event::kind::succeeded, id, at_us(1'000000), at_us(3'000000 + i), 1, {}, {}, false});
    }
    events.push_back({job_event::kind::dead, "x", at_us(1'000000), at_us(9'000000), 3, "rejected: no", {}, false});
    const auto out = detail::event_messages(events, "q", 2);
    // run: 5 -> 2 + 2 + 1; succeeded: 2 + 2 + 1; dead: 1.
    REQUIRE(out.size() == 7);
    const std::vector<std::string> keys{"run.q", "run.q", "run.q", "succeeded.q", "succeeded.q", "succeeded.q", "dead.q"};
    const std::vector<std::size_t> counts{2, 2, 1, 2, 2, 1, 1};
    std::size_t total = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        CAPTURE(i);
        CHECK(out[i].routing_key == keys[i]);
        CHECK(out[i].events == counts[i]);
        CHECK(out[i].msg.properties.content_type == "application/json");
        CHECK(out[i].msg.properties.delivery_mode == std::uint8_t{1});
        total += out[i].events;
    }
    CHECK(total == events.size());
    CHECK(out[0].msg.body_view() == "[" + to_json(events[0], "q") + "," + to_json(events[2], "q") + "]");
    CHECK(out[2].msg.body_view() == "[" + to_json(events[8], "q") + "]");  // an array even of one
    CHECK(out[3].msg.body_view() == "[" + to_json(events[1], "q") + "," + to_json(events[3], "q") + "]");
    CHECK(out[6].msg.body_view() == "[" + to_json(events[10], "q") + "]");
    CHECK(out[3].msg.properties.timestamp == std::uint64_t{3});  // the first event's time
    CHECK(detail::event_messages({}, "q", 2).empty());
}
