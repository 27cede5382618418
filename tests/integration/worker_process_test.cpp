// The samples as processes against the real broker: `echo_worker`
// (JSON-lines events, valid JSON whatever the message_id, signals, retries) fed by `publish` and
// `replay_dead_letters`. A worker
// killed with SIGKILL loses nothing (its held jobs run in the next worker);
// SIGTERM gives held jobs back and lets a running job finish; bad options
// are refused at start. Workers are signalled and killed by their pid only.
#include "private_broker.hpp"
#include "control_entries.hpp"
#include "python_peer.hpp"
#include "worker_process.hpp"

#include "tarry/publisher/publisher.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>

using namespace consumer_it;

namespace {

std::string publish_path() { return build_root() + "/samples/publish"; }

/// A URL nothing listens on, for runs that must stop before connecting.
const char* const nowhere_url = "amqp://guest:guest@127.0.0.1:9/%2F";


/// Ready messages in `q` (passive queue.declare).
std::uint32_t ready_count(const amqp::channel& ch, const std::string& q) {
    return value_of(ch.async_declare_queue(passive_queue(q), use_future)).message_count;
}

/// Polls `q` until it holds `n` ready messages (at most `t`); the last count.
std::uint32_t wait_ready_count(const amqp::channel& ch, const std::string& q, std::uint32_t n,
                               std::chrono::milliseconds t) {
    const auto deadline = steady::now() + t;
    for (;;) {
        const auto c = ready_count(ch, q);
        if (c == n || steady::now() >= deadline) return c;
        std::this_thread::sleep_for(50ms);
    }
}

/// Ready messages in `q`, counted on a connection of its own (opened and
/// closed here).
std::uint32_t ready_count(const std::string& url, const std::string& q) {
    connected_client c(url);
    return ready_count(c.open_channel(), q);
}

/// Publishes jobs `prefix-000`... due at `dues` (perform_job_at, a double),
/// each confirmed; the due of each id in microseconds.
std::map<std::string, std::int64_t> publish_jobs(const amqp::channel& ch, const std::string& q,
                                                 const std::string& prefix,
                                                 const std::vector<sys::time_point>& dues) {
    std::map<std::string, std::int64_t> out;
    for (std::size_t i = 0; i < dues.size(); ++i) {
        char id[64];
        std::snprintf(id, sizeof id, "%s-%03zu", prefix.c_str(), i);
        const double at = epoch(dues[i]);
        publish_raw(ch, q, id, {{"perform_job_at", at}});
        out[id] = micros_of_double(at);
    }
    return out;
}

/// Checks a worker's run events against the jobs published: each id ran
/// exactly once, with the due it was given, never before it.
void check_runs(const worker_process& w, const std::map<std::string, std::int64_t>& jobs) {
    std::map<std::string, int> runs;
    for (const auto& e : w.of("run")) {
        ++runs[e.id()];
        auto it = jobs.find(e.id());
        if (it == jobs.end()) {
            FAIL_CHECK("unexpected job ran: " << e.raw);
            continue;
        }
        CHECK_MESSAGE(std::llabs(e.due() - it->second) <= 1, "due differs from the one published: " << e.raw);
        CHECK_MESSAGE(e.at() >= e.due(), "ran early: " << e.raw);
        CHECK_MESSAGE(e.at() >= it->second, "ran before its published due: " << e.raw);
    }
    for (const auto& [id, due] : jobs) CHECK_MESSAGE(runs[id] == 1, id << " ran " << runs[id] << " times");
}

double max_lateness_ms(const worker_process& w) {
    double worst = 0;
    for (const auto& e : w.of("run")) worst = std::max(worst, static_cast<double>(e.at() - e.due()) / 1000.0);
    return worst;
}

}  // namespace

// (The publish sample's own output and exit codes: publish_sample_test.cpp.)

// ---- echo_worker ----

