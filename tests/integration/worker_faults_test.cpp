// The consumer's promises under faults, black-box: echo_worker against the
// real broker, where the broker's own behaviour is the point (it closes a
// connection, it times a consumer out, it redelivers what was not
// acknowledged). The same faults are unit-tested on the consumer's core
// (tests/unit/consumer/consumer_core_test.cpp).
#include "private_broker.hpp"
#include "tcp_relay.hpp"
#include "worker_process.hpp"

#include <algorithm>
#include <csignal>
#include <map>
#include <random>
#include <set>

using namespace consumer_it;

namespace {

/// The pids of the connections named exactly `name` (not its "(copies)" twin).
std::vector<std::string> consuming_connection(const std::string& dir, const std::string& name) {
    std::vector<std::string> out;
    for (auto& pid : tarry_test::private_broker::connection_pids(dir, name)) out.push_back(pid);
    const auto copies = tarry_test::private_broker::connection_pids(dir, name + " (copies)");
    std::erase_if(out, [&](const std::string& p) { return std::find(copies.begin(), copies.end(), p) != copies.end(); });
    return out;
}

/// How many events of kind `what` each id has.
std::map<std::string, int> per_id(const worker_process& w, const std::string& what) {
    std::map<std::string, int> n;
    for (const auto& e : w.of(what)) ++n[e.id()];
    return n;
}

}  // namespace

