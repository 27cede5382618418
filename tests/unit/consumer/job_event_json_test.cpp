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
