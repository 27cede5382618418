// Failover between broker addresses (connection_config::failover) against
// real brokers: the run's broker (B) and one node of the test's own (A).
// The first connect passes over an address that refuses; an open
// connection whose node stops comes back on the next address.
#include "amqp_client.hpp"
#include "private_broker.hpp"
#include "tcp_relay.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

using namespace amqp_it;

namespace {

/// The node a connection reached: RabbitMQ's cluster_name server property
/// (by default its node name), or "" when the connection is not open.
std::string node_of(const amqp::connection& c) {
    const auto info = c.info();
    if (!info) return {};
    const auto* v = info->server_properties.find("cluster_name");
    const auto* s = v ? v->get_if<std::string>() : nullptr;
    return s ? *s : std::string{};
}

amqp::broker_address address_of(const amqp::connection_config& c) {
    return {c.host, c.effective_port()};
}

}  // namespace

TEST_CASE("failover: the first connect passes over an address that refuses") {
    TARRY_REQUIRE_BROKER(url);
    const auto b = config_of(url);
    // A port that refuses connections: a relay's, once the relay is gone.
    auto gone = std::make_unique<tarry_test::tcp_relay>(b.host, b.effective_port());
    auto cfg = b;
    cfg.host = "127.0.0.1";
    cfg.port = gone->port();
    gone.reset();
    cfg.failover = {address_of(b)};
    client c(cfg);
    c.connect();
    CHECK(c.conn.is_open());
    CHECK(c.conn.usage().failed_attempts == 1);
    auto ch = c.open_channel();
    ok(ch.async_qos(prefetch(1), use_future));
}

TEST_CASE("failover: when its node stops, the connection comes back on the next address within "
          "1 s") {
    TARRY_REQUIRE_BROKER(url);
    using steady = std::chrono::steady_clock;
    tarry_test::private_broker node_a;
    const auto a = config_of(node_a.url());
    const auto b = config_of(url);

    std::mutex m;
    std::condition_variable cv;
    std::optional<steady::time_point> lost_at, back_at;
    amqp::connection_hooks hooks;
    hooks.on_lost = [&](const amqp::diagnostics&) {
        std::lock_guard lock(m);
        if (!lost_at) lost_at = steady::now();
    };
    hooks.on_open = [&](const amqp::connection_info& i) {
        std::lock_guard lock(m);
        if (i.connects == 2) back_at = steady::now();
        cv.notify_all();
    };
    auto cfg = a;  // the default reconnect settings
    cfg.failover = {address_of(b)};
    client c(cfg, hooks);
    c.connect();
    const std::string on_a = node_of(c.conn);
    REQUIRE_FALSE(on_a.empty());

    node_a.stop_node();
    std::unique_lock lock(m);
    REQUIRE(cv.wait_for(lock, 10s, [&] { return back_at.has_value(); }));
    REQUIRE(lost_at);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(*back_at - *lost_at);
    lock.unlock();
    MESSAGE("open on the next address " << took.count() << " ms after the loss");
    CHECK(took < 1s);
    const std::string on_b = node_of(c.conn);
    CHECK_FALSE(on_b.empty());
    CHECK(on_b != on_a);
    auto ch = c.open_channel();
    const auto q = value_of(ch.async_declare_queue(queue_opts("", true, true), use_future));
    CHECK_FALSE(q.name.empty());
}
