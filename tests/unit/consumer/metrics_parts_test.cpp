// The parts behind consumer::metrics(), health() and held_jobs(), one at a
// time: the lock-free histogram, the reason labels, the window of unsettled
// deliveries, the held jobs' cursor, the ring of recent dead letters, the
// health from connection events, and a packed message's message_id.
#include "core/duration_recorder.hpp"
#include "core/reason_labels.hpp"
#include "core/unsettled_window.hpp"
#include "health_state.hpp"
#include "held_jobs_cursor.hpp"
#include "packed_message.hpp"
#include "recent_dead_letters.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <thread>
#include <vector>

using namespace tarry;
using namespace tarry::detail;
using namespace std::chrono_literals;

TEST_CASE("histogram buckets: 100 us to 60 s for lateness, 1 ms to 10 min for handlers, ascending") {
    const auto late = start_lateness_bounds();
    REQUIRE(late.size() == 18);
    CHECK(late.front() == doctest::Approx(0.0001));
    CHECK(late.back() == 60);
    CHECK(std::is_sorted(late.begin(), late.end()));
    CHECK(std::adjacent_find(late.begin(), late.end()) == late.end());
    const auto run = handler_duration_bounds();
    CHECK(run.front() == doctest::Approx(0.001));
    CHECK(run.back() == 600);
    CHECK(std::is_sorted(run.begin(), run.end()));
    CHECK(std::adjacent_find(run.begin(), run.end()) == run.end());
}

TEST_CASE("duration_recorder: a value on a bound counts in that bucket, above every bound in the last") {
    duration_recorder r(start_lateness_bounds());
    r.observe(100us);                // == 0.0001: bucket 0
    r.observe(101us);                // bucket 1 (<= 0.00025)
    r.observe(250us);                // == 0.00025: bucket 1
    r.observe(-5ms);                 // a negative duration counts as 0: bucket 0
    r.observe(61s);                  // above 60 s: the last
    r.observe(std::chrono::hours(48));  // counted whole in its bucket, at most 24 h in the sum
    const auto h = r.snapshot();
    REQUIRE(h.counts.size() == h.bounds.size() + 1);
    CHECK(h.counts[0] == 2);
    CHECK(h.counts[1] == 2);
    CHECK(h.counts.back() == 2);
    CHECK(h.count == 6);
    CHECK(h.count == std::accumulate(h.counts.begin(), h.counts.end(), std::uint64_t{0}));
    CHECK(h.sum_seconds == doctest::Approx(0.0001 + 0.000101 + 0.00025 + 61 + 24 * 3600.0));
}

TEST_CASE("duration_recorder: observations from several threads are all counted") {
    duration_recorder r(handler_duration_bounds());
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&r, t] {
            for (int i = 0; i < 10000; ++i) r.observe(std::chrono::milliseconds(t * 100 + i % 7));
        });
    for (auto& t : ts) t.join();
    const auto h = r.snapshot();
    CHECK(h.count == 40000);
}

TEST_CASE("reason labels: the part before the first ':'; any other reason counts as 'other', never lost") {
    CHECK(dead_letter_reasons[dead_letter_label("invalid-schedule: perform_job_at 'x' is ...")] == "invalid-schedule");
    CHECK(dead_letter_reasons[dead_letter_label("expired-before-due: expires ...")] == "expired-before-due");
    CHECK(dead_letter_reasons[dead_letter_label("attempts-exhausted: boom (max attempts (3) reached)")] ==
          "attempts-exhausted");
    CHECK(dead_letter_reasons[dead_letter_label("rejected")] == "rejected");  // no ':' at all
    CHECK(dead_letter_reasons[dead_letter_label("something-new: x")] == "other");
    CHECK(dead_letter_reasons[dead_letter_label("")] == "other");
    CHECK(dead_letter_reasons[dead_letter_label("unreadable:")] == "unreadable");
    for (std::size_t i = 0; i < requeue_reasons.size(); ++i) CHECK(requeue_label(requeue_reasons[i]) == i);
    CHECK(requeue_reasons[requeue_label("because")] == "other");
    CHECK(dead_letter_reasons.back() == "other");
}

