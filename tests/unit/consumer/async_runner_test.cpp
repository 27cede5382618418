// Asynchronous handlers on the consumer's core, with a fake clock: the core
// and its job store as in core_harness.hpp, the coroutines on an
// io_context the test runs by hand. Each handler waits on a gate the test
// opens, so nothing depends on real time.
#include "async_runner.hpp"
#include "core_harness.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <map>
#include <memory>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

using namespace core_test;
namespace asio = boost::asio;

namespace {

/// Timers that never expire, one per job id, that a test cancels to let
/// that job's coroutine go on.
struct gates {
    asio::awaitable<boost::system::error_code> wait(const std::string& id) {
        auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor,
                                                          asio::steady_timer::time_point::max());
        open_[id] = timer;
        boost::system::error_code ec;
        co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
        open_.erase(id);
        co_return ec;
    }
    void open(const std::string& id) {
        const auto it = open_.find(id);
        REQUIRE(it != open_.end());
        it->second->cancel();
    }
    std::size_t waiting() const { return open_.size(); }
    std::map<std::string, std::shared_ptr<asio::steady_timer>> open_;
};

struct async_harness {
    explicit async_harness(async_job_handler handler, std::size_t max_in_flight = 1000,
                           asio::any_io_executor handler_executor = {})
        : context(std::make_shared<worker_context>(
              job_handler{}, nullptr, [this](const job_event& e) { worker_events.push_back(e); },
              std::shared_ptr<core_counters>(std::shared_ptr<void>{}, &h.counters), h.core.lanes().incarnations(),
              [] {})),
          runner(std::make_shared<async_runner>(
              io.get_executor(), std::move(handler_executor), std::move(handler), context, max_in_flight,
              async_runner::source{[this] {
                                       auto it = h.queue.try_pop();
                                       return it;
                                   },
                                   [this] { return h.queue.earliest_due(); }, [this] { return h.clock.now(); }})) {
        gen = h.subscribe();
    }
    /// Lets the coroutines run, then hands what they finished to the core.
    void step() {
        runner->pump();
        io.poll();
        io.restart();
        for (auto& f : context->take_finished()) h.core.finished(std::move(f), h.now());
        runner->pump();
        io.poll();
        io.restart();
    }
    std::size_t count(job_event::kind k) const {
        return static_cast<std::size_t>(
            std::count_if(worker_events.begin(), worker_events.end(), [k](const job_event& e) { return e.what == k; }));
    }

    harness h;
    asio::io_context io;
    std::vector<job_event> worker_events;
    std::shared_ptr<worker_context> context;
    std::shared_ptr<async_runner> runner;
    std::uint32_t gen = 0;
};

}  // namespace

TEST_CASE("fault: a slow coroutine: at most max_in_flight run at once; the rest wait, due, for a slot") {
    gates g;
    std::size_t running = 0, peak = 0;
    async_harness a(
        [&](const job& j) -> asio::awaitable<job_outcome> {
            peak = std::max(peak, ++running);
            co_await g.wait(std::string(j.id()));
            --running;
            co_return job_outcome::success();
        },
        2);
    for (std::uint64_t tag = 1; tag <= 5; ++tag) a.h.deliver(0, a.gen, tag, std::nullopt);
    a.step();
    CHECK(g.waiting() == 2);
    CHECK(a.runner->in_flight() == 2);
    CHECK(a.h.counters.started == 2);
    CHECK(a.h.counters.running == 2);
    CHECK(a.h.queue.size() == 3);  // due, waiting for a slot: still the store's (the backlog check sees them)
    g.open("job-1");
    a.step();
    CHECK(a.h.take<action::ack>().size() == 1);
    CHECK(g.waiting() == 2);  // job-3 took the free slot
    for (const char* id : {"job-2", "job-3", "job-4", "job-5"}) {
        if (g.open_.count(id) == 0) continue;
        g.open(id);
        a.step();
    }
    while (g.waiting() > 0) {
        g.open(g.open_.begin()->first);
        a.step();
    }
    CHECK(peak == 2);
    CHECK(a.h.take<action::ack>().size() == 4);
    CHECK(a.h.counters.succeeded == 5);
    CHECK(a.runner->in_flight() == 0);
    CHECK(a.h.counters.running == 0);
}

