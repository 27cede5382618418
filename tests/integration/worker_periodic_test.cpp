// Periodic schedules run by echo_worker processes against the real broker
// (docs/periodic.md): an every-second chain on three workers runs once per
// nominal time, on time and never two at once; misfire policies after a
// 10 s stop of every worker; and the chain stays single whatever moment a worker is
// killed with SIGKILL: (a) while an occurrence runs, (b) between its
// successor's confirm and its own ack (two successors then exist: the run
// claim picks one), (c) while it holds the successor. Counting: a second
// run is allowed only for the occurrence whose first run started before the
// kill (at least once); every other nominal time runs exactly once, with no
// gap. Workers are signalled and killed by their pid only.
#include "private_broker.hpp"
#include "control_entries.hpp"
#include "tcp_relay.hpp"
#include "wakeup_lateness.hpp"
#include "worker_process.hpp"

#include "tarry/periodic/recurrence.hpp"
#include "tarry/publisher/publisher.hpp"

#include <algorithm>
#include <csignal>
#include <map>
#include <memory>
#include <set>

using namespace consumer_it;

namespace {

/// Upserts schedule `id` of `q`: every `every`, each occurrence's handler
/// sleeping `sleep_ms` (x-echo-sleep-ms).
void upsert_every(connected_client& c, const std::string& q, const std::string& id, std::chrono::milliseconds every,
                  std::int64_t sleep_ms) {
    amqp::message m("tick");
    m.properties.headers.emplace();
    m.properties.headers->set("x-echo-sleep-ms", sleep_ms);
    const auto spec = tarry::periodic::parse_spec("every " + std::to_string(every.count()) + "ms");
    REQUIRE(spec.spec);
    ok(tarry::publisher(c.conn).async_upsert_schedule(q, id, *spec.spec, std::move(m), use_future));
}

/// The nominal second of a run of schedule `id` (its message_id `id@<s>`).
std::int64_t nominal_of(const worker_event& e, const std::string& id) {
    REQUIRE_MESSAGE(e.id().rfind(id + "@", 0) == 0, e.raw);
    return std::stoll(e.id().substr(id.size() + 1));
}

/// Runs per nominal second of schedule `id`, over every worker's events.
std::map<std::int64_t, int> runs_by_nominal(const std::vector<const worker_process*>& workers, const std::string& id) {
    std::map<std::int64_t, int> runs;
    for (const auto* w : workers)
        for (const auto& e : w->of("run")) ++runs[nominal_of(e, id)];
    return runs;
}

/// One chain: no gap between the first and last nominal time run (a step
/// of `every_s`), each run once but `allowed_twice` (the occurrence whose
/// first run started before a kill), which ran at most twice.
void check_one_chain(const std::map<std::int64_t, int>& runs, std::int64_t every_s,
                     std::optional<std::int64_t> allowed_twice = std::nullopt) {
    REQUIRE(!runs.empty());
    for (const auto& [nominal, n] : runs) {
        const int most = allowed_twice == nominal ? 2 : 1;
        CHECK_MESSAGE(n <= most, "@" << nominal << " ran " << n << " times");
    }
    const auto span = runs.rbegin()->first - runs.begin()->first;
    CHECK_MESSAGE(span == every_s * static_cast<std::int64_t>(runs.size() - 1), "a gap in " << runs.size() << " runs");
}

/// A queue of one test's own, deleted at its end with its control stream,
/// and a client.
struct chain_queue {
    chain_queue(const std::string& url, const std::string& prefix)
        : q(unique_name(prefix)), guard(url, q), c(url), stream{c, q} {}
    std::string q;
    queue_guard guard;
    connected_client c;
    control_stream_cleanup stream;
};

/// An echo_worker on `q` with one handler thread, ready.
std::unique_ptr<worker_process> one_thread_worker(const std::string& url, const std::string& q) {
    auto w = std::make_unique<worker_process>(url, q, std::vector<std::string>{"--workers", "1"});
    REQUIRE_MESSAGE(w->wait_ready(), w->transcript());
    return w;
}

/// Kills `w` with SIGKILL and reads what it printed last.
void kill_now(worker_process& w) {
    w.signal(SIGKILL);
    REQUIRE(w.wait_exit(10s));
    w.read_rest(200ms);
}

}  // namespace

