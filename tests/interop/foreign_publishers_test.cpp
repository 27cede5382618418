// Interop: jobs scheduled by Python services nobody here wrote (Debian's
// pika and py-amqp, through tests/interop/publish_job.py) run in tarry's
// consumer at the due time each encoding says, never early: a py-amqp
// double and timestamp, a pika integer, numeric string, RFC 3339 string and
// x-delay. An unreadable schedule from pika is dead-lettered, not run.
#include "tarry/time/epoch_text.hpp"
#include "../integration/consumer_fixture.hpp"
#include "python_peer.hpp"

#include "tarry/control/control_stream.hpp"
#include "tarry/publisher/publisher.hpp"

#include <cmath>
#include <ctime>

using namespace consumer_it;

namespace {

/// `t` (whole milliseconds) as RFC 3339 in UTC: 2026-11-22T10:00:01.250Z.
std::string rfc3339(sys::time_point t) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
    const std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    char out[80];
    std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms % 1000));
    return out;
}

/// One job published by a Python client.
struct foreign_job {
    std::string id;
    std::string client;  ///< pika | pyamqp
    std::string header;
    std::string type;    ///< double | int | str | timestamp
    /// The value, and the window its due must fall in (microseconds since
    /// the epoch), both computed just before publishing.
    std::function<std::pair<std::string, std::pair<std::int64_t, std::int64_t>>(sys::time_point now)> make;
};

/// Publishes one job with publish_job.py; requires exit 0.
void publish_foreign(const std::string& url, const std::string& queue, const foreign_job& j,
                     const std::string& value) {
    auto r = tarry_test::run_python("publish_job.py", {"--client", j.client, "--url", url, "--queue", queue,
                                                       "--id", j.id, "--header", j.header, "--value", value,
                                                       "--type", j.type},
                                    60s);
    REQUIRE_MESSAGE(r.exit_code == 0, j.id << ": " << r.out << r.err);
    CHECK(r.out == "published " + j.id + "\n");
}

}  // namespace