TEST_CASE("echo_worker: jobs published out of order by the publish sample run in due order, never early") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("proc-e2e");
    queue_guard guard(url, q);
    worker_process w(url, q, {"--workers", "2"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    const auto ready = w.of("ready");
    CHECK(ready.front().field("queue") == q);

    // Delays 1 s apart, published out of order.
    const std::vector<int> delays_ms{3500, 1500, 5500, 2500, 4500};
    struct published {
        std::string id;
        std::int64_t earliest;  ///< publish start + delay: the due cannot be earlier
        std::int64_t printed;   ///< the due the sample printed
    };
    std::vector<published> jobs;
    const std::regex printed("published (\\S+) due ([0-9]+\\.[0-9]{6}) to (\\S+)\n");
    for (std::size_t i = 0; i < delays_ms.size(); ++i) {
        const std::string id = "e2e-" + std::to_string(delays_ms[i]);
        const auto before = micros(sys::now());
        auto r = tarry_test::run_process({publish_path(), "--url", url, "--queue", q, "--id", id, "--delay-ms",
                                          std::to_string(delays_ms[i])},
                                         30s);
        REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
        std::smatch m;
        REQUIRE_MESSAGE(std::regex_match(r.out, m, printed), r.out);
        jobs.push_back({id, before + delays_ms[i] * 1000, *json_line::epoch_micros(m[2].str())});
    }

    REQUIRE_MESSAGE(w.wait_count("succeeded", jobs.size(), 30s), w.transcript());
    const auto runs = w.of("run");
    REQUIRE_MESSAGE(runs.size() == jobs.size(), w.transcript());

    std::map<std::string, const published*> by_id;
    for (const auto& j : jobs) by_id[j.id] = &j;
    std::set<std::string> seen;
    for (const auto& e : runs) {
        CAPTURE(e.raw);
        REQUIRE(by_id.count(e.id()) == 1);
        const auto& j = *by_id[e.id()];
        seen.insert(e.id());
        CHECK(e.field("attempt") == "1");
        CHECK(e.at() >= e.due());        // never early
        CHECK(e.at() >= j.earliest);     // not before publish time + delay
        CHECK(e.due() >= j.earliest);
        // The job's own due, as the sample reported it (a publish is quick).
        CHECK(std::llabs(e.due() - j.printed) < 500'000);
    }
    CHECK(seen.size() == jobs.size());

    // Printed in due order: the order of the delays.
    auto by_due = jobs;
    std::sort(by_due.begin(), by_due.end(),
              [](const published& a, const published& b) { return a.earliest < b.earliest; });
    std::vector<std::string> expected, actual;
    for (const auto& j : by_due) expected.push_back(j.id);
    for (const auto& e : runs) actual.push_back(e.id());
    CHECK(actual == expected);
    for (std::size_t i = 1; i < runs.size(); ++i) CHECK(runs[i - 1].due() <= runs[i].due());
    MESSAGE("worst lateness " << max_lateness_ms(w) << " ms");

    w.signal(SIGTERM);
    CHECK_MESSAGE(w.wait_exit(30s) == 0, w.transcript());
}

TEST_CASE("echo_worker: SIGKILL while holding 100 jobs loses none; the next worker runs all, none early") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("proc-kill");
    queue_guard guard(url, q);
    auto w1 = std::make_unique<worker_process>(url, q);
    REQUIRE_MESSAGE(w1->wait_ready(), w1->transcript());

    connected_client c(url);
    auto ch = confirm_channel(c);
    const auto t0 = sys::now();
    std::vector<sys::time_point> dues;
    for (int i = 0; i < 100; ++i) dues.push_back(t0 + 4s + i * 20ms);  // 4 s to 6 s ahead
    const auto jobs = publish_jobs(ch, q, "kill", dues);

    // All delivered to worker 1 (none ready in the queue: all unacked).
    auto probe = c.open_channel();
    REQUIRE(wait_ready_count(probe, q, 0, 10s) == 0);
    std::this_thread::sleep_for(300ms);  // settle: let worker 1 take them in
    REQUIRE_MESSAGE(sys::now() < t0 + 3500ms, "setup too slow: jobs would fall due before the kill");

    w1->signal(SIGKILL);
    REQUIRE(w1->wait_exit(10s) == 128 + SIGKILL);
    w1->read_rest();
    CHECK_MESSAGE(w1->count("run") == 0, w1->transcript());
    w1.reset();

    worker_process w2(url, q);
    REQUIRE_MESSAGE(w2.wait_ready(), w2.transcript());
    REQUIRE_MESSAGE(w2.wait_count("succeeded", 100, 30s), w2.transcript());
    w2.read_until([] { return false; }, 500ms);  // anything more (a duplicate) would show here
    CHECK(w2.count("run") == 100);
    check_runs(w2, jobs);
    MESSAGE("worst lateness " << max_lateness_ms(w2) << " ms");

    w2.signal(SIGTERM);
    REQUIRE_MESSAGE(w2.wait_exit(30s) == 0, w2.transcript());
    CHECK(ready_count(url, q) == 0);
}

TEST_CASE("echo_worker: the ready line comes first, even when jobs wait in the queue as it starts") {
    // Once found by the nemesis: a restarted worker printed a job event
    // before its ready line, and the checker took it for the end of the
    // life before (a crash after its kill).
    TARRY_REQUIRE_BROKER(url);
    const std::string q = unique_name("ready-first");
    queue_guard guard(url, q);
    {
        worker_process first(url, q);  // declares the queues
        REQUIRE_MESSAGE(first.wait_ready(), first.transcript());
        first.signal(SIGTERM);
        REQUIRE(first.wait_exit(30s) == 0);
    }
    // Jobs due now, and cancelled ones: a cancelled job's event is printed
    // as soon as its delivery arrives, on the consumer's I/O thread.
    std::vector<sys::time_point> dues(300, sys::now());
    const auto ids = publish_many(url, q, "waiting", dues);
    connected_client c(url);
    control_stream_cleanup stream{c, q};
    tarry::publisher pub(c.conn);
    for (const auto& [id, due] : ids)
        if (id.back() % 2 == 0) ok(pub.async_cancel(q, id, use_future));
    worker_process w(url, q);
    const auto ended = [&] { return w.count("succeeded") + w.count("cancelled") >= dues.size(); };
    REQUIRE_MESSAGE(w.read_until(ended, 30s), w.transcript());
    REQUIRE(w.count("cancelled") > 0);
    CHECK_MESSAGE(w.events().front().what() == "ready", w.transcript());
    CHECK(w.count("ready") == 1);
    w.signal(SIGTERM);
    CHECK(w.wait_exit(30s) == 0);
}

TEST_CASE("echo_worker: SIGTERM gives held jobs back (requeued), exits 0; a new worker runs them on time") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("proc-term");
    queue_guard guard(url, q);
    auto w1 = std::make_unique<worker_process>(url, q, std::vector<std::string>{"--shutdown-grace-ms", "5000"});
    REQUIRE_MESSAGE(w1->wait_ready(), w1->transcript());

    std::map<std::string, std::int64_t> jobs;
    sys::time_point t0;
    {
        connected_client c(url);
        auto ch = confirm_channel(c);
        t0 = sys::now();
        std::vector<sys::time_point> dues;
        for (int i = 0; i < 20; ++i) dues.push_back(t0 + 5s + i * 10ms);
        jobs = publish_jobs(ch, q, "term", dues);
        auto probe = c.open_channel();
        REQUIRE(wait_ready_count(probe, q, 0, 10s) == 0);
    }
    std::this_thread::sleep_for(300ms);  // settle: let the worker take them in

    const auto stop_start = steady::now();
    w1->signal(SIGTERM);
    const auto code = w1->wait_exit(15s);  // grace 5 s, nothing running: quick
    const auto stop_took = steady::now() - stop_start;
    REQUIRE_MESSAGE(code.has_value(), "no exit 15 s after SIGTERM\n" << w1->transcript());
    CHECK_MESSAGE(*code == 0, w1->transcript());
    CHECK(stop_took < 6s);
    w1->read_rest();
    CHECK_MESSAGE(w1->count("run") == 0, w1->transcript());
    CHECK_MESSAGE(w1->count("requeued") == 20, w1->transcript());
    std::set<std::string> requeued;
    for (const auto& e : w1->of("requeued")) requeued.insert(e.id());
    CHECK(requeued.size() == 20);
    for (const auto& [id, due] : jobs) CHECK_MESSAGE(requeued.count(id) == 1, id << " not requeued");
    CHECK(w1->index_of("stopped") > w1->index_of("requeued"));
    w1.reset();

    // The worker's connection is closed: the 20 are ready in the queue.
    {
        connected_client c(url);
        auto probe = c.open_channel();
        CHECK(wait_ready_count(probe, q, 20, 5s) == 20);
    }
    REQUIRE_MESSAGE(sys::now() < t0 + 4500ms, "too slow: the jobs fall due before the restart");

    worker_process w2(url, q);
    REQUIRE_MESSAGE(w2.wait_ready(), w2.transcript());
    REQUIRE_MESSAGE(w2.wait_count("succeeded", 20, 30s), w2.transcript());
    w2.read_until([] { return false; }, 300ms);
    CHECK(w2.count("run") == 20);
    check_runs(w2, jobs);
    // On time: held by the new worker before they fell due.
    const double worst = max_lateness_ms(w2);
    MESSAGE("worst lateness " << worst << " ms");
    CHECK(worst < 2000);

    w2.signal(SIGTERM);
    REQUIRE_MESSAGE(w2.wait_exit(30s) == 0, w2.transcript());
}