TEST_CASE("echo_worker: an every-1-s schedule on three workers runs once per second for 30 s, one run at a time, "
          "on time") {
    // Beside it, an every-100-ms schedule on the same workers: its runs
    // count once each too, and give the lateness percentiles about 330
    // samples instead of 30 (of 30, p99 is the slowest one).
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("proc-periodic");
    queue_guard guard(url, q);
    connected_client c(url);
    control_stream_cleanup stream{c, q};
    std::vector<std::unique_ptr<worker_process>> workers;
    for (int i = 0; i < 3; ++i) {
        workers.push_back(std::make_unique<worker_process>(url, q));
        REQUIRE_MESSAGE(workers.back()->wait_ready(), workers.back()->transcript());
    }
    const auto added = tarry_test::run_process({build_root() + "/tools/tarry", "schedule", "add", "--url", url,
                                                "--queue", q, "--id", "beat", "--every-ms", "1000"},
                                               30s);
    REQUIRE_MESSAGE(added.exit_code == 0, added.out << added.err);
    // Each pulse's handler runs this long, so that two runs at once would
    // show as two starts closer than it.
    constexpr std::int64_t pulse_handler_ms = 20;
    upsert_every(c, q, "pulse", 100ms, pulse_handler_ms);
    const auto start = sys::now();
    tarry_test::wakeup_lateness_probe machine;  // the baseline: how late this machine wakes a thread meanwhile
    constexpr int seconds = 30;
    for (const auto end = steady::now() + std::chrono::seconds(seconds); steady::now() < end;)
        for (auto& w : workers) w->read_until([] { return false; }, 50ms);
    const auto stop_at = sys::now();
    const auto baseline = machine.stop();
    ok(tarry::publisher(c.conn).async_remove_schedule(q, "beat", use_future));
    ok(tarry::publisher(c.conn).async_remove_schedule(q, "pulse", use_future));
    for (auto& w : workers) w->read_until([] { return false; }, 1500ms);

    // Every run, by nominal time (its id): once each, on consecutive seconds.
    std::map<std::int64_t, int> runs;          // beat: nominal second -> runs
    std::map<std::string, int> pulse_runs;     // pulse: id -> runs
    std::vector<std::int64_t> late_us;         // both: the runs whose copy was there in time
    std::vector<std::int64_t> copy_late_us;    // the others
    // When each run's copy was confirmed, by its due time (its predecessor's
    // "scheduled" line, the successor's next_due): a pulse's successor is
    // published only once the run before it ended, 80 ms before its due
    // time, so on CI's loaded cores it may reach the broker too late to
    // start on time. The bound is on what the worker adds to a copy held in
    // time: one confirmed at least copy_ahead_us before its due time (every
    // beat's, most pulses').
    constexpr std::int64_t copy_ahead_us = 50'000;
    std::map<std::int64_t, std::int64_t> confirmed_by_due;
    for (auto& w : workers)
        for (const auto& e : w->of("scheduled")) confirmed_by_due[e.micros_of("next_due")] = e.at();
    for (auto& w : workers)
        for (const auto& e : w->of("run")) {
            const auto confirmed = confirmed_by_due.find(e.due());
            const bool in_time = confirmed == confirmed_by_due.end() || confirmed->second <= e.due() - copy_ahead_us;
            // Beyond how late the machine woke a plain thread at that very
            // mark: a stall of the whole machine is not the worker's.
            const auto machine_then = machine.lateness_at(e.due());
            (in_time ? late_us : copy_late_us).push_back(e.at() - e.due() - std::max<std::int64_t>(machine_then, 0));
            if (e.at() - e.due() > 5000)
                MESSAGE("late by " << e.at() - e.due() << " us, the machine " << machine_then << " us then (copy "
                                   << std::string(in_time ? "in time" : "late") << "): " << e.raw);
            if (e.id().rfind("pulse@", 0) == 0) {
                ++pulse_runs[e.id()];
                continue;
            }
            REQUIRE(e.id().rfind("beat@", 0) == 0);
            const auto nominal = std::stoll(e.id().substr(5));
            ++runs[nominal];
            CHECK_MESSAGE(e.due() == nominal * 1000000, e.raw);
        }
    for (const auto& [id, n] : pulse_runs) CHECK_MESSAGE(n == 1, id << " ran " << n << " times");
    CHECK_MESSAGE(pulse_runs.size() >= 250, pulse_runs.size() << " runs of the every-100-ms schedule");
    for (const auto& [nominal, n] : runs) CHECK_MESSAGE(n == 1, "beat@" << nominal << " ran " << n << " times");
    REQUIRE(!runs.empty());
    CHECK(runs.rbegin()->first - runs.begin()->first + 1 == static_cast<std::int64_t>(runs.size()));  // no gap
    const auto expected = std::chrono::duration_cast<std::chrono::seconds>(stop_at - start).count();
    CHECK_MESSAGE(std::abs(static_cast<long>(runs.size()) - static_cast<long>(expected)) <= 1,
                  runs.size() << " runs in " << expected << " s");
    // Never two at once: each pulse's handler (pulse_handler_ms long) ended
    // before the next one started. Its "succeeded" is no end to compare
    // with: an occurrence is settled after its successor's confirm, and the
    // successor may run before that confirm is back (docs/periodic.md, "The
    // chain").
    std::vector<std::int64_t> pulse_starts;
    for (auto& w : workers)
        for (const auto& e : w->of("run"))
            if (e.id().rfind("pulse@", 0) == 0) pulse_starts.push_back(e.at());
    std::sort(pulse_starts.begin(), pulse_starts.end());
    for (std::size_t i = 1; i < pulse_starts.size(); ++i)
        CHECK_MESSAGE(pulse_starts[i] - pulse_starts[i - 1] >= pulse_handler_ms * 1000,
                      "pulse@ two runs at once at " << pulse_starts[i]);
    std::sort(late_us.begin(), late_us.end());
    std::sort(copy_late_us.begin(), copy_late_us.end());
    for (auto& w : workers)
        for (const auto& e : w->of("run")) CHECK_MESSAGE(e.at() >= e.due(), "early: " << e.raw);  // never early
    CHECK_MESSAGE(late_us.size() >= runs.size(), late_us.size() << " runs with their copy in time");
    const auto p99 = tarry_test::percentile_of_sorted(late_us, 99);
    const auto machine_p99 = tarry_test::percentile_of_sorted(baseline, 99);
    MESSAGE("first nominal " << runs.begin()->first);
    MESSAGE("start - nominal - the machine's lateness then: p50 " << tarry_test::percentile_of_sorted(late_us, 50) << " us, p99 " << p99 << " us, max "
                                    << late_us.back() << " us, over " << late_us.size()
                                    << " runs whose copy was confirmed in time ("
                                    << copy_late_us.size() << " whose copy was not)");
    MESSAGE("a sleeping thread of this machine meanwhile: p50 " << tarry_test::percentile_of_sorted(baseline, 50)
                                                                << " us, p99 " << machine_p99 << " us, over "
                                                                << baseline.size() << " wake-ups");
    // The issue's bound, [0, 5 ms] at p99, on what the worker adds: each
    // run's lateness less how late this machine woke a plain sleeping thread
    // at that same mark (a stall of the whole machine hits both), on top of
    // that thread's p99 over the same 30 s (0.1 ms alone; tens of ms on 2 CI
    // cores shared with a broker and three workers).
    CHECK_MESSAGE(p99 <= 5000 + machine_p99, p99 << " us against a machine p99 of " << machine_p99 << " us");
    // Each run published its successor, but perhaps the last of each
    // schedule: one that ran as its schedule was removed publishes none
    // (docs/periodic.md, "The chain"); a pulse runs 20 ms, so that happens.
    for (const std::string prefix : {"beat@", "pulse@"}) {
        std::size_t runs = 0;
        std::size_t scheduled = 0;
        for (auto& w : workers)
            for (const auto& e : w->events())
                if (e.id().rfind(prefix, 0) == 0) {
                    if (e.what() == "run") ++runs;
                    if (e.what() == "scheduled") ++scheduled;
                }
        CHECK_MESSAGE(scheduled + 1 >= runs, prefix << ": " << scheduled << " successors of " << runs << " runs");
    }
    for (auto& w : workers) {
        w->signal(SIGTERM);
        CHECK(w->wait_exit(30s) == 0);
    }
}

