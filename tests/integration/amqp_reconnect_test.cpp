// Connection loss and reconnection: the broker kills the connection
// (rabbitmqctl close_connection) or the socket is dropped (a relay cuts it).
// The error reaches the user, pending operations fail, and the on_open hook
// re-declares and re-subscribes, so consumption resumes. While nothing
// listens (connections refused), attempts come every 250 ms.
#include "amqp_client.hpp"
#include "private_broker.hpp"
#include "tcp_relay.hpp"

#include <memory>
#include <thread>
#include <utility>
#include <vector>

using namespace amqp_it;

namespace {

/// Re-declares a queue and re-subscribes from the on_open hook, on every
/// (re)connect; records what happened for the test thread.
struct resubscriber {
    std::string queue;
    inbox in;
    std::mutex m;
    std::condition_variable cv;
    int opens = 0;
    std::vector<amqp::diagnostics> lost;
    amqp::connection* conn = nullptr;

    amqp::connection_hooks hooks() {
        amqp::connection_hooks h;
        h.on_open = [this](const amqp::connection_info&) {
            conn->async_open_channel([this](std::error_code ec, amqp::channel ch) {
                if (ec) return;
                ch.async_declare_queue(queue_opts(queue), [this, ch](std::error_code ec, amqp::queue_info) {
                    if (ec) return;
                    auto o = consume_opts(queue);
                    o.no_ack = true;  // nothing to redeliver after a reconnect
                    ch.async_consume(o, in.handlers(), [this](std::error_code ec, std::string) {
                        if (ec) return;
                        std::lock_guard lock(m);
                        ++opens;
                        cv.notify_all();
                    });
                });
            });
        };
        h.on_lost = [this](const amqp::diagnostics& d) {
            std::lock_guard lock(m);
            lost.push_back(d);
            cv.notify_all();
        };
        return h;
    }
    bool wait_opens(int n, std::chrono::milliseconds t = 30s) {
        std::unique_lock lock(m);
        return cv.wait_for(lock, t, [&] { return opens >= n; });
    }
};

amqp::connection_config fast_reconnect(amqp::connection_config cfg) {
    cfg.reconnect_backoff = tarry::retry::backoff_policy::exponential(50ms, 2.0, 1s);
    cfg.connection_name = unique_name("conn");
    return cfg;
}

void publish_one(const std::string& url, const std::string& q, const std::string& text) {
    connected_client pub(url);
    auto ch = pub.open_channel();
    ok(ch.async_confirm_select(use_future));
    ok(ch.async_publish("", q, amqp::message(text), {}, use_future));
}

/// Connects `c`, whose hooks are `rs`'s, and waits until `rs` has
/// subscribed and consumed a first message published to its queue.
void start_consuming(resubscriber& rs, client& c, const std::string& url) {
    rs.conn = &c.conn;
    c.connect();
    REQUIRE(rs.wait_opens(1));
    publish_one(url, rs.queue, "one");
    REQUIRE(rs.in.next());
}

}  // namespace

TEST_CASE("closed by the broker (rabbitmqctl close_connection): 320 surfaced, consumption restored") {
    TARRY_REQUIRE_BROKER(url);
    TARRY_REQUIRE_BROKER_DIR(dir);
    resubscriber rs;
    rs.queue = unique_name("reconnect-ctl");
    auto cfg = fast_reconnect(config_of(url));
    client c(cfg, rs.hooks());
    start_consuming(rs, c, url);

    // A pending operation on the doomed connection must fail, not hang.
    auto doomed = c.open_channel();

    // Find our connection by its name and have the broker close it.
    const auto pids = tarry_test::private_broker::connection_pids(*dir, cfg.connection_name);
    REQUIRE(pids.size() == 1);
    auto closed = tarry_test::private_broker::broker_ctl(*dir, {"close_connection", pids[0], "test says bye"});
    REQUIRE_MESSAGE(closed.exit_code == 0, closed.err);

    REQUIRE(rs.wait_opens(2));
    {
        std::lock_guard lock(rs.m);
        REQUIRE_FALSE(rs.lost.empty());
        CHECK(rs.lost[0].code == amqp::reply_code::connection_forced);
        REQUIRE(rs.lost[0].reply);
        CHECK(rs.lost[0].reply->text.find("test says bye") != std::string::npos);
    }
    CHECK(amqp::requires_reconnect(amqp::reply_code::connection_forced));
    CHECK_FALSE(doomed.is_open());
    CHECK(wait(doomed.async_qos(prefetch(1), use_future)) == amqp::errc::channel_closed);
    publish_one(url, rs.queue, "two");
    auto d = rs.in.next();
    REQUIRE(d);
    CHECK(d->msg.body_view() == "two");
    CHECK(c.conn.usage().connects == 2);
    CHECK(c.conn.usage().connections_lost == 1);
}