TEST_CASE("never early: a held job's coroutine starts when the store's clock says it is due") {
    int calls = 0;
    async_harness a([&](const job&) -> asio::awaitable<job_outcome> {
        ++calls;
        co_return job_outcome::success();
    });
    a.h.deliver(0, a.gen, 1, 1000ms);
    a.step();
    a.h.clock.advance(999ms);
    a.step();
    CHECK(calls == 0);
    a.h.clock.advance(1ms);
    a.step();
    CHECK(calls == 1);
    CHECK(a.h.take<action::ack>().size() == 1);
}

TEST_CASE("fault: a coroutine that throws, before or after it suspends, fails and is retried; a permanent_error "
          "is dead-lettered") {
    gates g;
    async_job_handler throws_at_call = [&g](const job& j) -> asio::awaitable<job_outcome> {
        if (j.id() == "job-1") throw std::runtime_error("before the coroutine");  // not a coroutine: throws when called
        return [](std::string id, gates& g) -> asio::awaitable<job_outcome> {
            if (id == "job-2") throw std::runtime_error("at once");
            co_await g.wait(id);
            if (id == "job-3") throw std::runtime_error("after a wait");
            throw permanent_error("cannot be done");
        }(std::string(j.id()), g);
    };
    async_harness a(throws_at_call);
    for (std::uint64_t tag = 1; tag <= 4; ++tag) a.h.deliver(0, a.gen, tag, std::nullopt);
    a.step();
    g.open("job-3");
    g.open("job-4");
    a.step();
    CHECK(a.h.counters.handler_failures == 3);
    const auto publishes = a.h.take<action::publish>();
    REQUIRE(publishes.size() == 4);  // three retry copies, one dead letter
    CHECK(std::count_if(publishes.begin(), publishes.end(), [](const action::publish& p) {
              return p.routing_key == "jobs" && contract::read_attempt(p.message.properties) == 2;
          }) == 3);
    CHECK(std::count_if(publishes.begin(), publishes.end(),
                        [](const action::publish& p) { return p.routing_key == "jobs.dead"; }) == 1);
    CHECK(a.h.take<action::ack>().empty());  // each waits for its copy's confirm
    for (const auto& p : publishes) a.h.core.copy_confirmed(p.publish_id, a.h.now());
    CHECK(a.h.take<action::ack>().size() == 4);
    CHECK(a.h.counters.retried == 3);
    const auto dead = a.h.events(job_event::kind::dead);
    REQUIRE(dead.size() == 1);
    CHECK(dead[0].reason == "rejected: cannot be done");
}

TEST_CASE("fault: a coroutine that completes after its delivery was lost settles as dropped: nothing acked or "
          "published") {
    gates g;
    async_harness a([&](const job& j) -> asio::awaitable<job_outcome> {
        co_await g.wait(std::string(j.id()));
        co_return j.id() == "job-1" ? job_outcome::success() : job_outcome::failure("boom");
    });
    a.h.deliver(0, a.gen, 1, std::nullopt);
    a.h.deliver(0, a.gen, 2, std::nullopt);
    a.step();
    REQUIRE(g.waiting() == 2);
    a.h.core.lane_lost(0, a.gen, "channel closed", a.h.now());
    a.h.collect();
    a.h.core.sweep(a.h.now());
    g.open("job-1");
    g.open("job-2");
    a.step();
    CHECK(a.h.take<action::ack>().empty());
    CHECK(a.h.take<action::publish>().empty());
    CHECK(a.h.events(job_event::kind::dropped).size() == 2);
    CHECK(a.h.counters.succeeded == 0);
    CHECK(a.h.counters.retried == 0);
    CHECK(a.h.counters.dropped == 2);
}

