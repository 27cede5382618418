// echo_worker --async against the real broker: handlers as coroutines on
// the consumer's I/O thread, x-echo-sleep-ms waiting on a timer. With the
// default settings (max_in_flight 1000), 2 000 jobs due now that each wait
// 1 000 ms all succeed within 5 s, each run once: a thread pool of the
// default 4 workers would take 500 s.
#include "private_broker.hpp"
#include "worker_process.hpp"

#include <csignal>
#include <map>

using namespace consumer_it;

TEST_CASE("echo_worker --async: 2 000 jobs due now, each waiting 1 000 ms on a timer, all succeed within 5 s, "
          "one run each") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("proc-async");
    queue_guard guard(url, q);
    worker_process w(url, q, {"--async"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    constexpr std::size_t jobs = 2000;
    amqp::field_table sleep;
    sleep.set("x-echo-sleep-ms", std::int32_t{1000});
    const auto begun = steady::now();
    const auto published = publish_many(url, q, "slow", std::vector<sys::time_point>(jobs, sys::now()), sleep);
    const bool all = w.wait_count(
        "succeeded", jobs, std::chrono::duration_cast<std::chrono::milliseconds>(5s - (steady::now() - begun)));
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - begun);
    REQUIRE_MESSAGE(all, w.count("succeeded") << " of " << jobs << " succeeded within 5 s\n" << w.transcript());
    MESSAGE("2 000 jobs of 1 000 ms each: all succeeded " << took.count() << " ms after the first publish");
    std::map<std::string, int> runs;
    for (const auto& e : w.of("run")) {
        ++runs[e.id()];
        CHECK_MESSAGE(e.at() >= e.due(), "ran early: " << e.raw);
    }
    for (const auto& [id, due] : published) CHECK_MESSAGE(runs[id] == 1, id << " ran " << runs[id] << " times");
    CHECK(runs.size() == jobs);
    CHECK(w.count("retry") == 0);
    CHECK(w.count("dropped") == 0);
    w.signal(SIGTERM);
    const auto code = w.wait_exit(20s);
    REQUIRE_MESSAGE(code.has_value(), w.transcript());
    CHECK(*code == 0);
}

TEST_CASE("echo_worker --async: SIGTERM with a coroutine past its grace: abandoned (not acked), exit 0; "
          "--max-in-flight without --async exits 2") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("proc-async-stop");
    queue_guard guard(url, q);
    {
        worker_process bad(url, q, {"--max-in-flight", "5"});
        const auto code = bad.wait_exit(10s);
        REQUIRE(code.has_value());
        CHECK(*code == 2);
    }
    worker_process w(url, q, {"--async", "--shutdown-grace-ms", "300"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    amqp::field_table sleep;
    sleep.set("x-echo-sleep-ms", std::int32_t{60000});
    publish_many(url, q, "long", {sys::now()}, sleep);
    REQUIRE_MESSAGE(w.wait_count("run", 1, 10s), w.transcript());
    const auto term_at = steady::now();
    w.signal(SIGTERM);
    const auto code = w.wait_exit(20s);
    REQUIRE_MESSAGE(code.has_value(), w.transcript());
    CHECK(*code == 0);
    CHECK(steady::now() - term_at < 10s);  // it did not wait for the 60 s timer
    w.read_rest();
    CHECK_MESSAGE(w.count("abandoned") == 1, w.transcript());
    CHECK_MESSAGE(w.count("succeeded") == 0, w.transcript());
    CHECK_MESSAGE(w.count("retry") == 0, w.transcript());
    // Not acknowledged: back in the queue for the next worker.
    const auto deadline = steady::now() + 10s;
    while (ready_in(url, q) != 1 && steady::now() < deadline) std::this_thread::sleep_for(50ms);
    CHECK(ready_in(url, q) == 1);
}