TEST_CASE("jobs scheduled by pika and py-amqp run at the due time their encoding says, never early") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("foreign"));
    running_consumer rc(url, o);

    using window = std::pair<std::int64_t, std::int64_t>;
    auto exactly = [](std::int64_t us) { return window{us, us}; };
    const std::vector<foreign_job> jobs{
        {"pyamqp-double", "pyamqp", "perform_job_at", "double",
         [&](sys::time_point now) {
             // A fraction: 6 decimals, read back to the microsecond (the
             // double nearest it may sit just either side).
             const auto due = std::chrono::floor<std::chrono::microseconds>(now + 3s) + 123us;
             char v[64];
             std::snprintf(v, sizeof v, "%lld.%06lld", static_cast<long long>(tarry::epoch_microseconds(due) / 1000000),
                           static_cast<long long>(tarry::epoch_microseconds(due) % 1000000));
             return std::pair{std::string(v), window{tarry::epoch_microseconds(due) - 1, tarry::epoch_microseconds(due) + 1}};
         }},
        {"pika-int", "pika", "perform_job_at", "int",
         [&](sys::time_point now) {
             const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count() + 4;
             return std::pair{std::to_string(secs), exactly(secs * 1000000)};
         }},
        {"pika-numeric-string", "pika", "perform_job_at", "str",
         [&](sys::time_point now) {
             const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() +
                             3000;
             char v[64];
             std::snprintf(v, sizeof v, "%lld.%03lld", static_cast<long long>(ms / 1000),
                           static_cast<long long>(ms % 1000));
             return std::pair{std::string(v), exactly(ms * 1000)};
         }},
        {"pika-rfc3339", "pika", "perform_job_at", "str",
         [&](sys::time_point now) {
             const auto due = std::chrono::floor<std::chrono::milliseconds>(now + 3s) + 250ms;
             return std::pair{rfc3339(due), exactly(tarry::epoch_microseconds(due))};
         }},
        {"pyamqp-timestamp", "pyamqp", "perform_job_at", "timestamp",
         [&](sys::time_point now) {
             const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count() + 4;
             return std::pair{std::to_string(secs), exactly(secs * 1000000)};
         }},
        {"pika-x-delay", "pika", "x-delay", "int",
         [&](sys::time_point now) {
             // Counted from arrival (pika sets no timestamp): between this
             // moment and a little after the publish returns (bounded below).
             return std::pair{std::string("2500"), window{tarry::epoch_microseconds(now) + 2'500'000, 0}};
         }},
    };

    std::map<std::string, window> expected;
    for (const auto& j : jobs) {
        auto [value, w] = j.make(sys::now());
        CAPTURE(j.id);
        CAPTURE(value);
        publish_foreign(url, o.queue, j, value);
        if (w.second == 0) w.second = tarry::epoch_microseconds(sys::now()) + 2'500'000 + 500'000;  // x-delay: publish end + slack
        expected[j.id] = w;
    }
    // And one nobody can read: dead-lettered, never run.
    const foreign_job bad{"pika-soon", "pika", "perform_job_at", "str", {}};
    publish_foreign(url, o.queue, bad, "soon");

    REQUIRE(rc.log.wait_count(kind::succeeded, jobs.size(), 30s));
    REQUIRE(rc.log.wait_count(kind::dead, 1, 15s));
    double worst = 0;
    for (const auto& j : jobs) {
        CAPTURE(j.id);
        const auto run = rc.log.find(kind::run, j.id);
        REQUIRE(run);
        const auto due = tarry::epoch_microseconds(run->due);
        const auto at = tarry::epoch_microseconds(run->at);
        const auto [lo, hi] = expected[j.id];
        CAPTURE(due);
        CAPTURE(lo);
        CAPTURE(hi);
        CHECK(due >= lo);
        CHECK(due <= hi);
        CHECK(at >= due);      // never early
        CHECK(at >= lo - 1);   // nor before the due the publisher meant
        CHECK(run->attempt == 1);
        worst = std::max(worst, lateness_ms(*run));
    }
    MESSAGE("worst lateness " << worst << " ms");

    CHECK_FALSE(rc.log.find(kind::run, bad.id));
    const auto dead = rc.log.find(kind::dead, bad.id);
    REQUIRE(dead);
    CHECK_MESSAGE(dead->reason.rfind("invalid-schedule: ", 0) == 0, dead->reason);
    rc.worker.stop();
    const auto letters = dead_letters(c, o);
    REQUIRE(letters.size() == 1);
    CHECK(letters[0].properties.message_id == bad.id);
    CHECK(letters[0].body_view() == "job " + bad.id);
    CHECK_MESSAGE(reason_of(letters[0]).rfind("invalid-schedule: ", 0) == 0, reason_of(letters[0]));
    cleanup(c, o);
}

TEST_CASE("a job pika published (no x-tarry-generation) is cancelled by tarry's publisher: never run") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("foreign-cancel"));
    running_consumer rc(url, o);
    const auto due_s = std::chrono::duration_cast<std::chrono::seconds>(sys::now().time_since_epoch()).count() + 4;
    publish_foreign(url, o.queue, {"pika-cancelled", "pika", "perform_job_at", "int", {}}, std::to_string(due_s));
    publish_foreign(url, o.queue, {"pika-kept", "pika", "perform_job_at", "int", {}}, std::to_string(due_s));
    tarry::publisher pub(c.conn);
    REQUIRE_FALSE(wait(pub.async_cancel(o.queue, "pika-cancelled", use_future)));
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 15s));
    const auto t0 = std::chrono::steady_clock::now();
    while (!rc.log.find(kind::cancelled, "pika-cancelled") && std::chrono::steady_clock::now() - t0 < 5s)
        std::this_thread::sleep_for(20ms);
    CHECK(rc.log.find(kind::cancelled, "pika-cancelled"));
    CHECK_FALSE(rc.log.find(kind::run, "pika-cancelled"));
    CHECK(rc.log.find(kind::run, "pika-kept"));
    rc.worker.stop();
    c.open_channel().async_delete_queue(tarry::control::stream_name(o.queue), {}, use_future).wait_for(10s);
    cleanup(c, o);
}
