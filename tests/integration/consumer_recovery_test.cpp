// Losing the connection: every job held from it is dropped at once (the
// broker redelivers them), the consumer reconnects and resubscribes, and
// each job still runs once, on time. Losing the connection that publishes
// the copies touches nothing held.
#include "consumer_fixture.hpp"
#include "private_broker.hpp"
#include "tcp_relay.hpp"

#include <set>

using namespace consumer_it;

TEST_CASE("connection cut: held jobs are dropped at once, redelivered after the reconnect, each run once") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto direct = config_of(url);
    tarry_test::tcp_relay relay(direct.host, direct.effective_port());
    auto cfg = direct;
    cfg.port = relay.port();
    cfg.reconnect_backoff = tarry::retry::backoff_policy::fixed(200ms);
    auto o = options_for(unique_name("recovery"));
    running_consumer rc(cfg, o);
    auto ch = confirm_channel(c);
    const auto t0 = sys::now();
    for (int i = 0; i < 20; ++i)
        publish_raw(ch, o.queue, "r" + std::to_string(i), {{"perform_job_at", epoch(t0 + 4s)}});
    // Wait until all 20 are held, then cut the socket under the consumer.
    REQUIRE(wait_held(rc, 20));
    relay.cut_all();
    REQUIRE(rc.log.wait_count(kind::dropped, 20, 5s));
    CHECK(rc.worker.stats().held <= 20);  // redeliveries may already be arriving
    REQUIRE(rc.log.wait_count(kind::run, 20, 15s));
    std::set<std::string> ids;
    for (const auto& r : rc.log.of(kind::run)) {
        ids.insert(r.id);
        CHECK(r.at >= r.due);
        CHECK(lateness_ms(r) < 250);
    }
    CHECK(ids.size() == 20);
    std::this_thread::sleep_for(500ms);
    CHECK(rc.log.count(kind::run) == 20);  // none twice
    CHECK(rc.worker.stats().channel_losses >= 1);
    cleanup(c, o);
}

TEST_CASE("the copies connection closed by the broker: it reconnects alone, and retries go on") {
    TARRY_REQUIRE_BROKER(url);
    TARRY_REQUIRE_BROKER_DIR(dir);
    connected_client c(url);
    auto cfg = config_of(url);
    cfg.connection_name = unique_name("copies-lost");
    cfg.reconnect_backoff = tarry::retry::backoff_policy::fixed(200ms);
    auto o = options_for(unique_name("copies-lost"));
    o.retry = tarry::retry::backoff_policy::fixed(100ms);
    o.republish_backoff = tarry::retry::backoff_policy::fixed(100ms);
    // Every job fails its first attempt.
    running_consumer rc(cfg, o, [](const tarry::job& j) {
        return j.attempt == 1 ? tarry::job_outcome::failure("first attempts fail") : tarry::job_outcome::success();
    });
    auto ch = confirm_channel(c);
    publish_raw(ch, o.queue, "before", {});
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 10s));

    // The broker closes the connection that publishes the copies, and only it.
    const auto pids = tarry_test::private_broker::connection_pids(*dir, cfg.connection_name + " (copies)");
    REQUIRE(pids.size() == 1);
    auto closed = tarry_test::private_broker::broker_ctl(*dir, {"close_connection", pids[0], "test says bye"});
    REQUIRE_MESSAGE(closed.exit_code == 0, closed.err);

    // A job failing after that is still retried (its copy goes out on the
    // reconnected copies connection) and succeeds on attempt 2; the
    // consuming side lost nothing.
    publish_raw(ch, o.queue, "after", {});
    REQUIRE(rc.log.wait_count(kind::succeeded, 2, 15s));  // "before", then "after"
    const auto done = rc.log.find(kind::succeeded, "after");
    REQUIRE(done);
    CHECK(done->attempt == 2);
    CHECK(rc.log.find(kind::retry, "after"));
    CHECK(rc.log.count(kind::dropped) == 0);
    CHECK(rc.worker.stats().channel_losses == 0);
    cleanup(c, o);
}