TEST_CASE("dropped socket: connection_lost surfaced, consumption restored") {
    TARRY_REQUIRE_BROKER(url);
    auto direct = config_of(url);
    tarry_test::tcp_relay relay(direct.host, direct.effective_port());
    auto cfg = fast_reconnect(direct);
    cfg.port = relay.port();
    resubscriber rs;
    rs.queue = unique_name("reconnect-drop");
    client c(cfg, rs.hooks());
    start_consuming(rs, c, url);

    auto ch = c.open_channel();
    relay.cut_all();
    REQUIRE(rs.wait_opens(2));
    {
        std::lock_guard lock(rs.m);
        REQUIRE_FALSE(rs.lost.empty());
        CHECK(rs.lost[0].code == amqp::errc::connection_lost);
        CHECK(amqp::requires_reconnect(rs.lost[0].code));
    }
    CHECK_FALSE(ch.is_open());
    publish_one(url, rs.queue, "two");
    auto d = rs.in.next();
    REQUIRE(d);
    CHECK(d->msg.body_view() == "two");
}

TEST_CASE("reconnect gives up per its policy and says so") {
    TARRY_REQUIRE_BROKER(url);
    auto direct = config_of(url);
    auto relay = std::make_unique<tarry_test::tcp_relay>(direct.host, direct.effective_port());
    auto cfg = direct;
    cfg.port = relay->port();
    cfg.reconnect_backoff = tarry::retry::backoff_policy::fixed(20ms).with_max_attempts(3);
    std::promise<amqp::diagnostics> final_close;
    amqp::connection_hooks hooks;
    hooks.on_closed = [&](const amqp::diagnostics& d) { final_close.set_value(d); };
    client c(cfg, hooks);
    c.connect();
    relay.reset();  // the relay and its port are gone: every attempt fails
    auto d = wait(final_close.get_future());
    CHECK(d.code == amqp::errc::connect_failed);
    CHECK(d.message.find("no more reconnect attempts") != std::string::npos);
    CHECK_FALSE(c.conn.is_open());
    CHECK(c.conn.usage().failed_attempts == 2);
}

TEST_CASE("refused while nothing listens: tried every 250 ms, open within 1 s of a listener") {
    TARRY_REQUIRE_BROKER(url);
    using steady = std::chrono::steady_clock;
    const auto direct = config_of(url);
    auto relay = std::make_unique<tarry_test::tcp_relay>(direct.host, direct.effective_port());
    const std::uint16_t port = relay->port();
    auto cfg = direct;  // the default reconnect settings
    cfg.port = port;
    std::mutex m;
    std::condition_variable cv;
    std::vector<steady::time_point> opened;
    std::vector<std::pair<std::chrono::milliseconds, std::string>> scheduled;  // pause, after what
    amqp::connection_hooks hooks;
    hooks.on_open = [&](const amqp::connection_info&) {
        std::lock_guard lock(m);
        opened.push_back(steady::now());
        cv.notify_all();
    };
    hooks.on_reconnect_scheduled = [&](unsigned, std::chrono::milliseconds pause, const amqp::diagnostics& d) {
        std::lock_guard lock(m);
        scheduled.emplace_back(pause, d.message);
    };
    client c(cfg, hooks);
    c.connect();

    // The relay goes and its port refuses connections for 5 s: long enough
    // for the backoff of other failures to grow to seconds.
    relay.reset();
    std::this_thread::sleep_for(5s);
    const auto listening = steady::now();
    relay = std::make_unique<tarry_test::tcp_relay>(direct.host, direct.effective_port(), port);
    std::unique_lock lock(m);
    REQUIRE(cv.wait_for(lock, 10s, [&] { return opened.size() == 2; }));
    const auto back = std::chrono::duration_cast<std::chrono::milliseconds>(opened[1] - listening);
    MESSAGE("open again " << back.count() << " ms after the port listened again");
    CHECK(back < 1s);
    // The loss is followed by the backoff's first pause (100 ms, full
    // jitter); every refused attempt by 250 ms.
    REQUIRE(scheduled.size() >= 15);
    CHECK(scheduled[0].first < 100ms);
    for (std::size_t i = 1; i < scheduled.size(); ++i) {
        CAPTURE(i);
        CAPTURE(scheduled[i].second);
        CHECK(scheduled[i].first == 250ms);
        CHECK(scheduled[i].second.find("Connection refused") != std::string::npos);
    }
}
