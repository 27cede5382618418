// Run claims end to end on the real broker (docs/periodic.md, "Run
// claims"): two copies of one periodic occurrence (what a crash between a
// successor's confirm and its occurrence's ack leaves) reach a consumer;
// each is claimed on the queue's control stream when admitted, and only the
// copy whose claim the stream holds first runs. The other is acked unrun
// (event deduplicated; at admission, unclaimed, when the first claim was
// read by then), and no second successor follows. A claim that is never
// read back, because the broker stopped serving the consumer's subscription
// to the stream without a word, holds its occurrence only until the
// consumer subscribes again.
#include "consumer_fixture.hpp"
#include "control_entries.hpp"
#include "stalled_channel.hpp"

#include "tarry/contract/occurrence_headers.hpp"
#include "tarry/control/control_stream.hpp"
#include "tarry/control/schedule_entry.hpp"
#include "tarry/periodic/occurrence.hpp"

#include <mutex>
#include <set>

using namespace consumer_it;

TEST_CASE("run claims: of two copies of one occurrence, the one claimed first on the stream runs, the other is "
          "acked unrun") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("claims"));
    o.retry = tarry::retry::backoff_policy::fixed(100ms).with_max_attempts(1);
    control_stream_cleanup stream{c, o.queue};
    // The stream exists before the consumer starts: claims are in force.
    ok(tarry::control::async_declare_stream(c.conn, o.queue, false, use_future));
    // The handler notes which copy it runs.
    std::mutex ran_mutex;
    std::vector<std::string> ran_copies;
    running_consumer rc(url, o, [&](const tarry::job& j) {
        const auto* v = j.headers().find(tarry::contract::copy_header);
        const auto* copy = v ? std::get_if<std::string>(&v->value) : nullptr;
        std::lock_guard lock(ran_mutex);
        ran_copies.push_back(copy ? *copy : std::string("?"));
        return tarry::job_outcome::success();
    });
    // Two copies of "tick@<nominal>", due 1.5 s from now (held, so both are
    // claimed long before they fall due).
    const auto nominal = std::chrono::ceil<std::chrono::seconds>(sys::now()) + 2s;
    const std::string nominal_text = tarry::periodic::format_nominal(nominal);
    {
        auto ch = confirm_channel(c);
        for (const std::string copy : {"copy-one", "copy-two"}) {
            amqp::message m("tick");
            tarry::contract::write_occurrence_copy(m.properties, {"tick", nominal_text, "every 60000ms", 1, copy},
                                                   nominal, 1, sys::now());
            ok(ch.async_publish("", o.queue, std::move(m), {}, use_future));
        }
    }
    const std::string id = "tick@" + nominal_text;
    REQUIRE(rc.log.wait_count(kind::run, 1, 10s));
    REQUIRE(rc.log.wait_count(kind::deduplicated, 1, 5s));
    REQUIRE(rc.log.wait_count(kind::scheduled, 1, 5s));
    std::this_thread::sleep_for(500ms);  // nothing more comes
    CHECK(rc.log.count(kind::run) == 1);
    CHECK(rc.log.count(kind::deduplicated) == 1);
    CHECK(rc.log.count(kind::scheduled) == 1);  // one successor: the chain stays single
    const auto run = rc.log.find(kind::run, id);
    REQUIRE(run);
    CHECK(run->at >= run->due);
    CHECK(rc.worker.stats().deduplicated == 1);

    // The stream holds both claims; the first names the copy that ran.
    const auto claims = read_stream_entries<tarry::control::run_claim>(
        c, o.queue, 2, [](const amqp::message& m, std::string& why) -> std::optional<tarry::control::run_claim> {
            auto e = tarry::control::read_schedule_entry(m, why);
            const auto* claim = e ? std::get_if<tarry::control::run_claim>(&*e) : nullptr;
            if (!claim) return std::nullopt;
            return *claim;
        });
    std::vector<std::string> copies;  // of this occurrence, in stream order (the successor claims too)
    for (const auto& cl : claims) {
        if (cl.occurrence_id != id) continue;
        CHECK(cl.schedule_id == "tick");
        CHECK(cl.nominal == nominal_text);
        copies.push_back(cl.copy);
    }
    // Both, when the second copy was admitted before the first claim was
    // read; else the second was acked at admission, unclaimed.
    REQUIRE(!copies.empty());
    for (const auto& copy : copies) CHECK((copy == "copy-one" || copy == "copy-two"));
    std::lock_guard lock(ran_mutex);
    REQUIRE(ran_copies.size() == 1);
    CHECK(ran_copies[0] == copies[0]);  // the first claim's copy ran
    rc.worker.stop();
    cleanup(c, o);
}

TEST_CASE("run claims: a claim never read back (the broker stopped serving the control stream's subscription, "
          "without a word) holds its occurrence only until the consumer subscribes again") {
    TARRY_REQUIRE_BROKER(url);
    TARRY_REQUIRE_BROKER_DIR(dir);
    connected_client c(url);
    auto o = options_for(unique_name("claims-stall"));
    o.prefetch = 50;  // the lanes' channels, told apart from the control stream's (prefetch 1000)
    o.control_catch_up_timeout = 1s;
    control_stream_cleanup stream{c, o.queue};
    ok(tarry::control::async_declare_stream(c.conn, o.queue, false, use_future));
    auto cfg = config_of(url);
    cfg.connection_name = unique_name("claims-stall");
    running_consumer rc(cfg, o);
    const auto until_attached = std::chrono::steady_clock::now() + 10s;
    while (rc.connection_transcript().find("control stream read up to its end") == std::string::npos &&
           std::chrono::steady_clock::now() < until_attached)
        std::this_thread::sleep_for(20ms);
    REQUIRE_MESSAGE(rc.connection_transcript().find("control stream read up to its end") != std::string::npos,
                    rc.connection_transcript());
    {
        amqp_it::suspended_channel stalled(*dir, cfg.connection_name, 1000);
        const auto nominal = std::chrono::ceil<std::chrono::seconds>(sys::now()) + 1s;
        const std::string nominal_text = tarry::periodic::format_nominal(nominal);
        amqp::message m("tick");
        tarry::contract::write_occurrence_copy(m.properties, {"tick", nominal_text, "every 60000ms", 1, "copy-one"},
                                               nominal, 1, sys::now());
        ok(confirm_channel(c).async_publish("", o.queue, std::move(m), {}, use_future));
        // Its claim is made, confirmed and never read on the stalled
        // subscription: the consumer finds that within 5 s (the least it
        // waits) and reads again.
        CHECK_MESSAGE(rc.log.wait_count(kind::run, 1, 15s), rc.connection_transcript());
    }
    CHECK_MESSAGE(rc.connection_transcript().find("delivered nothing within 5000 ms") != std::string::npos,
                  rc.connection_transcript());
    std::this_thread::sleep_for(1s);  // a second run would show by now
    const auto runs = rc.log.of(kind::run);
    std::string seen;
    for (const auto& e : runs) seen += e.id + " attempt " + std::to_string(e.attempt) + "\n";
    CHECK_FALSE(runs.empty());
    // Open (docs/reliability.md, "What the partitions found"): once in a
    // full RabbitMQ 4.0.5 run of this group (2 of 2 alone, and the group
    // again, ran it once) the occurrence ran twice. Said here, with the
    // runs, until it is understood and has a test of its own.
    if (runs.size() != 1)
        MESSAGE("OPEN: the occurrence ran " << runs.size() << " times:\n" << seen << rc.connection_transcript());
    rc.worker.stop();
    cleanup(c, o);
}