TEST_CASE("echo_worker: SIGTERM during a running job lets it finish, then exits 0 with the queue empty") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("proc-running");
    queue_guard guard(url, q);
    worker_process w(url, q, {"--shutdown-grace-ms", "10000"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    {
        connected_client c(url);
        auto ch = confirm_channel(c);
        publish_raw(ch, q, "slow-1",
                    {{"perform_job_at", epoch(sys::now())}, {"x-echo-sleep-ms", std::int32_t{1500}}});
    }
    REQUIRE_MESSAGE(w.read_until([&] { return w.index_of("run", "slow-1") >= 0; }, 15s), w.transcript());
    const auto term_at = steady::now();
    w.signal(SIGTERM);
    const auto code = w.wait_exit(20s);
    const auto took = steady::now() - term_at;
    REQUIRE_MESSAGE(code.has_value(), "no exit 20 s after SIGTERM\n" << w.transcript());
    CHECK_MESSAGE(*code == 0, w.transcript());
    w.read_rest();
    const long succeeded = w.index_of("succeeded", "slow-1");
    const long stopped = w.index_of("stopped");
    CHECK_MESSAGE(succeeded >= 0, w.transcript());
    CHECK_MESSAGE(stopped > succeeded, w.transcript());
    CHECK_MESSAGE(w.count("requeued") == 0, w.transcript());
    CHECK_MESSAGE(w.count("run") == 1, w.transcript());
    // It waited for the job (1.5 s from its start, most of it after the signal).
    CHECK(took > 500ms);
    CHECK(ready_count(url, q) == 0);
}

TEST_CASE("echo_worker --url-file: the URLs from a file (blank and # lines skipped) run a job; a bad file exits 2") {
    TARRY_REQUIRE_BROKER(url);
    const auto dir = output_dir("url-file");
    const auto file = (dir / "urls").string();
    // A node that refuses first, then the broker: both read, failed over.
    std::ofstream(file) << "# the nodes\n\n" << nowhere_url << "\n" << url << "  \r\n";
    const std::string q = unique_name("url-file");
    queue_guard guard(url, q);
    worker_process w({"--url-file", file, "--queue", q});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    run_one_job_then_stop(w, url, q, "from-url-file");

    const auto empty = (dir / "empty").string();
    std::ofstream(empty) << "# nothing\n\n";
    for (const auto& bad : std::vector<std::vector<std::string>>{
             {"--url-file", empty, "--queue", q},
             {"--url-file", (dir / "missing").string(), "--queue", q},
             {"--url-file", file, "--url", url, "--queue", q},
             {"--queue", q}}) {
        std::vector<std::string> argv{echo_worker_path()};
        argv.insert(argv.end(), bad.begin(), bad.end());
        const auto r = tarry_test::run_process(argv, 30s);
        CHECK_MESSAGE(r.exit_code == 2, bad.front() << ": " << r.err);
        CHECK(r.err.find("usage: echo_worker") != std::string::npos);
        CHECK_MESSAGE(r.err.find("guest:guest") == std::string::npos, r.err);  // no URL printed
    }
}

TEST_CASE("echo_worker: a hold horizon at or above the consumer timeout exits 1 naming consumer_timeout") {
    // Refused before connecting; a broker, when there is one, sees nothing.
    const std::string url = tarry_test::amqp_url().value_or(nowhere_url);
    const auto q = unique_name("proc-horizon");
    auto r = tarry_test::run_process({echo_worker_path(), "--url", url, "--queue", q, "--consumer-timeout-ms",
                                      "5000", "--hold-horizon-ms", "5000"},
                                     30s);
    CHECK_FALSE(r.timed_out);
    CHECK_MESSAGE(r.exit_code == 1, r.out << r.err);
    CHECK_MESSAGE(r.err.find("consumer_timeout") != std::string::npos, r.err);
    CHECK_MESSAGE(r.out.find("ready") == std::string::npos, r.out);
    if (tarry_test::amqp_url()) {
        connected_client c(url);
        auto ch = c.open_channel();
        // Nothing was declared: a passive declare of the queue fails.
        auto [ec, info] = wait(ch.async_declare_queue(passive_queue(q), use_future));
        CHECK_MESSAGE(ec, "the queue exists: " << info.message_count);
    }
}

// ---- retries ----

TEST_CASE("echo_worker: a job failing twice prints retry events with growing delays, then runs; "
          "one out of attempts is dead-lettered; replay brings it back") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("proc-retry");
    queue_guard guard(url, q);
    worker_process w(url, q, {"--retry-base-ms", "300", "--max-attempts", "3"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    connected_client c(url);
    auto ch = confirm_channel(c);
    publish_raw(ch, q, "flaky", {{"x-echo-fail", std::int32_t{2}}});
    publish_raw(ch, q, "doomed", {{"x-echo-fail", std::int32_t{3}}});
    REQUIRE_MESSAGE(w.read_until([&] { return w.count("succeeded") >= 1 && w.count("dead") >= 1; }, 20s),
                    w.transcript());
    // flaky: attempts 1, 2 fail; retries due 300 ms, then 600 ms after each failure.
    std::vector<worker_event> runs, retries;
    for (const auto& e : w.of("run"))
        if (e.id() == "flaky") runs.push_back(e);
    for (const auto& e : w.of("retry"))
        if (e.id() == "flaky") retries.push_back(e);
    REQUIRE(runs.size() == 3);
    REQUIRE(retries.size() == 2);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(runs[i].field("attempt") == std::to_string(i + 1));
        CHECK(runs[i].at() >= runs[i].due());
    }
    CHECK(retries[0].micros_of("next_due") == runs[1].due());
    CHECK(retries[1].micros_of("next_due") == runs[2].due());
    CHECK(runs[1].due() - runs[0].at() >= 300000);
    CHECK(runs[2].due() - runs[1].at() >= 600000);
    // doomed: three attempts, then the dead-letter queue.
    const auto dead = w.of("dead");
    REQUIRE(dead.size() == 1);
    CHECK(dead[0].id() == "doomed");
    CHECK(dead[0].field("reason").rfind("attempts-exhausted: x-echo-fail: attempt 3 of 3 fails", 0) == 0);
    // Replayed (attempts start again at 1), it fails on 1..3 again and comes back dead:
    // proof it ran again from attempt 1.
    const auto replay = tarry_test::run_process(
        {build_root() + "/samples/replay_dead_letters", "--url", url, "--queue", q}, 30s);
    CHECK_MESSAGE(replay.exit_code == 0, replay.err);
    CHECK(replay.out.find("moved 1, left 0") != std::string::npos);
    REQUIRE_MESSAGE(w.wait_count("dead", 2, 20s), w.transcript());
    std::size_t doomed_runs = 0;
    for (const auto& e : w.of("run"))
        if (e.id() == "doomed") ++doomed_runs;
    CHECK(doomed_runs == 6);
    w.signal(SIGTERM);
    REQUIRE_MESSAGE(w.wait_exit(30s) == 0, w.transcript());
}

TEST_CASE("echo_worker: killed while its retry copy is in flight, the job runs again in the next worker; "
          "nothing lost") {
    // A private broker, so that its memory alarm (which stops it reading from
    // publishing connections) holds the retry copy back without touching
    // other tests.
    tarry_test::private_broker broker;
    const auto& url = broker.url();
    const auto q = unique_name("proc-retry-kill");
    auto w1 = std::make_unique<worker_process>(url, q, std::vector<std::string>{"--retry-base-ms", "200"});
    REQUIRE_MESSAGE(w1->wait_ready(), w1->transcript());
    {
        connected_client c(url);
        auto ch = confirm_channel(c);
        publish_raw(ch, q, "victim", {{"x-echo-fail", std::int32_t{1}}, {"x-echo-sleep-ms", std::int32_t{5000}}});
    }
    REQUIRE_MESSAGE(w1->wait_count("run", 1, 10s), w1->transcript());
    const auto handler_ends = std::chrono::steady_clock::now() + 5s;
    // While attempt 1 sleeps, the broker stops taking publishes: the retry
    // copy will wait unconfirmed, the original unacknowledged. (rabbitmqctl
    // takes seconds on a loaded machine; the handler sleeps long enough.)
    const auto alarm = broker.ctl({"set_vm_memory_high_watermark", "0.000001"});
    REQUIRE_MESSAGE(alarm.exit_code == 0, alarm.err);
    REQUIRE_MESSAGE(std::chrono::steady_clock::now() < handler_ends - 200ms,
                    "rabbitmqctl took longer than the handler's sleep: the alarm came too late to judge");
    std::this_thread::sleep_until(handler_ends + 1s);  // the handler has failed; the copy is stuck
    w1->read_rest(200ms);
    CHECK_MESSAGE(w1->count("retry") == 0, w1->transcript());  // never confirmed
    w1->signal(SIGKILL);
    REQUIRE(w1->wait_exit(10s) == 128 + SIGKILL);
    w1.reset();
    const auto clear = broker.ctl({"set_vm_memory_high_watermark", "0.4"});
    REQUIRE_MESSAGE(clear.exit_code == 0, clear.err);

    worker_process w2(url, q, {"--retry-base-ms", "200"});
    REQUIRE_MESSAGE(w2.wait_ready(), w2.transcript());
    REQUIRE_MESSAGE(w2.wait_count("succeeded", 1, 30s), w2.transcript());
    for (const auto& e : w2.of("run")) {
        CHECK(e.id() == "victim");
        CHECK(e.at() >= e.due());
    }
    CHECK(w2.count("run") >= 1);  // at least once more; a duplicate is allowed, a loss is not
    w2.read_until([] { return false; }, 1s);
    w2.signal(SIGTERM);
    REQUIRE_MESSAGE(w2.wait_exit(30s) == 0, w2.transcript());
    CHECK(ready_count(url, q) == 0);
    CHECK(ready_count(url, q + ".dead") == 0);
}

// ---- output ----

TEST_CASE("echo_worker: a message_id that is not UTF-8 still prints valid JSON, each bad byte as \\ufffd") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("proc-utf8");
    queue_guard guard(url, q);
    worker_process w(url, q);
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    connected_client c(url);
    auto ch = confirm_channel(c);
    // Stray bytes, a cut sequence, an encoded surrogate, then good UTF-8 (é).
    const std::string id = "bad-\xff\xfe-\xc3(-\xed\xa0\x80-ok-\xc3\xa9";
    publish_raw(ch, q, id, {});
    REQUIRE_MESSAGE(w.wait_count("succeeded", 1, 30s), w.transcript());

    const std::string as_read = "bad-\xef\xbf\xbd\xef\xbf\xbd-\xef\xbf\xbd(-\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd-ok-\xc3\xa9";
    const auto line_file = std::filesystem::temp_directory_path() / (q + ".jsonl");
    for (const char* what : {"run", "succeeded"}) {
        CAPTURE(what);
        REQUIRE(w.of(what).size() == 1);
        const auto e = w.of(what)[0];
        CHECK(e.id() == as_read);
        // Python's json reads the line as strict UTF-8 and finds the same id.
        {
            std::ofstream out(line_file, std::ios::binary);
            out << e.raw;
        }
        const auto py = tarry_test::run_process(
            {tarry_test::python, "-c",
             "import json, sys; e = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8')); "
             "print(json.dumps(e['id']))",
             line_file.string()},
            30s);
        CHECK_MESSAGE(py.exit_code == 0, py.err);
        CHECK(py.out == "\"bad-\\ufffd\\ufffd-\\ufffd(-\\ufffd\\ufffd\\ufffd-ok-\\u00e9\"\n");
    }
    std::filesystem::remove(line_file);
    w.signal(SIGTERM);
    REQUIRE_MESSAGE(w.wait_exit(30s) == 0, w.transcript());
}