TEST_CASE("echo_worker: after a 10 s stop of every worker, misfired occurrences run once (run-once), are skipped, "
          "or the latest 3 run one by one (catch-up 3)") {
    TARRY_REQUIRE_BROKER(url);
    for (const std::string policy : {"run-once", "skip", "catch-up"}) {
        CAPTURE(policy);
        const auto q = unique_name("proc-misfire");
        queue_guard guard(url, q);
        connected_client c(url);
        control_stream_cleanup stream{c, q};
        {
            // A worker declares the queue, then stops: every worker is gone.
            worker_process first(url, q);
            REQUIRE_MESSAGE(first.wait_ready(), first.transcript());
            first.signal(SIGTERM);
            REQUIRE(first.wait_exit(30s) == 0);
        }
        // No worker: the first occurrence (within 2 s) waits in the queue and
        // is found over 1 s late when the next worker starts 10 s later, when
        // 5 or 6 occurrences are missed.
        std::vector<std::string> add{build_root() + "/tools/tarry", "schedule", "add", "--url", url, "--queue", q,
                                     "--id", "m", "--every-ms", "2000", "--misfire", policy,
                                     "--misfire-threshold-ms", "1000"};
        if (policy == "catch-up") add.insert(add.end(), {"--catch-up-limit", "3"});
        const auto added = tarry_test::run_process(add, 30s);
        REQUIRE_MESSAGE(added.exit_code == 0, added.out << added.err);
        std::this_thread::sleep_for(10s);
        const auto started = sys::now();
        worker_process w(url, q);
        REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
        const std::size_t late_runs = policy == "catch-up" ? 3 : policy == "run-once" ? 1 : 0;
        REQUIRE_MESSAGE(w.wait_count("run", late_runs + 1, 15s), w.transcript());
        const auto runs = w.of("run");
        const auto nominal = [&](std::size_t i) { return std::stoll(runs[i].id().substr(2)); };
        // The late runs: the first over the threshold late; with catch-up
        // the latest 3 nominal times up to then, one by one, oldest first.
        // Then back on time.
        if (late_runs > 0) CHECK(runs[0].at() - runs[0].due() > 1000000);
        for (std::size_t i = 0; i < late_runs; ++i) {
            CAPTURE(i);
            CHECK(nominal(i) * 1000000 <= runs[0].at());
            if (i > 0) CHECK(nominal(i) == nominal(i - 1) + 2);
        }
        CHECK(runs[late_runs].at() - runs[late_runs].due() < 1000000);
        CHECK(nominal(late_runs) * 1000000 > micros(started));
        // The first occurrence, the one that waited, was skipped unless it ran.
        CHECK_MESSAGE(w.count("skipped") == (policy == "run-once" ? 0u : 1u), w.transcript());
        if (policy != "run-once") CHECK(w.of("skipped")[0].due() < micros(started) - 8000000);
        if (policy == "catch-up")  // the latest three: the next one was not yet due when the first ran
            CHECK((nominal(2) + 2) * 1000000 > runs[0].at());
        std::set<std::string> ids;
        for (const auto& r : runs) CHECK_MESSAGE(ids.insert(r.id()).second, r.id() << " ran twice");
        ok(tarry::publisher(c.conn).async_remove_schedule(q, "m", use_future));
        w.signal(SIGTERM);
        CHECK(w.wait_exit(30s) == 0);
    }
}

