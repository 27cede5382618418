// One due time, one text: /jobs, /metrics, a job event (and so each
// echo_worker line, which is that event's JSON) and epoch_seconds_text
// (what `tarry` prints) write the same time identically, truncated to the
// microsecond (tarry/time/epoch_text.hpp).
#include "http_test_support.hpp"
#include "jobs_json.hpp"
#include "metrics_text.hpp"

#include "tarry/consumer/job_event_json.hpp"
#include "tarry/time/epoch_text.hpp"

#include <doctest/doctest.h>

using namespace std::chrono_literals;

namespace {
// A time whose nanoseconds round up and truncate differently.
const tarry::wall_time due = tarry::wall_time(1767225600s + 250000999ns);
constexpr std::string_view text = "1767225600.250000";
}  // namespace

TEST_CASE("a due time: /jobs, /metrics, job events and epoch_seconds_text print it alike") {
    CHECK(tarry::epoch_seconds_text(due) == text);

    tarry::held_jobs_page page;
    page.jobs = {{"j", due, 1, 0}};
    page.held = 1;
    CHECK(tarry::http_detail::jobs_json(page, {}).find("\"due\":" + std::string(text) + ",") != std::string::npos);

    tarry::consumer_metrics m = http_test::busy_consumer();
    m.next_due = due;
    CHECK(tarry::http_detail::metrics_text(m, "jobs").find("\ntarry_next_due_timestamp_seconds{queue=\"jobs\"} " +
                                                          std::string(text) + "\n") != std::string::npos);

    const tarry::job_event e{tarry::job_event::kind::run, "j", due, due, 1, {}, due, false};
    const std::string json = tarry::to_json(e, "jobs");
    CHECK(json.find("\"due\":" + std::string(text) + ",") != std::string::npos);
    CHECK(json.find("\"at\":" + std::string(text) + ",") != std::string::npos);
    CHECK(json.find("\"next_due\":" + std::string(text) + "}") != std::string::npos);
}

TEST_CASE("epoch time: microseconds truncated toward zero, whole seconds floored and never negative") {
    CHECK(tarry::epoch_microseconds(due) == 1767225600'250000);
    CHECK(tarry::epoch_microseconds(tarry::wall_time(-1999ns)) == -1);
    CHECK(tarry::epoch_seconds_text(tarry::wall_time(-1999ns)) == "-0.000001");
    CHECK(tarry::epoch_seconds_number(due) == 1767225600.25);
    CHECK(tarry::epoch_whole_seconds(due) == 1767225600u);
    CHECK(tarry::epoch_whole_seconds(tarry::wall_time(-1ns)) == 0u);
    CHECK(tarry::epoch_seconds_text(tarry::wall_time::min()).starts_with("-9223372036."));
    CHECK(tarry::epoch_seconds_text(tarry::wall_time::max()) == "9223372036.854775");
}