TEST_CASE("echo_worker: --url once per node: a node that refuses is passed over; URLs that disagree exit 2") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("proc-urls");
    queue_guard guard(url, q);
    // The first "node" refuses connections; the worker goes on to the second.
    worker_process w(nowhere_url, q, {"--url", url});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    {
        connected_client c(url);
        publish_raw(confirm_channel(c), q, "U-1", {});
    }
    REQUIRE_MESSAGE(w.wait_count("succeeded", 1, 10s), w.transcript());
    w.signal(SIGTERM);
    CHECK(w.wait_exit(30s) == 0);

    auto r = tarry_test::run_process({echo_worker_path(), "--url", url, "--url",
                                      "amqp://other:secret@127.0.0.1:9/%2F", "--queue", q},
                                     30s);
    CHECK_MESSAGE(r.exit_code == 2, r.out << r.err);
    CHECK_MESSAGE(r.err.find("URL 2 of 2") != std::string::npos, r.err);
    CHECK(r.err.find("secret") == std::string::npos);  // a password is never shown
}

TEST_CASE("echo_worker: two workers on one queue drop the jobs `tarry job cancel` names, run the rest once") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("proc-cancel");
    queue_guard guard(url, q);
    connected_client c(url);
    control_stream_cleanup stream{c, q};
    worker_process w1(url, q, {"--workers", "2"});
    REQUIRE_MESSAGE(w1.wait_ready(), w1.transcript());
    worker_process w2(url, q, {"--workers", "2"});
    REQUIRE_MESSAGE(w2.wait_ready(), w2.transcript());
    std::map<std::string, std::int64_t> jobs;
    {
        auto ch = confirm_channel(c);
        std::vector<sys::time_point> dues;
        const auto t0 = sys::now();
        for (int i = 0; i < 10; ++i) dues.push_back(t0 + 3s + i * 10ms);
        jobs = publish_jobs(ch, q, "cx", dues);
        auto probe = c.open_channel();
        REQUIRE(wait_ready_count(probe, q, 0, 10s) == 0);  // all held, across the two
    }
    std::set<std::string> cancelled_ids;
    for (const auto& [id, due] : jobs) {
        if (cancelled_ids.size() == 5) break;
        const auto r = tarry_test::run_process(
            {build_root() + "/tools/tarry", "job", "cancel", "--url", url, "--queue", q, "--id", id}, 30s);
        REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
        cancelled_ids.insert(id);
    }
    const auto total = [&](const std::string& what) { return w1.count(what) + w2.count(what); };
    const auto all_ended = [&] { return total("succeeded") + total("cancelled") >= 10; };
    for (const auto end = steady::now() + 15s; !all_ended() && steady::now() < end;) {
        w1.read_until(all_ended, 100ms);  // each reads its own output
        w2.read_until(all_ended, 100ms);
    }
    REQUIRE_MESSAGE(all_ended(), w1.transcript() << w2.transcript());
    w1.read_until([] { return false; }, 500ms);
    w2.read_until([] { return false; }, 500ms);
    std::multiset<std::string> ran, dropped;
    for (auto* w : {&w1, &w2}) {
        for (const auto& e : w->of("run")) ran.insert(e.id());
        for (const auto& e : w->of("cancelled")) dropped.insert(e.id());
    }
    CHECK(dropped.size() == 5);
    for (const auto& id : cancelled_ids) {
        CHECK_MESSAGE(ran.count(id) == 0, id << " ran although cancelled");
        CHECK_MESSAGE(dropped.count(id) == 1, id << " not cancelled once");
    }
    for (const auto& [id, due] : jobs)
        if (!cancelled_ids.count(id)) CHECK_MESSAGE(ran.count(id) == 1, id << " did not run once");
    w1.signal(SIGTERM);
    w2.signal(SIGTERM);
    CHECK(w1.wait_exit(30s) == 0);
    CHECK(w2.wait_exit(30s) == 0);
}

TEST_CASE("echo_worker: --events-per-message out of 1..1000, or without --events: exit 2, before connecting") {
    for (const auto& extra : std::vector<std::vector<std::string>>{{"--events", "--events-per-message", "0"},
                                                                    {"--events", "--events-per-message", "1001"},
                                                                    {"--events", "--events-per-message", "many"},
                                                                    {"--events-per-message", "10"}}) {
        std::vector<std::string> argv{echo_worker_path(), "--url", nowhere_url, "--queue", "q"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        auto r = tarry_test::run_process(argv, 30s);
        CAPTURE(extra.back());
        CHECK_MESSAGE(r.exit_code == 2, r.out << r.err);
        CHECK(r.err.find("--events-per-message") != std::string::npos);
    }
}