TEST_CASE("echo_worker: (a) killed while an occurrence runs: the next worker runs it again, then one chain") {
    TARRY_REQUIRE_BROKER(url);
    chain_queue cq(url, "chain-a");
    auto w1 = one_thread_worker(url, cq.q);
    upsert_every(cq.c, cq.q, "a", 2000ms, 1000);
    // The second run: the worker reads the control stream by then.
    REQUIRE_MESSAGE(w1->wait_count("run", 2, 10s), w1->transcript());
    const auto fault = nominal_of(w1->of("run")[1], "a");
    kill_now(*w1);
    CHECK(w1->index_of("succeeded", w1->of("run")[1].id()) < 0);  // killed mid-run
    auto w2 = one_thread_worker(url, cq.q);
    REQUIRE_MESSAGE(w2->wait_count("run", 3, 15s), w2->transcript());
    REQUIRE_MESSAGE(w2->wait_count("succeeded", 3, 5s), w2->transcript());
    const auto runs = runs_by_nominal({w1.get(), w2.get()}, "a");
    check_one_chain(runs, 2, fault);
    CHECK(runs.at(fault) == 2);  // at least once: it ran again on w2
    CHECK(nominal_of(w2->of("run")[0], "a") == fault);
    w2->signal(SIGTERM);
    CHECK(w2->wait_exit(30s) == 0);
}

