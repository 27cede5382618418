// Interop: the poison corpus on the real broker. pika publishes every kind
// of awkward message a client can send and RabbitMQ delivers
// (tests/interop/publish_poison_corpus.py: deep nesting, properties filling
// a frame, invalid UTF-8, perform_job_at as each field type pika has,
// x-delay out of range, an empty and a large body: 100 MiB, 16 MiB on
// RabbitMQ 4, whose largest message is 16 MiB by default where 3.10 takes
// 128 MiB), then one ordinary job.
// Each message either runs exactly once at the due time the contract gives
// (never early), or is dead-lettered with the contract's reason and is in
// the dead-letter queue; nothing is lost, no connection or channel is, and
// the last job runs. (What RabbitMQ refuses to deliver, NaN and infinite
// doubles and a garbage expiration, is tested on the consumer core.)
#include "tarry/time/epoch_text.hpp"
#include "../integration/consumer_fixture.hpp"
#include "python_peer.hpp"

#include <set>
#include <sstream>

using namespace consumer_it;

namespace {

/// What the contract says becomes of one corpus entry.
struct fate {
    enum class due_kind { at_arrival, absolute, after_arrival };
    bool runs = true;
    due_kind due = due_kind::at_arrival;
    std::int64_t us = 0;           ///< absolute: µs since the epoch; after_arrival: µs after it
    std::string reason;            ///< dead: the reason, exactly (or its start, when starts)
    bool starts = false;
    std::string also;              ///< dead: a part the reason also holds
    std::string id;                ///< the message_id published ("corpus-NAME" unless set)
    bool id_readable = true;       ///< false: the properties do not decode, so no id is read
};

fate runs_now() { return {}; }
fate runs_due(fate::due_kind k, std::int64_t us) {
    fate f;
    f.due = k;
    f.us = us;
    return f;
}
fate runs_at(std::int64_t us) { return runs_due(fate::due_kind::absolute, us); }
fate runs_after(std::int64_t us) { return runs_due(fate::due_kind::after_arrival, us); }
fate dead(std::string reason) {
    fate f;
    f.runs = false;
    f.reason = std::move(reason);
    return f;
}
fate dead_starting(std::string prefix, std::string also = {}) {
    fate f = dead(std::move(prefix));
    f.starts = true;
    f.also = std::move(also);
    return f;
}
fate with_id(fate f, std::string id) {
    f.id = std::move(id);
    return f;
}
fate unreadable_id(fate f) {
    f.id_readable = false;
    return f;
}

/// The corpus as the contract reads it (docs/wire-contract.md): due at
/// `at` (whole epoch seconds), consumed with max_delay 60 s and frame_max
/// `frame_max`, its large body `large_mib` MiB.
std::map<std::string, fate> contract_of_corpus(std::int64_t at, std::uint32_t frame_max, int large_mib) {
    const std::int64_t at_us = at * 1'000'000;
    const std::string pja = "invalid-schedule: perform_job_at ";
    const std::string neither = " is neither a number nor an RFC 3339 time";
    const std::string too_deep = "unreadable: properties do not decode: ";
    // The content header frame is full: its properties are frame_max − 20
    // bytes (frame header and end, class, weight, body size).
    const std::string unfit = "unreadable: its properties do not fit one frame (frame_max " +
                              std::to_string(frame_max) + ") in its dead letter (the dead letter's body: " +
                              std::to_string(frame_max - 20) + " bytes of its properties as encoded, then the "
                              "26-byte body)";
    std::map<std::string, fate> c{
        {"deep-32", runs_now()},
        {"deep-33", unreadable_id(dead_starting(too_deep, "nested deeper than 32"))},
        {"deep-arrays-33", unreadable_id(dead_starting(too_deep, "nested deeper than 32"))},
        {"frame-max-now", runs_now()},
        {"frame-max-held", runs_at(at_us)},
        {"frame-max-bad-schedule", dead(unfit)},
        {"utf8-content-type", runs_now()},
        {"utf8-message-id", with_id(runs_now(), "corpus-utf8-message-id-\xc3\x28\xff")},
        {"utf8-header-name", runs_now()},
        {"utf8-long-string", runs_now()},
        {"utf8-perform-job-at", dead(pja + "\"\\xff\\xfe2026\"" + neither)},
        {"utf8-message-id-dead", with_id(dead(pja + "\"garbage\"" + neither), "corpus-dead-\xff")},
        {"pja-bool", dead(pja + "is a boolean (true), not a number")},
        {"pja-int32", runs_at(at_us)},
        {"pja-int64", runs_at(at_us)},
        {"pja-int64-max", dead_starting(pja + "9223372036854775807 is after the latest supported time, ")},
        {"pja-negative", dead(pja + "-5 is negative")},
        {"pja-decimal", runs_at(at_us)},
        {"pja-decimal-1970", runs_at(1'500'000)},
        {"pja-decimal-scale-31", dead(pja + "is a decimal with scale 31 (at most 30)")},
        {"pja-rfc3339", runs_at(at_us + 250'000)},
        {"pja-number-string", runs_at(at_us + 500'000)},
        {"pja-garbage", dead(pja + "\"next tuesday\"" + neither)},
        {"pja-bytes", dead(pja + "is a byte array, not a number")},
        {"pja-array", dead(pja + "is an array, not a number")},
        {"pja-timestamp", runs_at(at_us)},
        {"pja-table", dead(pja + "is a table, not a number")},
        {"pja-void", dead(pja + "is void, not a number")},
        {"xd-negative", dead("invalid-schedule: x-delay -1000 is negative")},
        {"xd-int64-max", dead("invalid-schedule: x-delay 9223372036854775807 ms is over 100 years")},
        {"xd-beyond-int64", dead("invalid-schedule: x-delay \"99999999999999999999999\" ms is over 100 years")},
        {"xd-over-max-delay", dead("delay-exceeds-max: due in 120000 ms, max 60000 ms (x-delay 120000)")},
        {"xd-string", runs_after(1'000'000)},
        {"xd-garbage", dead("invalid-schedule: x-delay \"abc\" is not a number")},
        {"xd-decimal", runs_after(1'500'500)},
        {"body-empty", runs_now()},
        {"body-" + std::to_string(large_mib) + "mib", runs_now()},
        {"last", runs_now()},
    };
    for (auto& [name, f] : c)
        if (f.id.empty()) f.id = "corpus-" + name;
    return c;
}

/// When one entry was published: just before, and at its confirm (µs).
struct sent_window {
    std::int64_t sent = 0;
    std::int64_t confirmed = 0;
};

bool reason_fits(const fate& f, const std::string& reason) {
    const bool head = f.starts ? reason.starts_with(f.reason) : reason == f.reason;
    return head && reason.find(f.also) != std::string::npos;
}

}  // namespace

TEST_CASE("the poison corpus from pika: each message runs per the contract or is dead-lettered with its reason "
          "(its large body 100 MiB, 16 MiB on RabbitMQ 4: its largest message by default)") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("corpus"));
    o.max_delay = 60s;
    const auto cfg = config_of(url);
    std::mutex bodies_mutex;
    std::map<std::string, std::string> body_of;  // message_id -> what the handler saw (guarded)
    running_consumer rc(cfg, o, [&](const tarry::job& j) {
        std::lock_guard lock(bodies_mutex);
        body_of[std::string(j.id())] = std::string(j.body());
        return tarry::job_outcome::success();
    });

    // Due in 2 to 3 s: long enough to be held, short enough for a quick test.
    const auto at = std::chrono::duration_cast<std::chrono::seconds>(sys::now().time_since_epoch()).count() + 3;
    const int large_mib = broker_major(c) >= 4 ? 16 : 100;
    auto r = tarry_test::run_python("publish_poison_corpus.py",
                                    {"--url", url, "--queue", o.queue, "--at", std::to_string(at), "--large-body-mib",
                                     std::to_string(large_mib)},
                                    60s);
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);

    std::istringstream out(r.out);
    std::string word;
    std::uint32_t frame_max = 0;
    REQUIRE(static_cast<bool>(out >> word >> frame_max));
    REQUIRE(word == "frame_max");
    CHECK(frame_max == cfg.frame_max);  // the consumer's frame is as large as pika's
    std::map<std::string, sent_window> published;
    std::string name;
    sent_window w;
    while (out >> name >> w.sent >> w.confirmed) published[name] = w;

    const auto corpus = contract_of_corpus(at, frame_max, large_mib);
    std::set<std::string> expected_names, published_names;
    std::size_t expected_runs = 0;
    for (const auto& [n, f] : corpus) {
        expected_names.insert(n);
        expected_runs += f.runs ? 1 : 0;
    }
    for (const auto& [n, _] : published) published_names.insert(n);
    REQUIRE(published_names == expected_names);  // the script and this test name the same corpus
    const std::size_t expected_dead = corpus.size() - expected_runs;

    // Every message accounted for: ran and succeeded, or dead-lettered.
    const bool settled = rc.log.wait_until(
        [&](const std::vector<job_event>& es) {
            const auto n = std::count_if(es.begin(), es.end(), [](const job_event& e) {
                return e.what == kind::succeeded || e.what == kind::dead;
            });
            return static_cast<std::size_t>(n) >= corpus.size();
        },
        30s);
    CHECK_MESSAGE(settled, rc.connection_transcript());

    for (const auto& [n, f] : corpus) {
        CAPTURE(n);
        const auto& when = published[n];
        const auto runs = rc.log.of(kind::run);
        const auto mine = std::count_if(runs.begin(), runs.end(), [&](const job_event& e) { return e.id == f.id; });
        if (!f.runs) {
            CHECK(mine == 0);  // never run
            if (!f.id_readable) continue;  // its dead letter is matched by body below
            const auto d = rc.log.find(kind::dead, f.id);
            REQUIRE_MESSAGE(d, "not dead-lettered");
            CHECK_MESSAGE(reason_fits(f, d->reason), d->reason);
            continue;
        }
        CHECK(mine == 1);  // exactly once
        const auto run = rc.log.find(kind::run, f.id);
        REQUIRE_MESSAGE(run, "did not run");
        CHECK(rc.log.find(kind::succeeded, f.id));
        CHECK_FALSE(rc.log.find(kind::dead, f.id));
        CHECK(run->attempt == 1);
        const auto due = tarry::epoch_microseconds(run->due);
        CAPTURE(due);
        CHECK(tarry::epoch_microseconds(run->at) >= due);  // never early
        switch (f.due) {
            case fate::due_kind::absolute: CHECK(due == f.us); break;
            case fate::due_kind::at_arrival:
            case fate::due_kind::after_arrival:
                // Arrival is after the publish began, and soon after its confirm.
                CHECK(due >= when.sent + f.us);
                CHECK(due <= when.confirmed + f.us + 2'000'000);
                break;
        }
    }
    {
        std::lock_guard lock(bodies_mutex);
        CHECK(body_of["corpus-body-empty"].empty());
        const auto& big = body_of["corpus-body-" + std::to_string(large_mib) + "mib"];
        CHECK(big.size() == static_cast<std::size_t>(large_mib) << 20);
        CHECK(std::all_of(big.begin(), big.end(), [](char ch) { return ch == 'b'; }));
        CHECK(body_of[corpus.at("utf8-message-id").id] == "job utf8-message-id");
        body_of.clear();
    }

    // Nothing else happened, and consuming went on undisturbed.
    CHECK(rc.log.count(kind::run) == expected_runs);
    CHECK(rc.log.count(kind::dead) == expected_dead);
    CHECK(rc.log.count(kind::failed) == 0);
    CHECK(rc.log.count(kind::parked) == 0);
    CHECK(rc.log.count(kind::requeued) == 0);
    const auto stats = rc.worker.stats();
    CHECK(stats.received == corpus.size());
    CHECK(stats.dead_lettered == expected_dead);
    CHECK(stats.channel_losses == 0);
    CHECK_MESSAGE(rc.connections_lost() == 0, rc.connection_transcript());
    rc.worker.stop();

    // The dead-letter queue holds each dead letter once, with the reason its
    // event gave; an unreadable one carries its properties (its id among
    // them) in its body.
    const auto dead_events = rc.log.of(kind::dead);
    auto letters = dead_letters(c, o);
    CHECK(letters.size() == expected_dead);
    for (const auto& [n, f] : corpus) {
        if (f.runs) continue;
        CAPTURE(n);
        const auto letter = std::find_if(letters.begin(), letters.end(), [&](const amqp::message& m) {
            if (f.id_readable) return m.properties.message_id == f.id;
            // Its raw properties hold the message_id as a short string.
            const std::string id_field = std::string(1, static_cast<char>(f.id.size())) + f.id;
            return !m.properties.message_id && m.body_view().find(id_field) != std::string_view::npos;
        });
        REQUIRE_MESSAGE(letter != letters.end(), "not in the dead-letter queue");
        const auto reason = reason_of(*letter);
        CHECK_MESSAGE(reason_fits(f, reason), reason);
        const auto events = std::count_if(dead_events.begin(), dead_events.end(), [&](const job_event& e) {
            return e.reason == reason && e.id == (f.id_readable ? f.id : std::string());
        });
        CHECK(events == 1);
        letters.erase(letter);
    }
    CHECK(letters.empty());
    CHECK(value_of(c.open_channel().async_declare_queue(passive_queue(o.queue), use_future)).message_count == 0);
    cleanup(c, o);
}