TEST_CASE("unsettled_window: the oldest unsettled delivery, across chunks, settled in any order") {
    unsettled_window w;
    CHECK_FALSE(w.oldest());
    for (std::uint64_t tag = 1; tag <= 300; ++tag) w.delivered(tag, static_cast<std::int64_t>(tag) * 10);
    CHECK(w.oldest() == 10);
    w.settled(2);
    CHECK(w.oldest() == 10);
    w.settled(1);
    CHECK(w.oldest() == 30);
    for (std::uint64_t tag = 3; tag <= 200; ++tag) w.settled(tag);  // whole chunks freed
    CHECK(w.oldest() == 2010);
    w.settled(201);
    w.settled(201);    // twice: nothing more
    w.settled(5000);   // never delivered: nothing
    CHECK(w.oldest() == 2020);
    for (std::uint64_t tag = 202; tag <= 300; ++tag) w.settled(tag);
    CHECK_FALSE(w.oldest());
    w.delivered(301, 3010);  // the same chunk as the last ones
    CHECK(w.oldest() == 3010);
    w.clear();
    CHECK_FALSE(w.oldest());
    w.delivered(1, 5);  // a new incarnation starts at 1 again
    CHECK(w.oldest() == 5);
}

TEST_CASE("unsettled_window: one stuck delivery among a million settled ones") {
    unsettled_window w;
    w.delivered(1, 1);
    for (std::uint64_t tag = 2; tag <= 1000000; ++tag) {
        w.delivered(tag, static_cast<std::int64_t>(tag));
        w.settled(tag);
    }
    CHECK(w.oldest() == 1);
    w.settled(1);
    CHECK_FALSE(w.oldest());
}

TEST_CASE("unsettled_window: a delivery in a new chunk after every earlier one was settled") {
    // Tags 1..63 fill the first chunk and are all settled, so that chunk
    // stays, empty, as the newest; tag 64 starts the next one.
    unsettled_window w;
    for (std::uint64_t tag = 1; tag <= 63; ++tag) w.delivered(tag, static_cast<std::int64_t>(tag));
    for (std::uint64_t tag = 1; tag <= 63; ++tag) w.settled(tag);
    CHECK_FALSE(w.oldest());
    w.delivered(64, 640);
    CHECK(w.oldest() == 640);
    w.delivered(200, 2000);  // chunks skipped with nothing in them
    w.settled(64);
    CHECK(w.oldest() == 2000);
    w.settled(200);
    CHECK_FALSE(w.oldest());
    w.delivered(1000, 7);
    CHECK(w.oldest() == 7);
}

TEST_CASE("held jobs cursor: round trip, and what is no cursor does not decode") {
    for (const queue_place& p : {queue_place{true, 0, 0}, queue_place{true, 0, 123456789},
                                 queue_place{false, -1700000000000000000, 7}, queue_place{false, 42, ~0ull}}) {
        const auto text = encode_cursor(p);
        const auto back = decode_cursor(text);
        REQUIRE(back);
        CHECK(*back == p);
    }
    for (const char* junk : {"", "r", "x", ".", "1.", ".1", "r1.2", "zz.1", "1.2.3", "12345678901234567.1", "1 .2",
                             "+1.2", "-1.2"})
        CHECK_FALSE(decode_cursor(junk));
}

TEST_CASE("recent dead letters: the latest 20, newest first") {
    recent_dead_letters ring;
    CHECK(ring.newest_first().empty());
    for (int i = 1; i <= 3; ++i) ring.add({"id-" + std::to_string(i), "rejected: " + std::to_string(i), {}});
    auto three = ring.newest_first();
    REQUIRE(three.size() == 3);
    CHECK(three[0].id == "id-3");
    CHECK(three[2].id == "id-1");
    for (int i = 4; i <= 45; ++i) ring.add({"id-" + std::to_string(i), "rejected", {}});
    auto kept = ring.newest_first();
    REQUIRE(kept.size() == recent_dead_letters_kept);
    CHECK(kept.front().id == "id-45");
    CHECK(kept.back().id == "id-26");
}

