// Losing the connection: every job held from it is dropped at once (the
// broker redelivers them), the consumer reconnects and resubscribes, and
// each job still runs once, on time.
#include "consumer_fixture.hpp"
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