TEST_CASE("fault: at stop a coroutine still running is abandoned and cancelled (terminal); one that ignores the "
          "cancellation is destroyed when it next resumes") {
    gates g;
    bool honoured = false, resumed_after_stop = false, frame_destroyed = false;
    struct on_destroy {
        bool* flag;
        ~on_destroy() { *flag = true; }
    };
    async_harness a([&](const job& j) -> asio::awaitable<job_outcome> {
        if (j.id() == "job-1") {  // honours it: returns at once
            const auto ec = co_await g.wait("job-1");
            honoured = ec == asio::error::operation_aborted;
            co_return job_outcome::success();
        }
        on_destroy sentinel{&frame_destroyed};
        co_await asio::this_coro::throw_if_cancelled(false);
        co_await g.wait("job-2");  // cancelled: goes on waiting all the same
        asio::steady_timer later(co_await asio::this_coro::executor, 20ms);
        boost::system::error_code ec;
        co_await later.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        resumed_after_stop = true;
        co_return job_outcome::success();
    });
    a.h.deliver(0, a.gen, 1, std::nullopt);
    a.h.deliver(0, a.gen, 2, std::nullopt);
    a.step();
    REQUIRE(g.waiting() == 2);
    // stop(): nothing new starts; at the end of the grace the two are abandoned.
    a.h.core.stop(a.h.now());
    a.runner->close();
    a.h.deliver(0, a.gen, 3, std::nullopt);  // crossed the cancel: given back, never run
    CHECK(a.runner->cancel_running(a.h.clock.wall_now()) == 2);
    CHECK(a.count(job_event::kind::abandoned) == 2);
    CHECK(a.h.counters.abandoned == 2);
    a.io.poll();  // the cancellation is delivered where the coroutines run
    a.io.restart();
    CHECK(honoured);
    CHECK_FALSE(frame_destroyed);  // job-2 went on: waiting 20 ms
    a.runner->let_go();            // stop() returns
    a.io.run_for(std::chrono::seconds(2));
    CHECK_FALSE(resumed_after_stop);
    CHECK(frame_destroyed);
    CHECK(a.context->take_finished().empty());  // neither is acknowledged: the broker redelivers them
    CHECK(a.h.take<action::ack>().empty());
    CHECK(a.count(job_event::kind::run) == 2);
}

TEST_CASE("an Asio asynchronous operation with a completion token is a handler (from_async_operation); its "
          "outcome settles the job") {
    // An operation without coroutines: completes on the executor with the
    // job's outcome, a failure for job-2.
    auto op = [](const job& j, auto&& token) {
        return asio::async_initiate<decltype(token), void(job_outcome)>(
            [](auto handler, std::string id) {
                auto ex = asio::get_associated_executor(handler);
                asio::post(ex, [handler = std::move(handler), id]() mutable {
                    std::move(handler)(id == "job-2" ? job_outcome::failure("refused") : job_outcome::success());
                });
            },
            token, std::string(j.id()));
    };
    async_harness a(from_async_operation(op));
    a.h.deliver(0, a.gen, 1, std::nullopt);
    a.h.deliver(0, a.gen, 2, std::nullopt);
    a.step();
    CHECK(a.h.take<action::ack>().size() == 1);
    const auto publishes = a.h.take<action::publish>();
    REQUIRE(publishes.size() == 1);  // job-2's retry copy
    CHECK(contract::read_attempt(publishes[0].message.properties) == 2);
    CHECK(a.h.counters.handler_failures == 1);
}

TEST_CASE("a handler runs on the executor given for handlers; its outcome is settled on the consumer's") {
    asio::io_context handlers;
    std::size_t ran_on_handlers = 0;
    async_harness a(
        [&](const job&) -> asio::awaitable<job_outcome> {
            if (handlers.get_executor().running_in_this_thread()) ++ran_on_handlers;
            co_return job_outcome::success();
        },
        1000, handlers.get_executor());
    a.h.deliver(0, a.gen, 1, std::nullopt);
    a.step();  // the consumer's executor alone: the coroutine has not run
    CHECK(ran_on_handlers == 0);
    CHECK(a.runner->in_flight() == 1);
    handlers.poll();  // it runs there, and hands its outcome to the consumer's
    a.step();
    CHECK(ran_on_handlers == 1);
    CHECK(a.h.take<action::ack>().size() == 1);
    CHECK(a.runner->in_flight() == 0);
}