namespace {
connection_event ev(connection_event::kind k, bool copies, std::string detail = {}) {
    return {k, copies, std::move(detail), {}, 0};
}
}  // namespace

TEST_CASE("health: not started, ready once both connections are open and a lane consumes, stopping, stopped") {
    using kind = connection_event::kind;
    health_state s;
    auto h = s.health(true);
    CHECK_FALSE(h.ready());
    CHECK(h.reason == "not started");
    s.set(health_state::life::running);
    h = s.health(false);
    CHECK_FALSE(h.ready());
    CHECK(h.reason == "consuming connection not open yet; copies connection not open yet");
    s.event(ev(kind::connected, true));
    s.event(ev(kind::connected, false));
    h = s.health(false);
    CHECK(h.copies_open);
    CHECK_FALSE(h.consuming);
    CHECK(h.reason == "not consuming yet");
    s.event(ev(kind::subscribe_failed, false, "declaring queue 'jobs': 406 PRECONDITION_FAILED"));
    CHECK(s.health(false).reason.find("not consuming: subscribe failed") == 0);
    s.event(ev(kind::consuming, false));
    h = s.health(true);
    CHECK(h.ready());
    CHECK(h.reason.empty());
    s.set(health_state::life::stopping);
    CHECK(s.health(true).reason == "stopping");
    CHECK_FALSE(s.health(true).ready());
    s.set(health_state::life::stopped);
    CHECK(s.health(true).reason == "stopped");
}

TEST_CASE("health: a lost consuming connection and a blocked copies connection, in connection_event's words") {
    using kind = connection_event::kind;
    health_state s;
    s.set(health_state::life::running);
    s.event(ev(kind::connected, false));
    s.event(ev(kind::connected, true));
    s.event(ev(kind::lost, false, "connection reset by peer"));
    s.event(ev(kind::reconnecting, false));
    auto h = s.health(true);
    CHECK_FALSE(h.consuming);
    CHECK(h.copies_open);
    CHECK(h.reason == "consuming connection lost: connection reset by peer");
    s.event(ev(kind::connected, false));
    s.event(ev(kind::blocked, true, "low on memory"));
    h = s.health(true);
    CHECK(h.consuming);
    CHECK_FALSE(h.copies_open);
    CHECK(h.reason == "copies connection blocked by the broker: low on memory");
    s.event(ev(kind::unblocked, true));
    CHECK(s.health(true).ready());
    s.event(ev(kind::closed, true, "CONNECTION_FORCED"));
    CHECK(s.health(true).reason == "copies connection closed: CONNECTION_FORCED");
}

TEST_CASE("packed message_id: read past every property before it, decoding none") {
    amqp::message m;
    m.properties.content_type = "application/json";
    m.properties.content_encoding = "gzip";
    m.properties.headers.emplace();
    m.properties.headers->set("perform_job_at", 1.5);
    m.properties.headers->set("nested", amqp::field_table{});
    m.properties.delivery_mode = 2;
    m.properties.priority = 3;
    m.properties.correlation_id = "c";
    m.properties.reply_to = "r";
    m.properties.expiration = "60000";
    m.properties.message_id = "the-id";
    m.properties.timestamp = 99;
    m.properties.app_id = "app";
    m.body = {'b'};
    CHECK(packed_message::pack(m).message_id() == "the-id");
    m.properties.message_id.reset();
    CHECK_FALSE(packed_message::pack(m).message_id());
    amqp::message bare;
    bare.properties.message_id = "";
    CHECK(packed_message::pack(bare).message_id() == "");
    amqp::message kept;
    kept.properties.message_id = "k";
    CHECK(packed_message::keep(std::move(kept)).message_id() == "k");
    CHECK_FALSE(packed_message().message_id());
}
