// The consumer's Asio front: on an executor the caller runs, sharing one
// io_context with a publisher; async_run / async_stop; start failures as
// error codes a caller can tell apart; the connection state as typed events.
#include "consumer_fixture.hpp"

#include "tarry/publisher/publisher.hpp"

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <thread>

using namespace consumer_it;

TEST_CASE("one io_context, one thread: a consumer and a publisher share it; async_run ends after async_stop") {
    TARRY_REQUIRE_BROKER(url);
    boost::asio::io_context io;
    auto o = options_for(unique_name("executor"));
    std::atomic<int> ran{0};
    std::vector<tarry::connection_event> conn_events;  // written on the io thread only
    tarry::consumer_hooks hooks;
    amqp::connection conn(io.get_executor(), config_of(url));
    tarry::publisher pub(conn);
    hooks.on_connection_event = [&](const tarry::connection_event& e) {
        conn_events.push_back(e);
        if (e.what != tarry::connection_event::kind::consuming) return;
        // Subscribed (the queue is declared): publish a job due in 200 ms.
        conn.async_connect([&](std::error_code ec) {
            REQUIRE_FALSE(ec);
            pub.async_publish("", o.queue, amqp::message("hello"), tarry::job_schedule::after(200ms),
                              [&](std::error_code pe) { CHECK_FALSE(pe); });
        });
    };
    tarry::consumer worker(io.get_executor(), config_of(url), o,
                           [&](const tarry::job&) {
                               ++ran;
                               return tarry::job_outcome::success();
                           },
                           hooks);

    std::optional<std::error_code> run_result;
    bool stopped = false;
    worker.async_run([&](std::error_code ec) { run_result = ec; });
    // The only thread running the io_context is this one, below; a watcher
    // stops the consumer once the job ran.
    std::thread watcher([&] {
        for (int i = 0; i < 1000 && ran == 0; ++i) std::this_thread::sleep_for(10ms);
        worker.async_stop([&] {
            stopped = true;
            conn.async_close([](std::error_code) {});
        });
    });
    io.run();  // returns once nothing is left to do: consumer stopped, connection closed
    watcher.join();
    CHECK(ran == 1);
    CHECK(stopped);
    REQUIRE(run_result);
    CHECK_FALSE(*run_result);
    REQUIRE_FALSE(conn_events.empty());
    CHECK(conn_events.front().what == tarry::connection_event::kind::connected);
    CHECK(std::count_if(conn_events.begin(), conn_events.end(), [](const auto& e) {
              return e.what == tarry::connection_event::kind::consuming;
          }) == 1);
    CHECK(worker.stats().succeeded == 1);
    connected_client c(url);
    cleanup(c, o);
}

TEST_CASE("start failures carry a code: a missing queue is the broker's 404, a wrong password authentication_failed") {
    TARRY_REQUIRE_BROKER(url);
    auto o = options_for(unique_name("missing"));
    o.declare_queue = false;  // only check that it exists
    try {
        tarry::consumer w(config_of(url), o, succeed);
        w.start();
        FAIL("started on a queue that does not exist");
    } catch (const tarry::error& e) {
        CHECK(e.code() == amqp::reply_code::not_found);
        CHECK(std::string(e.what()).find(o.queue) != std::string::npos);
        REQUIRE(e.diagnostics().reply);
        CHECK(e.diagnostics().reply->code == 404);
    }
    auto cfg = config_of(url);
    cfg.password = "not-the-password";
    cfg.reconnect = false;
    boost::asio::io_context io;
    tarry::consumer w(io.get_executor(), cfg, options_for(unique_name("auth")), succeed);
    std::optional<std::error_code> result;
    amqp::diagnostics diag;
    diag.message = "stale";  // replaced by what kept it from starting
    w.async_run(diag, [&](std::error_code ec) { result = ec; });
    io.run();
    REQUIRE(result);
    CHECK(*result == amqp::errc::authentication_failed);
    CHECK(diag.code == *result);
    CHECK(diag.message != "stale");
    CHECK_FALSE(diag.message.empty());
}

TEST_CASE("a consumer that failed to start may be destroyed with its io_context as soon as async_run completed") {
    // What stops it after the refusal runs on a thread of its own, which
    // may be the consumer's last owner: the io_context must outlive it.
    TARRY_REQUIRE_BROKER(url);
    auto cfg = config_of(url);
    cfg.password = "not-the-password";
    cfg.reconnect = false;
    for (int i = 0; i < 20; ++i) {
        std::optional<std::error_code> result;
        {
            boost::asio::io_context io;
            tarry::consumer w(io.get_executor(), cfg, options_for(unique_name("auth-gone")), succeed);
            w.async_run([&](std::error_code ec) { result = ec; });
            io.run();
        }  // the consumer, then its io_context, destroyed at once
        REQUIRE(result);
        CHECK(*result == amqp::errc::authentication_failed);
    }
}

TEST_CASE("connection events: typed, and the log lines the same as text()") {
    tarry::connection_event e{tarry::connection_event::kind::reconnecting, true, {}, 250ms, 3};
    CHECK(e.text() == "copies connection reconnecting in 250 ms (attempt 3)");
    e = {tarry::connection_event::kind::lost, false, "connection reset", {}, 0};
    CHECK(e.text() == "lost: connection reset");
    CHECK(std::string(tarry::to_string(tarry::connection_event::kind::subscribe_failed)) == "subscribe_failed");
}

TEST_CASE("stats() may be called while stop() runs") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("stats-stop"));
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    for (int i = 0; i < 20; ++i) publish_raw(ch, o.queue, "held-" + std::to_string(i), {{"perform_job_at", epoch(sys::now() + 60s)}});
    REQUIRE(wait_held(rc, 20));
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> reads{0};
    std::atomic<std::size_t> most_held{0};
    std::thread reader([&] {
        while (!done) {
            most_held = std::max<std::size_t>(most_held, rc.worker.stats().held);
            ++reads;
        }
    });
    rc.worker.stop();
    done = true;
    reader.join();
    CHECK(reads > 0);
    CHECK(most_held <= 20);
    const auto s = rc.worker.stats();
    CHECK(s.held == 0);
    CHECK(s.requeued == 20);
    CHECK(s.running == 0);
    cleanup(c, o);
}