TEST_CASE("echo_worker: a job failing while the broker closes the connection publishes no retry; attempt 2 runs once") {
    TARRY_REQUIRE_BROKER(url);
    TARRY_REQUIRE_BROKER_DIR(dir);
    const auto q = unique_name("fault-closed");
    const auto name = unique_name("fault-closed-conn");
    queue_guard guard(url, q);
    worker_process w(url_named(url, name), q, {"--retry-base-ms", "100"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    // Looked up before the job runs: only the close (rabbitmqctl, a second
    // or more on a loaded machine) must fit in the handler's sleep.
    const auto pids = consuming_connection(*dir, name);
    REQUIRE(pids.size() == 1);
    {
        connected_client c(url);
        auto ch = confirm_channel(c);
        // Sleeps 3 s, then fails on attempt 1.
        publish_raw(ch, q, "slow-fail", {{"x-echo-sleep-ms", std::int32_t{3000}}, {"x-echo-fail", std::int32_t{1}}});
    }
    REQUIRE_MESSAGE(w.read_until([&] { return w.count("run") >= 1; }, 15s), w.transcript());
    const auto handler_ends = steady::now() + 3s;
    auto closed = tarry_test::private_broker::broker_ctl(*dir, {"close_connection", pids[0], "test closes it"});
    REQUIRE_MESSAGE(closed.exit_code == 0, closed.err);
    REQUIRE_MESSAGE(steady::now() < handler_ends - 200ms,
                    "rabbitmqctl took longer than the handler's sleep: the close came too late to judge");
    // The first run's failure comes after the loss: dropped, no retry copy.
    // The redelivery runs attempt 1 again, fails, is retried; attempt 2 succeeds.
    REQUIRE_MESSAGE(w.wait_count("succeeded", 1, 30s), w.transcript());
    w.read_until([] { return false; }, 1500ms);  // anything late would show now
    CHECK_MESSAGE(w.count("dropped") == 1, w.transcript());
    CHECK_MESSAGE(w.count("retry") == 1, w.transcript());
    CHECK_MESSAGE(w.count("succeeded") == 1, w.transcript());
    int second_attempts = 0;
    for (const auto& e : w.of("run")) second_attempts += e.field("attempt") == "2";
    CHECK_MESSAGE(second_attempts == 1, w.transcript());
    CHECK(ready_in(url, q) == 0);
    w.signal(SIGTERM);
    CHECK(w.wait_exit(20s) == 0);
}

TEST_CASE("echo_worker: SIGTERM with a 30 s handler and a 1 s grace exits in time; the job is abandoned, not lost") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("fault-grace");
    queue_guard guard(url, q);
    worker_process w(url, q, {"--shutdown-grace-ms", "1000"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    {
        connected_client c(url);
        auto ch = confirm_channel(c);
        publish_raw(ch, q, "too-slow", {{"x-echo-sleep-ms", std::int32_t{30000}}});
    }
    REQUIRE_MESSAGE(w.read_until([&] { return w.count("run") >= 1; }, 15s), w.transcript());
    const auto term_at = steady::now();
    w.signal(SIGTERM);
    const auto code = w.wait_exit(15s);
    const auto took = steady::now() - term_at;
    REQUIRE_MESSAGE(code.has_value(), "no exit 15 s after SIGTERM\n" << w.transcript());
    CHECK_MESSAGE(*code == 0, w.transcript());
    // shutdown_grace (1 s) + close_timeout (5 s) at most, not the handler's 30 s.
    CHECK(took < 6500ms);
    w.read_rest();
    const auto abandoned = w.of("abandoned");
    REQUIRE_MESSAGE(abandoned.size() == 1, w.transcript());
    CHECK(abandoned[0].id() == "too-slow");
    CHECK_FALSE(abandoned[0].field("reason").empty());
    CHECK_MESSAGE(w.count("succeeded") == 0, w.transcript());
    // Never acknowledged: the broker has it back.
    CHECK(ready_in(url, q) == 1);
}

TEST_CASE("echo_worker: a due backlog under a 5 s consumer_timeout: each job runs once, none is timed out") {
    // One worker, 12 jobs due now taking 1 s each: without the backlog rule
    // the broker timed the consumer out and jobs ran twice.
    if (!tarry_test::amqp_url()) {
        MESSAGE("SKIPPED: TARRY_TEST_AMQP_URL is not set (run under scripts/with-broker)");
        ++::tarry_test::runtime_skips();
        return;
    }
    tarry_test::private_broker broker({"--consumer-timeout-ms", "5000", "--tick-ms", "1000"});
    const auto q = unique_name("fault-backlog");
    worker_process w(broker.url(), q,
                     {"--workers", "1", "--consumer-timeout-ms", "5000", "--hold-horizon-ms", "3000"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    {
        connected_client c(broker.url());
        auto ch = confirm_channel(c);
        for (int i = 0; i < 12; ++i)
            publish_raw(ch, q, "due-" + std::to_string(i), {{"x-echo-sleep-ms", std::int32_t{1000}}});
    }
    REQUIRE_MESSAGE(w.wait_count("succeeded", 12, 40s), w.transcript());
    w.read_until([] { return false; }, 1500ms);
    for (const auto& [id, n] : per_id(w, "run")) CHECK_MESSAGE(n == 1, id << " ran " << n << " times\n" << w.transcript());
    CHECK(per_id(w, "succeeded").size() == 12);
    CHECK_MESSAGE(w.count("dropped") == 0, w.transcript());  // no channel was closed under it
    const auto requeued = w.of("requeued");
    CHECK_MESSAGE(!requeued.empty(), w.transcript());
    for (const auto& e : requeued) CHECK(e.field("reason") == "backlog");
    CHECK(ready_in(broker.url(), q) == 0);
    w.signal(SIGTERM);
    CHECK(w.wait_exit(20s) == 0);
}

TEST_CASE("echo_worker: SIGKILL holding jobs and with jobs parked: the next worker runs every one once, none early") {
    // make test: 1 000 held and 100 parked; TARRY_FAULT_JOBS=10000 for the
    // issue's load (10 000 held, 1 000 parked), recorded in docs/reliability.md.
    TARRY_REQUIRE_BROKER(url);
    const auto scale = tarry_test::env("TARRY_FAULT_JOBS");
    const std::size_t held = scale ? std::stoul(*scale) : 1000, parked = held / 10;
    const auto q = unique_name("kill-parked");
    queue_guard guard(url, q);
    // Publishing takes about 1 s per 2 000 jobs here: held jobs fall due
    // after that and the kill; parked ones beyond the hold horizon.
    const auto lead = 3s + std::chrono::milliseconds(held / 2);
    const auto horizon = lead + 4s;
    const std::vector<std::string> opts{"--hold-horizon-ms", std::to_string(horizon.count()), "--max-held",
                                        std::to_string(held + 100)};
    auto w1 = std::make_unique<worker_process>(url, q, opts);
    REQUIRE_MESSAGE(w1->wait_ready(), w1->transcript());

    const auto t0 = sys::now();
    std::vector<sys::time_point> held_dues, parked_dues;
    for (std::size_t i = 0; i < held; ++i) held_dues.push_back(t0 + lead + 2s * i / held);
    for (std::size_t i = 0; i < parked; ++i) parked_dues.push_back(t0 + lead + horizon + 4s + 1s * i / parked);
    auto jobs = publish_many(url, q, "H", held_dues);
    jobs.merge(publish_many(url, q, "P", parked_dues));
    // Every parked copy confirmed and its original acked; the rest held.
    REQUIRE_MESSAGE(w1->wait_count("parked", parked, 30s), w1->transcript());
    REQUIRE(ready_in(url, q) == 0);
    REQUIRE_MESSAGE(sys::now() < t0 + lead - 500ms, "setup too slow: jobs would fall due before the kill");

    w1->signal(SIGKILL);
    REQUIRE(w1->wait_exit(10s) == 128 + SIGKILL);
    w1->read_rest(1s);
    CHECK(w1->count("run") == 0);
    w1.reset();

    worker_process w2(url, q, opts);
    REQUIRE_MESSAGE(w2.wait_ready(), w2.transcript());
    const auto all = held + parked;
    REQUIRE_MESSAGE(w2.wait_count("succeeded", all, 60s + lead + horizon), w2.transcript());
    w2.read_until([] { return false; }, 1s);  // a second run would show here
    std::map<std::string, int> runs;
    std::size_t early = 0;
    for (const auto& e : w2.of("run")) {
        ++runs[e.id()];
        auto it = jobs.find(e.id());
        REQUIRE_MESSAGE(it != jobs.end(), "unexpected job: " << e.raw);
        if (e.at() < it->second) ++early;
    }
    std::size_t lost = 0, twice = 0;
    for (const auto& [id, due] : jobs) {
        if (runs[id] == 0) ++lost;
        if (runs[id] > 1) ++twice;
    }
    MESSAGE(held << " held and " << parked << " parked when killed: lost " << lost << ", early " << early
                 << ", run twice " << twice);
    CHECK(lost == 0);
    CHECK(early == 0);
    CHECK(twice == 0);
    w2.signal(SIGTERM);
    CHECK(w2.wait_exit(30s) == 0);
}

TEST_CASE("echo_worker: connections cut every 2-5 s while jobs fail once and retry: each succeeds, none lost or early") {
    // Both of the worker's connections go through a relay that cuts them
    // all at once. make test: 300 jobs; TARRY_FAULT_JOBS=10000 for the
    // issue's load. A second run of an attempt is allowed only when a cut
    // came between the job's first run (or the worker's noticing it, below)
    // and that second run.
    TARRY_REQUIRE_BROKER(url);
    const auto scale = tarry_test::env("TARRY_FAULT_JOBS");
    const std::size_t n = scale ? std::stoul(*scale) : 300;
    const auto q = unique_name("cuts");
    queue_guard guard(url, q);
    const auto direct = amqp::parse_url(url).config;
    tarry_test::tcp_relay relay(direct.host, direct.effective_port());
    const auto relayed = "amqp://guest:guest@127.0.0.1:" + std::to_string(relay.port()) + "/%2F";
    worker_process w(relayed, q, {"--retry-base-ms", "100", "--workers", "8"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());

    const auto spread = std::chrono::milliseconds(6000 + n);  // 6 s, or 16 s for 10 000
    std::vector<sys::time_point> dues;
    const auto t0 = sys::now() + 1s;
    for (std::size_t i = 0; i < n; ++i) dues.push_back(t0 + spread * i / n);
    const auto jobs = publish_many(url, q, "C", dues, amqp::field_table{{"x-echo-fail", std::int64_t{1}}});

    std::vector<std::int64_t> cuts;  // microseconds since the epoch
    std::mt19937 random(7);
    auto next_cut = steady::now() + std::chrono::milliseconds(2000 + random() % 3000);
    const auto deadline = steady::now() + spread + 90s;
    // Until every job has succeeded: a second run after a cut succeeds too,
    // so counting events would stop before the last jobs ran.
    while (w.jobs_with("succeeded") < n && steady::now() < deadline) {
        w.read_until([] { return false; }, 50ms);
        if (steady::now() >= next_cut && sys::now() < t0 + spread) {
            cuts.push_back(micros(sys::now()));
            relay.cut_all();
            next_cut = steady::now() + std::chrono::milliseconds(2000 + random() % 3000);
        }
    }
    w.read_until([] { return false; }, 2s);  // a late second run would show here

    std::map<std::string, std::vector<std::int64_t>> first_runs;         // id -> starts
    std::map<std::pair<std::string, std::string>, std::vector<std::int64_t>> by_attempt;
    std::size_t early = 0;
    for (const auto& e : w.of("run")) {
        first_runs[e.id()].push_back(e.at());
        by_attempt[{e.id(), e.field("attempt")}].push_back(e.at());
        if (e.at() < e.due()) ++early;
        auto it = jobs.find(e.id());
        if (it != jobs.end() && e.at() < it->second) ++early;
    }
    // The worker learns of a cut a little after it: a run it starts in
    // between began before the fault as far as it can know. That moment is
    // its first `dropped` event after the cut (held jobs dropped with the
    // channel), or a second later when it held nothing.
    std::vector<std::int64_t> dropped_at;
    for (const auto& e : w.of("dropped")) dropped_at.push_back(e.at());
    std::sort(dropped_at.begin(), dropped_at.end());
    const auto noticed = [&](std::int64_t cut) {
        auto it = std::lower_bound(dropped_at.begin(), dropped_at.end(), cut);
        return it != dropped_at.end() && *it < cut + 1000000 ? *it : cut + 1000000;
    };
    std::size_t allowed = 0, defects = 0;
    for (auto& [key, starts] : by_attempt) {
        std::sort(starts.begin(), starts.end());
        auto& all = first_runs[key.first];
        const auto job_first = *std::min_element(all.begin(), all.end());
        for (std::size_t i = 1; i < starts.size(); ++i) {
            const bool cut_between = std::any_of(cuts.begin(), cuts.end(), [&](std::int64_t c) {
                return job_first < noticed(c) && c < starts[i];
            });
            (cut_between ? allowed : defects) += 1;

        }
    }
    std::set<std::string> succeeded;
    for (const auto& e : w.of("succeeded")) succeeded.insert(e.id());
    std::size_t lost = 0;
    for (const auto& [id, due] : jobs)
        if (!succeeded.count(id)) ++lost;
    MESSAGE(n << " jobs, " << cuts.size() << " cuts (relayed connections " << relay.accepted() << "): lost " << lost
              << ", early " << early << ", dead " << w.count("dead") << ", dropped " << w.count("dropped")
              << ", duplicates after a cut " << allowed << ", other second runs " << defects);
    CHECK(cuts.size() >= 2);
    CHECK(lost == 0);
    CHECK(early == 0);
    CHECK(defects == 0);
    CHECK(w.count("dead") == 0);
    w.signal(SIGTERM);
    CHECK(w.wait_exit(30s) == 0);
}