TEST_CASE("echo_worker: (b) killed between a successor's confirm and its occurrence's ack: two successors, one runs") {
    // The worker's consuming connection goes through a relay that, once the
    // occurrence runs, silences it towards the broker: the successor (on the
    // copies connection) is confirmed, the ack never arrives. Then the
    // worker is killed and the relay cut: the broker redelivers the
    // occurrence, whose second run publishes a second successor.
    TARRY_REQUIRE_BROKER(url);
    chain_queue cq(url, "chain-b");
    const auto& q = cq.q;
    const auto direct = amqp::parse_url(url).config;
    tarry_test::tcp_relay relay(direct.host, direct.effective_port());
    const auto relayed = "amqp://guest:guest@127.0.0.1:" + std::to_string(relay.port()) + "/%2F";
    auto w1 = one_thread_worker(relayed, q);
    REQUIRE(relay.accepted() == 2);  // the copies connection first, then the consuming one
    upsert_every(cq.c, q, "b", 2000ms, 300);
    REQUIRE_MESSAGE(w1->wait_count("run", 2, 10s), w1->transcript());
    const auto fault_id = w1->of("run")[1].id();
    const auto fault = nominal_of(w1->of("run")[1], "b");
    relay.hold_upstream(1);
    REQUIRE_MESSAGE(w1->read_until([&] { return w1->index_of("succeeded", fault_id) >= 0; }, 5s), w1->transcript());
    CHECK(w1->index_of("scheduled", fault_id) >= 0);  // its successor was confirmed before the ack went out
    kill_now(*w1);
    relay.cut_all();
    auto w2 = one_thread_worker(url, q);
    REQUIRE_MESSAGE(w2->wait_count("run", 4, 15s), w2->transcript());
    REQUIRE_MESSAGE(w2->wait_count("succeeded", 4, 5s), w2->transcript());
    const auto runs = runs_by_nominal({w1.get(), w2.get()}, "b");
    check_one_chain(runs, 2, fault);
    CHECK(runs.at(fault) == 2);  // redelivered: it ran again on w2 and published a second successor
    const auto dedup = w2->of("deduplicated");
    REQUIRE_MESSAGE(dedup.size() == 1, w2->transcript());
    CHECK(nominal_of(dedup[0], "b") == fault + 2);  // one of the two successors, acked unrun
    w2->signal(SIGTERM);
    CHECK(w2->wait_exit(30s) == 0);
}

TEST_CASE("echo_worker: (c) killed while it holds the successor: the next worker runs it once, on time") {
    TARRY_REQUIRE_BROKER(url);
    chain_queue cq(url, "chain-c");
    auto w1 = one_thread_worker(url, cq.q);
    upsert_every(cq.c, cq.q, "c", 3000ms, 0);
    REQUIRE_MESSAGE(w1->wait_count("succeeded", 2, 12s), w1->transcript());
    std::this_thread::sleep_for(300ms);  // the successor is delivered, held and claimed
    kill_now(*w1);
    const auto held = nominal_of(w1->of("run").back(), "c") + 3;
    auto w2 = one_thread_worker(url, cq.q);
    REQUIRE_MESSAGE(w2->wait_count("run", 2, 15s), w2->transcript());
    const auto runs = runs_by_nominal({w1.get(), w2.get()}, "c");
    check_one_chain(runs, 3);
    const auto first = w2->of("run")[0];
    CHECK(nominal_of(first, "c") == held);
    CHECK(first.at() >= first.due());
    CHECK(w2->count("deduplicated") == 0);
    w2->signal(SIGTERM);
    CHECK(w2->wait_exit(30s) == 0);
}
