// worker_pool: runs due items, survives throwing jobs, stops gracefully.
#include "tarry/schedule/fake_clock.hpp"
#include "tarry/schedule/worker_pool.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using tarry::fake_clock;

namespace {

using queue = tarry::delay_queue<int, fake_clock>;
using pool = tarry::worker_pool<int, fake_clock>;

// Collects what the handlers saw; thread-safe.
struct journal {
    std::mutex m;
    std::vector<int> ran;
    std::vector<std::pair<int, std::string>> errors;
    int early = 0;

    void run(const fake_clock& clk, pool::item& it) {
        std::lock_guard lock(m);
        if (clk.now() < it.due) ++early;
        ran.push_back(it.value);
    }
    void error(pool::item& it, std::exception_ptr e) {
        std::lock_guard lock(m);
        errors.emplace_back(it.value, tarry::exception_text(e));
    }
};

bool wait_for(std::latch& l) {
    // A bound, not a speed assertion.
    for (int i = 0; i < 500; ++i) {
        if (l.try_wait()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

// A job that blocks until the test releases it, and a way to know when the
// pool's threads have let go of its handlers.
struct blocking_job {
    std::latch started{1};
    std::latch release{1};
    std::future<void> handlers_gone;  // ready once the last copy of the handler is destroyed

    // Owned by the handler: tells when destroyed, touching nothing the test owns.
    struct tell_when_gone {
        explicit tell_when_gone(std::promise<void> p) : gone(std::move(p)) {}
        ~tell_when_gone() { gone.set_value(); }
        std::promise<void> gone;
    };

    // The job handler (call once): captures the guard by shared ownership and
    // the latches, which the test keeps until the job has returned.
    pool::job_handler handler(bool throw_at_end = false) {
        std::promise<void> gone;
        handlers_gone = gone.get_future();
        auto guard = std::make_shared<tell_when_gone>(std::move(gone));
        return [this, guard, throw_at_end](pool::item&) {
            started.count_down();
            release.wait();
            if (throw_at_end) throw std::runtime_error("late");
        };
    }
};

// Reads stats until pred holds (a bound, not a speed assertion).
template <class Pred>
bool wait_for_stats(const pool& p, Pred pred) {
    for (int i = 0; i < 500; ++i) {
        if (pred(p.stats())) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

}  // namespace

TEST_SUITE("worker_pool") {

TEST_CASE("runs each item once, when due, on the pool's threads") {
    fake_clock clk;
    queue q({}, clk);
    journal j;
    std::latch all(10);
    pool p(
        q, 3,
        [&](pool::item& it) {
            j.run(clk, it);
            all.count_down();
        },
        [&](pool::item& it, std::exception_ptr e) { j.error(it, e); });
    for (int i = 0; i < 10; ++i) q.push(int{i}, clk.now() + 1s);
    REQUIRE(clk.wait_for_sleepers(3));  // the three workers wait
    {
        std::lock_guard lock(j.m);
        CHECK(j.ran.empty());
    }
    clk.advance(1s);
    REQUIRE(wait_for(all));
    std::lock_guard lock(j.m);
    CHECK(j.early == 0);
    std::sort(j.ran.begin(), j.ran.end());
    CHECK(j.ran == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    CHECK(j.errors.empty());
}

TEST_CASE("a throwing job is reported and the worker keeps going") {
    fake_clock clk;
    queue q({}, clk);
    journal j;
    std::latch all(6);
    pool p(
        q, 1,
        [&](pool::item& it) {
            j.run(clk, it);
            all.count_down();
            if (it.value % 2 == 1) throw std::runtime_error("job " + std::to_string(it.value) + " failed");
            if (it.value == 4) throw 42;  // not a std::exception
        },
        [&](pool::item& it, std::exception_ptr e) { j.error(it, e); });
    for (int i = 0; i < 6; ++i) q.push(int{i}, clk.now());
    REQUIRE(wait_for(all));
    REQUIRE(clk.wait_for_sleepers(1));  // the one worker is alive and idle
    const auto s = p.stats();
    CHECK(s.threads == 1);
    CHECK(s.failed == 4);
    CHECK(s.completed == 2);
    std::lock_guard lock(j.m);
    REQUIRE(j.errors.size() == 4);
    CHECK(j.errors[0] == std::pair<int, std::string>{1, "job 1 failed"});
    CHECK(j.errors[1] == std::pair<int, std::string>{3, "job 3 failed"});
    CHECK(j.errors[2] == std::pair<int, std::string>{4, "unknown exception"});
    CHECK(j.errors[3] == std::pair<int, std::string>{5, "job 5 failed"});
}

TEST_CASE("an error handler that throws is counted, not fatal") {
    fake_clock clk;
    queue q({}, clk);
    std::latch all(3);
    pool p(
        q, 1,
        [&](pool::item&) {
            all.count_down();
            throw std::runtime_error("job");
        },
        [&](pool::item&, std::exception_ptr) { throw std::runtime_error("handler"); });
    for (int i = 0; i < 3; ++i) q.push(int{i}, clk.now());
    REQUIRE(wait_for(all));
    REQUIRE(clk.wait_for_sleepers(1));
    CHECK(p.stats().unreported == 3);
    CHECK(p.stats().threads == 1);
}

TEST_CASE("stop: running jobs finish within the grace period; the rest is handed back") {
    fake_clock clk;
    queue q({}, clk);
    std::promise<void> release;
    auto released = release.get_future().share();
    std::latch started(1);
    std::atomic<int> ran{0};
    pool p(
        q, 1,
        [&](pool::item& it) {
            ++ran;
            if (it.value == 0) {
                started.count_down();
                released.wait();
            }
        },
        [](pool::item&, std::exception_ptr) {});
    q.push(0, clk.now());
    REQUIRE(wait_for(started));
    for (int i = 4; i >= 1; --i) q.push(int{i}, clk.now() + std::chrono::seconds(i));

    auto stopped = std::async(std::launch::async, [&] { return p.stop(10s); });
    REQUIRE(clk.wait_for_sleepers(1));  // stop() waits for the running job
    clk.advance(10s - 1ns);
    CHECK(stopped.wait_for(0s) == std::future_status::timeout);
    release.set_value();  // the job ends inside the grace period
    REQUIRE(stopped.wait_for(5s) == std::future_status::ready);
    const auto r = stopped.get();
    CHECK(r.still_running == 0);
    REQUIRE(r.not_started.size() == 4);
    for (int i = 0; i < 4; ++i) CHECK(r.not_started[std::size_t(i)].value == i + 1);  // due order
    CHECK(ran == 1);
    CHECK(q.closed());
    CHECK(q.empty());
    CHECK(p.stats().running == 0);
    CHECK(p.stats().abandoned == 0);
}

TEST_CASE("stop: a job that outlives the grace is abandoned; stop() returns at the deadline") {
    fake_clock clk;
    auto q = std::make_unique<queue>(tarry::delay_queue_limits{}, clk);
    blocking_job job;
    auto p = std::make_unique<pool>(*q, 1, job.handler(), [](pool::item&, std::exception_ptr) {});
    q->push(0, clk.now());
    REQUIRE(wait_for(job.started));
    q->push(1, clk.now() + 1h);

    auto stopped = std::async(std::launch::async, [&] { return p->stop(5s); });
    REQUIRE(clk.wait_for_sleepers(1));  // stop() waits for the running job
    clk.advance(5s - 1ns);
    CHECK(stopped.wait_for(0s) == std::future_status::timeout);
    clk.advance(1ns);  // the deadline
    REQUIRE(stopped.wait_for(5s) == std::future_status::ready);
    const auto r = stopped.get();
    CHECK(r.still_running == 1);
    REQUIRE(r.not_started.size() == 1);
    CHECK(r.not_started[0].value == 1);
    const auto s = p->stats();
    CHECK(s.abandoned == 1);
    CHECK(s.running == 1);  // still running, on its own
    CHECK(s.threads == 1);
    CHECK(s.completed == 0);

    // Neither the pool's destructor nor the queue's waits for the job.
    auto destroyed = std::async(std::launch::async, [&] {
        p.reset();
        q.reset();
    });
    CHECK(destroyed.wait_for(5s) == std::future_status::ready);
    CHECK(job.handlers_gone.wait_for(0s) == std::future_status::timeout);  // the thread holds them
    job.release.count_down();  // the job returns to a pool and a queue that are gone
    destroyed.wait();
    CHECK(job.handlers_gone.wait_for(5s) == std::future_status::ready);
}

TEST_CASE("stop: an abandoned job's return is not counted; what it throws is still reported") {
    fake_clock clk;
    queue q({}, clk);
    blocking_job job;
    std::atomic<int> reported{0};
    std::optional<pool> p;
    p.emplace(q, 1, job.handler(true), [&](pool::item&, std::exception_ptr) { ++reported; });
    q.push(0, clk.now());
    REQUIRE(wait_for(job.started));
    CHECK(p->stop(0s).still_running == 1);  // no grace: abandoned at once
    job.release.count_down();
    REQUIRE(wait_for_stats(*p, [](const auto& s) { return s.running == 0 && s.threads == 0; }));
    const auto s = p->stats();
    CHECK(s.threads == 0);
    CHECK(s.abandoned == 1);
    CHECK(s.completed == 0);
    CHECK(s.failed == 0);
    CHECK(s.unreported == 0);
    CHECK(reported == 1);
    CHECK(p->stop(1s).still_running == 0);  // a second stop() abandons nothing new
    CHECK(p->stats().abandoned == 1);
    p.reset();
    CHECK(job.handlers_gone.wait_for(5s) == std::future_status::ready);
}

TEST_CASE("stop: a job that ends within the grace period is joined, not abandoned") {
    fake_clock clk;
    queue q({}, clk);
    blocking_job job;
    std::optional<pool> p;
    p.emplace(q, 1, job.handler(), [](pool::item&, std::exception_ptr) {});
    q.push(0, clk.now());
    REQUIRE(wait_for(job.started));
    auto stopped = std::async(std::launch::async, [&] { return p->stop(5s); });
    REQUIRE(clk.wait_for_sleepers(1));
    job.release.count_down();
    REQUIRE(stopped.wait_for(5s) == std::future_status::ready);
    CHECK(stopped.get().still_running == 0);
    const auto s = p->stats();
    CHECK(s.abandoned == 0);
    CHECK(s.completed == 1);
    p.reset();  // joins the thread: nothing of the pool is left running
    CHECK(job.handlers_gone.wait_for(0s) == std::future_status::ready);
}

TEST_CASE("stop: a job that ends at the deadline is either finished or abandoned, never both") {
    int finished = 0;
    int abandoned = 0;
    for (int round = 0; round < 200; ++round) {
        CAPTURE(round);
        fake_clock clk;
        auto q = std::make_unique<queue>(tarry::delay_queue_limits{}, clk);
        blocking_job job;
        auto p = std::make_unique<pool>(*q, 1, job.handler(),
                                        [](pool::item&, std::exception_ptr) {});
        q->push(0, clk.now());
        REQUIRE(wait_for(job.started));
        auto stopped = std::async(std::launch::async, [&] { return p->stop(1s); });
        REQUIRE(clk.wait_for_sleepers(1));
        // The job returns and the deadline passes at the same moment.
        std::latch together(2);
        std::thread releaser([&] {
            together.arrive_and_wait();
            job.release.count_down();
        });
        together.arrive_and_wait();
        clk.advance(1s);
        releaser.join();
        REQUIRE(stopped.wait_for(5s) == std::future_status::ready);
        const auto r = stopped.get();
        // Once the job has returned and its thread left, the counts are final.
        REQUIRE(wait_for_stats(*p, [](const auto& s) { return s.running == 0 && s.threads == 0; }));
        const auto s = p->stats();
        CHECK(s.threads == 0);
        CHECK(s.completed + s.abandoned == 1);
        CHECK(s.abandoned == r.still_running);
        (r.still_running == 0 ? finished : abandoned) += 1;
        auto destroyed = std::async(std::launch::async, [&] {
            p.reset();
            q.reset();
        });
        REQUIRE(destroyed.wait_for(5s) == std::future_status::ready);
        REQUIRE(job.handlers_gone.wait_for(5s) == std::future_status::ready);
    }
    MESSAGE("finished in time: " << finished << ", abandoned: " << abandoned);
}

TEST_CASE("the destructor stops the workers and leaves queued items in the queue") {
    fake_clock clk;
    queue q({}, clk);
    {
        pool p(q, 2, [](pool::item&) {}, [](pool::item&, std::exception_ptr) {});
        q.push(1, clk.now() + 1h);
        REQUIRE(clk.wait_for_sleepers(2));
    }
    CHECK(q.size() == 1);
    CHECK_FALSE(q.closed());
}

TEST_CASE("bad arguments are refused") {
    fake_clock clk;
    queue q({}, clk);
    auto run = [](pool::item&) {};
    auto err = [](pool::item&, std::exception_ptr) {};
    CHECK_THROWS_AS(pool(q, 0, run, err), std::invalid_argument);
    CHECK_THROWS_AS(pool(q, 1, nullptr, err), std::invalid_argument);
    CHECK_THROWS_AS(pool(q, 1, run, nullptr), std::invalid_argument);
}

TEST_CASE("exception_text") {
    CHECK(tarry::exception_text(nullptr) == "no exception");
    CHECK(tarry::exception_text(std::make_exception_ptr(std::logic_error("x"))) == "x");
    CHECK(tarry::exception_text(std::make_exception_ptr(7)) == "unknown exception");
}

TEST_CASE("real clock: many jobs on four threads, each once, none early") {
    tarry::delay_queue<int> q;
    constexpr int n = 2000;
    std::atomic<int> early{0};
    std::vector<std::atomic<int>> runs(n);
    std::latch all(n);
    tarry::worker_pool<int> p(
        q, 4,
        [&](tarry::due_item<int>& it) {
            if (std::chrono::steady_clock::now() < it.due) ++early;
            ++runs[std::size_t(it.value)];
            all.count_down();
        },
        [](tarry::due_item<int>&, std::exception_ptr) {});
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) q.push(int{i}, start + std::chrono::microseconds((i * 7919) % 20000));
    REQUIRE(wait_for(all));
    const auto r = p.stop(1s);
    CHECK(r.not_started.empty());
    CHECK(early == 0);
    for (auto& c : runs) CHECK(c == 1);
}

}  // TEST_SUITE
