// A broker of the test's own: pausing it (SIGSTOP) longer than two
// heartbeat intervals is detected as a dead connection in bounded time; it
// comes back after SIGCONT. connection.blocked / unblocked reach the user.
#include "amqp_client.hpp"
#include "private_broker.hpp"

#include <csignal>
#include <mutex>
#include <optional>

using namespace amqp_it;

namespace {
/// Resumes a stopped process when the test leaves, whatever happens.
struct resume_on_exit {
    pid_t pid;
    ~resume_on_exit() { ::kill(pid, SIGCONT); }
};
}  // namespace

TEST_CASE("dead peer: a paused broker is detected within two heartbeats; reconnect after resume") {
    if (!tarry_test::amqp_url()) {
        MESSAGE("SKIPPED: TARRY_TEST_AMQP_URL is not set (run under scripts/with-broker)");
        ++::tarry_test::runtime_skips();
        return;
    }
    tarry_test::private_broker broker;
    auto cfg = config_of(broker.url() + "?heartbeat=2");
    cfg.reconnect_backoff = tarry::retry::backoff_policy::exponential(100ms, 2.0, 1s);
    std::mutex m;
    std::condition_variable cv;
    std::optional<amqp::diagnostics> lost;
    std::chrono::steady_clock::time_point lost_at;
    int opens = 0;
    amqp::connection_hooks hooks;
    hooks.on_open = [&](const amqp::connection_info&) {
        std::lock_guard lock(m);
        ++opens;
        cv.notify_all();
    };
    hooks.on_lost = [&](const amqp::diagnostics& d) {
        std::lock_guard lock(m);
        lost = d;
        lost_at = std::chrono::steady_clock::now();
        cv.notify_all();
    };
    client c(cfg, hooks);
    c.connect();
    REQUIRE(c.conn.info()->heartbeat == 2);
    auto ch = c.open_channel();

    const pid_t pid = broker.pid();
    REQUIRE(pid > 0);
    const auto paused_at = std::chrono::steady_clock::now();
    REQUIRE(::kill(pid, SIGSTOP) == 0);
    {
        resume_on_exit resume{pid};
        auto pending = ch.async_declare_queue(queue_opts(unique_name("dead"), true), use_future);
        std::unique_lock lock(m);
        REQUIRE(cv.wait_for(lock, 15s, [&] { return lost.has_value(); }));
        CHECK(lost->code == amqp::errc::heartbeat_timeout);
        CHECK(lost->message.find("two heartbeat intervals") != std::string::npos);
        const auto took = lost_at - paused_at;
        CHECK(took >= 3s);   // not before two intervals (minus one send slot) passed
        CHECK(took <= 7s);   // and not much after
        lock.unlock();
        CHECK(std::get<0>(wait(std::move(pending), 5s)) == amqp::errc::heartbeat_timeout);
    }
    std::unique_lock lock(m);
    CHECK(cv.wait_for(lock, 30s, [&] { return opens >= 2; }));
}

TEST_CASE("connection.blocked and unblocked reach hooks and async_wait_unblocked") {
    if (!tarry_test::amqp_url()) {
        MESSAGE("SKIPPED: TARRY_TEST_AMQP_URL is not set (run under scripts/with-broker)");
        ++::tarry_test::runtime_skips();
        return;
    }
    tarry_test::private_broker broker;
    std::promise<std::string> blocked;
    std::promise<void> unblocked;
    amqp::connection_hooks hooks;
    hooks.on_blocked = [&](const std::string& reason) { blocked.set_value(reason); };
    hooks.on_unblocked = [&] { unblocked.set_value(); };
    client c(broker.url(), hooks);
    c.connect();
    auto ch = c.open_channel();
    CHECK_FALSE(wait(c.conn.async_wait_unblocked(use_future)));  // not blocked: at once

    REQUIRE(broker.ctl({"set_vm_memory_high_watermark", "0.000001"}).exit_code == 0);
    // RabbitMQ blocks a connection once it publishes during the alarm.
    ok(ch.async_publish("", "nowhere", amqp::message("x"), {}, use_future));
    auto bf = blocked.get_future();
    REQUIRE(bf.wait_for(30s) == std::future_status::ready);
    CHECK(bf.get().find("memory") != std::string::npos);
    CHECK(c.conn.blocked());
    auto waiting = c.conn.async_wait_unblocked(use_future);
    CHECK(waiting.wait_for(200ms) == std::future_status::timeout);

    REQUIRE(broker.ctl({"set_vm_memory_high_watermark", "0.4"}).exit_code == 0);
    CHECK_FALSE(wait(std::move(waiting)));
    auto uf = unblocked.get_future();
    CHECK(uf.wait_for(30s) == std::future_status::ready);
    CHECK_FALSE(c.conn.blocked());
}
