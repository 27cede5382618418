// A quorum queue's delivery limit against the real broker (docs/consumer.md,
// "A quorum queue's delivery limit" and "When the broker cancels a
// consumer"). RabbitMQ 4.0 and later drop a message returned to a quorum
// queue more than 20 times (x-delivery-limit, 20 by default); every
// redeploy, killed worker, lost connection and due-backlog give-back is a
// return. The jobs here go through 25 such faults (a killed worker or a
// lost connection counts one or two returns: see the kill test), or 10
// redeploys under a limit of 3, and each still runs once, not early: a
// delivery whose count has reached the renewal threshold (15 of 20, a
// margin below the limit) is renewed as it arrives (a confirmed copy, then
// an ack).
//
// The limit bites on either broker: on RabbitMQ 4.0 the work queue is
// declared without x-delivery-limit and the worker is told nothing (the
// broker's default and the limit the worker derives from its version); on
// 3.x, which has no default, the test declares the queue with
// x-delivery-limit 20 and tells the worker (--no-declare --delivery-limit
// 20). Without the renewal (--delivery-limit 0) each of the first five
// tests loses its jobs.
//
// Besides: a renewal copy refused by a full queue is published again until
// it is confirmed, never nacked; and a work queue deleted under a consumer
// that holds jobs: the consumer is cancelled, keeps and acks what it holds,
// declares the queue again and consumes.
#include "consumer_topology.hpp"
#include "core/delivery_limit.hpp"
#include "http_client.hpp"
#include "private_broker.hpp"
#include "tcp_relay.hpp"
#include "worker_process.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <csignal>
#include <map>
#include <set>

using namespace consumer_it;

namespace {

using endpoint = boost::asio::ip::tcp::endpoint;

/// The broker's version as connection.start gives it ("3.10.8", "4.0.5").
std::string broker_version(const std::string& url) {
    connected_client c(url);
    const auto info = c.conn.info();
    REQUIRE(info);
    const auto* v = info->server_properties.find("version");
    const auto* s = v ? std::get_if<std::string>(&v->value) : nullptr;
    REQUIRE_MESSAGE(s, "connection.start carries no version");
    return *s;
}

/// RabbitMQ 4.0 or later: quorum queues have a delivery limit of 20 by default.
bool default_limit(const std::string& version) { return std::stoi(version) >= 4; }

/// What echo_worker --queue-type quorum declares for `q` (its wait queues
/// follow the hold horizon).
tarry::subscription_options quorum_options(const std::string& q, std::chrono::milliseconds hold_horizon) {
    tarry::subscription_options o;
    o.queue = q;
    o.queue_type = tarry::queue_kind::quorum;
    o.hold_horizon = hold_horizon;
    return o;
}

/// Declares that topology, the work queue with x-delivery-limit `limit` when set.
void declare_quorum(const std::string& url, const tarry::subscription_options& o, std::optional<std::int64_t> limit) {
    auto topology = tarry::detail::consumer_topology(o);
    if (limit) topology[0].arguments.set("x-delivery-limit", *limit);
    connected_client c(url);
    auto ch = c.open_channel();
    for (auto& queue : topology) value_of(ch.async_declare_queue(queue, use_future));
}

/// A quorum work queue whose delivery limit of 20 bites on the broker at
/// hand, declared, and the echo_worker options that go with it (see the top).
struct limit_of_20 {
    std::string version;
    bool broker_default = false;
    std::vector<std::string> worker_args;
};

limit_of_20 quorum_queue_limited(const std::string& url, const std::string& q,
                                 std::chrono::milliseconds hold_horizon = std::chrono::minutes(15)) {
    limit_of_20 l;
    l.version = broker_version(url);
    l.broker_default = default_limit(l.version);
    const auto declared_limit = l.broker_default ? std::nullopt : std::optional<std::int64_t>(20);
    declare_quorum(url, quorum_options(q, hold_horizon), declared_limit);
    if (l.broker_default) l.worker_args = {"--queue-type", "quorum"};
    else l.worker_args = {"--no-declare", "--delivery-limit", "20"};
    l.worker_args.insert(l.worker_args.end(), {"--hold-horizon-ms", std::to_string(hold_horizon.count())});
    MESSAGE("RabbitMQ " << l.version << ": "
                        << std::string(l.broker_default ? "the broker's default limit, nothing told"
                                                        : "x-delivery-limit 20 declared and told"));
    return l;
}

/// The broker's count of a job's returns as the redeploy tests expect it:
/// one more with each stop (its nack); a delivery whose count has reached
/// the renewal threshold (15 of 20, 2 of 3) is renewed as it arrives, and
/// its copy arrives with none.
struct return_count {
    std::int64_t limit;
    std::int64_t returns = 0;
    /// The job arrives: whether it is renewed now.
    bool arrives() {
        if (returns < tarry::detail::renewal_threshold(static_cast<std::uint32_t>(limit))) return false;
        returns = 0;
        return true;
    }
    void returned() { ++returns; }
};

/// Ready messages of queues, on one connection of its own (passive queue.declare).
struct queue_probe {
    explicit queue_probe(const std::string& url) : c(url), ch(c.open_channel()) {}
    std::uint32_t ready(const std::string& q) {
        return value_of(ch.async_declare_queue(passive_queue(q), use_future)).message_count;
    }
    connected_client c;
    amqp::channel ch;
};

/// echo_worker's options plus an HTTP endpoint on a free port (its /metrics
/// tell how many jobs it holds).
std::vector<std::string> with_http(std::vector<std::string> args) {
    args.insert(args.end(), {"--http", "127.0.0.1:0"});
    return args;
}

/// Where a worker started with_http() serves.
endpoint http_of(const worker_process& w) {
    const auto ready = w.of("ready");
    REQUIRE(!ready.empty());
    const std::string where = ready.front().field("http");
    const auto colon = where.rfind(':');
    REQUIRE_MESSAGE(colon != std::string::npos, ready.front().raw);
    return {boost::asio::ip::make_address(where.substr(0, colon)),
            static_cast<std::uint16_t>(std::stoul(where.substr(colon + 1)))};
}

/// A series' value in the worker's /metrics, e.g. "tarry_jobs_held".
std::optional<double> metric(const endpoint& at, const std::string& name, const std::string& queue) {
    const auto scrape = tarry_test::http_get(at, "/metrics");
    if (scrape.status != 200) return std::nullopt;
    const std::string series = "\n" + name + "{queue=\"" + queue + "\"} ";
    const auto pos = scrape.body.find(series);
    if (pos == std::string::npos) return std::nullopt;
    return std::stod(scrape.body.substr(pos + series.size()));
}

/// Events of kind `what` (with `reason`, when not empty) printed from index `from` on.
std::size_t count_since(const worker_process& w, std::size_t from, const std::string& what,
                        const std::string& reason = "") {
    std::size_t n = 0;
    const auto& es = w.events();
    for (std::size_t i = from; i < es.size(); ++i)
        n += es[i].what() == what && (reason.empty() || es[i].field("reason") == reason);
    return n;
}

std::size_t renewals_since(const worker_process& w, std::size_t from) {
    return count_since(w, from, "requeued", "delivery-limit");
}

/// Reads the worker's output until it holds all `n` jobs and nothing is
/// under way: its /metrics count `n` held and `n` deliveries since
/// `received_before` (its received total then) plus one for each renewal
/// printed since event `from` (a renewal's copy confirmed, its original
/// acked, the copy delivered), and no message is ready in the queue. A
/// renewal under way shows as a job not held, a copy ready, or a copy
/// delivered before its renewal was printed. All that holds twice, 250 ms
/// apart: the acks of the last renewals' originals have reached the broker
/// (a fault between a copy's confirm and its original's ack leaves both:
/// at least once). False after `t`.
bool wait_settled(worker_process& w, const endpoint& at, queue_probe& probe, const std::string& q, std::size_t n,
                  std::size_t from, double received_before = 0, std::chrono::milliseconds t = 30s) {
    const auto deadline = steady::now() + t;
    const auto settled = [&] {
        const auto renewals = static_cast<double>(renewals_since(w, from));
        return metric(at, "tarry_jobs_held", q) == static_cast<double>(n) &&
               metric(at, "tarry_jobs_received_total", q) == received_before + static_cast<double>(n) + renewals &&
               probe.ready(q) == 0;
    };
    while (steady::now() < deadline) {
        w.read_until([] { return false; }, 20ms);
        if (!settled()) continue;
        const auto printed = w.events().size();
        w.read_until([] { return false; }, 250ms);
        if (w.events().size() == printed && settled()) return true;
    }
    return false;
}

/// What wait_settled() looks at, and the events since `from`, for failure messages.
std::string settled_state(worker_process& w, const endpoint& at, queue_probe& probe, const std::string& q,
                          std::size_t from) {
    std::ostringstream s;
    s << "held " << metric(at, "tarry_jobs_held", q).value_or(-1) << ", received "
      << metric(at, "tarry_jobs_received_total", q).value_or(-1) << ", ready " << probe.ready(q)
      << "; since the mark:";
    std::map<std::string, std::size_t> kinds;
    std::string last_failed;
    const auto& es = w.events();
    for (std::size_t i = from; i < es.size(); ++i) {
        ++kinds[es[i].what() + (es[i].what() == "requeued" ? "/" + es[i].field("reason") : "")];
        if (es[i].what() == "failed") last_failed = es[i].field("reason");
    }
    for (const auto& [k, n] : kinds) s << " " << k << " " << n;
    if (!last_failed.empty()) s << "; last failed: " << last_failed;
    return s.str() + "\n" + w.transcript();
}

struct run_tally {
    std::size_t lost = 0, early = 0, twice = 0;
    double max_late_ms = 0;
};

/// Every job of `jobs` (id -> due, µs) among the runs printed: not run,
/// run before its due time, run more than once; the latest start.
run_tally tally(const std::vector<worker_event>& runs, const std::map<std::string, std::int64_t>& jobs) {
    run_tally t;
    std::map<std::string, int> n;
    for (const auto& e : runs) {
        ++n[e.id()];
        const auto it = jobs.find(e.id());
        REQUIRE_MESSAGE(it != jobs.end(), "unexpected job: " << e.raw);
        if (e.at() < it->second) ++t.early;
        t.max_late_ms = std::max(t.max_late_ms, static_cast<double>(e.at() - it->second) / 1000.0);
    }
    for (const auto& [id, due] : jobs) {
        if (n[id] == 0) ++t.lost;
        if (n[id] > 1) ++t.twice;
    }
    return t;
}

void stop_worker(worker_process& w) {
    w.signal(SIGTERM);
    CHECK(w.wait_exit(30s) == 0);
    w.read_rest(1s);
}

double seconds_since(steady::time_point t0) {
    return std::chrono::duration<double>(steady::now() - t0).count();
}

/// One job due `due_in` from now on a queue with delivery limit `limit`,
/// held by `rounds` echo_workers in turn, each stopped by SIGTERM once it
/// holds it (its held jobs go back by a nack), then a last worker: the job
/// runs once, on time; renewals come where return_count says.
void redeploys(const std::string& url, const std::string& q, const std::vector<std::string>& args,
               std::int64_t limit, int rounds, std::chrono::seconds due_in) {
    queue_probe probe(url);
    const auto t0 = steady::now();
    const auto due = sys::now() + due_in;
    {
        connected_client c(url);
        publish_raw(confirm_channel(c), q, "R-1", {{"perform_job_at", epoch(due)}});
    }
    const std::map<std::string, std::int64_t> jobs{{"R-1", micros_of_double(epoch(due))}};
    return_count count{limit};
    std::size_t renewed = 0, expected = 0, runs_before = 0;
    for (int round = 1; round <= rounds; ++round) {
        CAPTURE(round);
        worker_process w(url, q, with_http(args));
        REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
        const std::size_t renew = count.arrives() ? 1 : 0;
        expected += renew;
        REQUIRE_MESSAGE(wait_settled(w, http_of(w), probe, q, 1, 0), settled_state(w, http_of(w), probe, q, 0));
        REQUIRE_MESSAGE(sys::now() < due - 1s, "round " << round << " after " << seconds_since(t0)
                                                       << " s: too slow, the job falls due before the last redeploy");
        stop_worker(w);
        runs_before += w.count("run");
        renewed += renewals_since(w, 0);
        CHECK_MESSAGE(count_since(w, 0, "requeued", "shutdown") == 1, w.transcript());  // given back at stop
        CHECK_MESSAGE(w.count("dropped") + w.count("dead") + w.count("failed") == 0, w.transcript());
        count.returned();
    }
    const auto redeployed_s = seconds_since(t0);
    worker_process last(url, q, with_http(args));
    REQUIRE_MESSAGE(last.wait_ready(), last.transcript());
    expected += count.arrives() ? 1 : 0;
    REQUIRE_MESSAGE(last.wait_count("succeeded", 1, due_in + 30s), last.transcript());
    last.read_until([] { return false; }, 1s);  // a second run would show here
    renewed += renewals_since(last, 0);
    const auto t = tally(last.of("run"), jobs);
    MESSAGE(rounds << " redeploys in " << redeployed_s << " s under limit " << limit << ": renewed " << renewed
                   << " times (expected " << expected << "), runs before the last worker " << runs_before
                   << ", lost " << t.lost << ", early " << t.early << ", twice " << t.twice << ", start "
                   << t.max_late_ms << " ms after due");
    CHECK(runs_before == 0);
    CHECK(t.lost == 0);
    CHECK(t.early == 0);
    CHECK(t.twice == 0);
    CHECK(t.max_late_ms < 1000);
    CHECK(renewed == expected);
    stop_worker(last);
    CHECK(probe.ready(q) == 0);
    CHECK(probe.ready(q + ".dead") == 0);
}

/// Job counts for the tests holding many (TARRY_FAULT_JOBS, as the fault tests).
std::size_t fault_jobs() {
    const auto scale = tarry_test::env("TARRY_FAULT_JOBS");
    return scale ? std::stoul(*scale) : 1000;
}

/// `n` jobs due from `lead` on, over 2 s.
std::vector<sys::time_point> dues_after(std::size_t n, std::chrono::milliseconds lead) {
    const auto t0 = sys::now();
    std::vector<sys::time_point> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(t0 + lead + 2s * i / n);
    return out;
}

}  // namespace

TEST_CASE("fault: a quorum queue's limit of 20, 25 redeploys holding a job: renewed once, it runs once, on time") {
    // echo_worker --queue-type quorum, told no limit on RabbitMQ 4.0. The
    // 21st return would drop the job; the delivery that arrives with 15
    // returns (the renewal threshold) is renewed instead.
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("redeploys");
    queue_guard guard(url, q);
    const auto l = quorum_queue_limited(url, q);
    redeploys(url, q, l.worker_args, 20, 25, 60s);
}

TEST_CASE("fault: a quorum queue's limit of 3 told with --no-declare, 10 redeploys holding a job: it runs once") {
    // x-delivery-limit 3, declared by the test on either broker: a
    // delivery that arrives with 2 returns is renewed.
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("limit-3");
    queue_guard guard(url, q);
    declare_quorum(url, quorum_options(q, std::chrono::minutes(15)), 3);
    redeploys(url, q, {"--no-declare", "--delivery-limit", "3"}, 3, 10, 12s);
}

TEST_CASE("fault: 25 workers killed (SIGKILL) in turn, each holding the same 1 000 jobs: each runs once, none lost") {
    // Each kill returns all 1 000 jobs (the broker closes the connection),
    // and a kill may count twice: the broker returns a dead connection's
    // deliveries channel by channel, and what one lane's channel returns
    // can be delivered to the consuming lane, whose death the broker has
    // not handled yet, and come back with it. A worker renews the jobs
    // that arrive 15 returns in: each is renewed at least once on the way.
    TARRY_REQUIRE_BROKER(url);
    const std::size_t n = fault_jobs();
    const auto q = unique_name("kills");
    queue_guard guard(url, q);
    const auto l = quorum_queue_limited(url, q);
    auto args = with_http(l.worker_args);
    args.insert(args.end(), {"--max-held", std::to_string(n + 100)});
    queue_probe probe(url);
    const auto t0 = steady::now();
    const auto lead = std::chrono::milliseconds(15000 + 5 * n);
    const auto jobs = publish_many(url, q, "K", dues_after(n, lead));
    const auto first_due = sys::now() + lead - 1s;
    std::map<std::string, int> renewals;  // by id
    std::string renewed_in;               // "round: jobs renewed", for the record
    std::size_t runs_before = 0;
    const auto take_renewals = [&](const worker_process& w, const std::string& when) {
        std::size_t k = 0;
        for (const auto& e : w.of("requeued"))
            if (e.field("reason") == "delivery-limit") ++renewals[e.id()], ++k;
        if (k) renewed_in += " " + when + ": " + std::to_string(k) + ";";
    };
    for (int round = 1; round <= 25; ++round) {
        CAPTURE(round);
        worker_process w(url, q, args);
        REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
        REQUIRE_MESSAGE(wait_settled(w, http_of(w), probe, q, n, 0), settled_state(w, http_of(w), probe, q, 0));
        REQUIRE_MESSAGE(sys::now() < first_due - 1s,
                        "round " << round << " after " << seconds_since(t0) << " s: too slow, jobs fall due");
        w.signal(SIGKILL);
        REQUIRE(w.wait_exit(10s) == 128 + SIGKILL);
        w.read_rest(200ms);
        runs_before += w.count("run");
        take_renewals(w, "round " + std::to_string(round));
    }
    const auto killed_s = seconds_since(t0);
    worker_process last(url, q, args);
    REQUIRE_MESSAGE(last.wait_ready(), last.transcript());
    last.read_until([&] { return last.jobs_with("succeeded") >= n; }, lead + 60s);
    last.read_until([] { return false; }, 1s);  // a second run would show here
    take_renewals(last, "last worker");
    const auto t = tally(last.of("run"), jobs);
    std::size_t never_renewed = 0, total = 0;
    for (const auto& [id, due] : jobs) {
        never_renewed += renewals[id] == 0;
        total += static_cast<std::size_t>(renewals[id]);
    }
    MESSAGE(n << " jobs, 25 kills in " << killed_s << " s: renewed " << total << " (" << never_renewed
              << " jobs never), in" << renewed_in << " runs before the last worker " << runs_before << ", lost "
              << t.lost << ", early " << t.early << ", twice " << t.twice << ", latest start " << t.max_late_ms
              << " ms after due");
    CHECK(runs_before == 0);
    CHECK(t.lost == 0);
    CHECK(t.early == 0);
    CHECK(t.twice == 0);
    CHECK(never_renewed == 0);  // 25 returns or more each: past 15
    CHECK(last.count("dropped") == 0);
    stop_worker(last);
    CHECK(probe.ready(q) == 0);
    CHECK(probe.ready(q + ".dead") == 0);
}

TEST_CASE("fault: 25 connection losses while a worker holds 1 000 jobs: each runs once, none lost") {
    // The worker's consuming connection goes through a relay that cuts it
    // each time the worker holds all 1 000 again. Each cut returns all of
    // them (one or two returns each, as a kill); the worker drops what it
    // held (`dropped`), the broker redelivers after the reconnect, and the
    // worker renews those that arrive 15 returns in. Its copies connection
    // is left alone: cut with the other, it is often not back yet when the
    // renewals are published, and 1 000 copies refused at once ("not
    // connected") pause them all for republish_backoff's longest pause
    // (30 s), a pause per refusal in a row.
    TARRY_REQUIRE_BROKER(url);
    const std::size_t n = fault_jobs();
    const auto q = unique_name("losses");
    queue_guard guard(url, q);
    const auto l = quorum_queue_limited(url, q);
    const auto direct = amqp::parse_url(url).config;
    tarry_test::tcp_relay relay(direct.host, direct.effective_port());
    const auto relayed = "amqp://guest:guest@127.0.0.1:" + std::to_string(relay.port()) + "/%2F";
    auto args = with_http(l.worker_args);
    args.insert(args.end(), {"--max-held", std::to_string(n + 100)});
    queue_probe probe(url);
    const auto name = unique_name("losses-conn");
    worker_process w(url_named(relayed, name), q, args);
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    const auto at = http_of(w);
    const auto t0 = steady::now();
    const auto lead = std::chrono::milliseconds(12000 + 5 * n);
    const auto jobs = publish_many(url, q, "L", dues_after(n, lead));
    const auto first_due = sys::now() + lead - 1s;
    REQUIRE_MESSAGE(wait_settled(w, at, probe, q, n, 0), settled_state(w, at, probe, q, 0));
    std::string renewed_in;
    for (int cut = 1; cut <= 25; ++cut) {
        CAPTURE(cut);
        const auto from = w.events().size();
        const auto received = metric(at, "tarry_jobs_received_total", q);
        REQUIRE(received);
        // The consuming connection: not "NAME (copies)" nor "NAME (gateway)".
        REQUIRE(relay.cut_if(name + " (", false) == 1);
        // Noticed (every held job dropped), then all held again.
        REQUIRE_MESSAGE(w.read_until([&] { return count_since(w, from, "dropped") >= n; }, 30s), w.transcript());
        REQUIRE_MESSAGE(wait_settled(w, at, probe, q, n, from, *received), settled_state(w, at, probe, q, from));
        if (const auto k = renewals_since(w, from))
            renewed_in += " cut " + std::to_string(cut) + ": " + std::to_string(k) + ";";
        REQUIRE_MESSAGE(sys::now() < first_due - 1s,
                        "cut " << cut << " after " << seconds_since(t0) << " s: too slow, jobs fall due");
    }
    const auto cut_s = seconds_since(t0);
    const auto runs_before = w.count("run");
    w.read_until([&] { return w.jobs_with("succeeded") >= n; }, lead + 60s);
    w.read_until([] { return false; }, 1s);  // a second run would show here
    const auto t = tally(w.of("run"), jobs);
    std::map<std::string, int> renewals;
    for (const auto& e : w.of("requeued"))
        if (e.field("reason") == "delivery-limit") ++renewals[e.id()];
    std::size_t never_renewed = 0;
    for (const auto& [id, due] : jobs) never_renewed += renewals[id] == 0;
    MESSAGE(n << " jobs, 25 cuts in " << cut_s << " s (relayed connections " << relay.accepted() << "): dropped "
              << w.count("dropped") << ", renewed " << renewals_since(w, 0) << " (" << never_renewed
              << " jobs never), in" << renewed_in << " runs before the last cut " << runs_before << ", lost "
              << t.lost << ", early " << t.early << ", twice " << t.twice << ", latest start " << t.max_late_ms
              << " ms after due");
    CHECK(runs_before == 0);
    CHECK(t.lost == 0);
    CHECK(t.early == 0);
    CHECK(t.twice == 0);
    CHECK(never_renewed == 0);
    CHECK(w.count("dropped") == 25 * n);
    stop_worker(w);
    CHECK(probe.ready(q) == 0);
    CHECK(probe.ready(q + ".dead") == 0);
}

TEST_CASE("fault: a due job given back 25 times as backlog (one worker busy): renewed on the way, it runs once") {
    // One worker thread, taken by a job sleeping 25 s; a job due now waits
    // behind it. With a consumer timeout of 1 s it is given back (nack,
    // `requeued` reason `backlog`) 500 ms after each delivery and comes
    // straight back: about 40 returns, each of which counts.
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("backlog");
    queue_guard guard(url, q);
    guard.o.hold_horizon = 500ms;
    const auto l = quorum_queue_limited(url, q, 500ms);
    auto args = l.worker_args;
    args.insert(args.end(), {"--workers", "1", "--consumer-timeout-ms", "1000"});
    queue_probe probe(url);
    worker_process w(url, q, args);
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    connected_client c(url);
    auto ch = confirm_channel(c);
    const auto t0 = steady::now();
    publish_raw(ch, q, "busy", {{"x-echo-sleep-ms", std::int32_t{25000}}});
    REQUIRE_MESSAGE(w.wait_count("run", 1, 10s), w.transcript());
    const auto due = sys::now();
    publish_raw(ch, q, "waits", {{"perform_job_at", epoch(due)}});
    REQUIRE_MESSAGE(w.read_until([&] { return w.jobs_with("succeeded") >= 2; }, 60s), w.transcript());
    w.read_until([] { return false; }, 1s);  // a second run would show here
    const auto took = seconds_since(t0);
    std::size_t backlog = 0, renewed = 0, other = 0;
    const auto threshold = static_cast<std::size_t>(tarry::detail::renewal_threshold(20));
    for (const auto& e : w.of("requeued")) {
        if (e.id() != "waits") ++other;
        else if (e.field("reason") == "backlog") ++backlog;
        else if (e.field("reason") == "delivery-limit") ++renewed;
        else ++other;
    }
    const auto t = tally(w.of("run"), {{"busy", 0}, {"waits", micros_of_double(epoch(due))}});
    const auto busy_run = w.of("run").front(), waits_run = w.of("run").back();
    MESSAGE("given back " << backlog << " times as backlog in " << took << " s, renewed " << renewed
                          << " times (expected " << backlog / threshold << "); lost " << t.lost << ", early " << t.early
                          << ", twice " << t.twice);
    CHECK(backlog >= 25);
    CHECK(renewed == backlog / threshold);  // on arrival after the 15th, 30th... return
    CHECK(other == 0);
    CHECK(t.lost == 0);
    CHECK(t.early == 0);
    CHECK(t.twice == 0);
    CHECK(busy_run.id() == "busy");
    CHECK(waits_run.at() >= busy_run.at() + 25000000);  // when the worker was free
    CHECK(w.count("dropped") + w.count("dead") + w.count("failed") == 0);
    stop_worker(w);
    CHECK(probe.ready(q) == 0);
    CHECK(probe.ready(q + ".dead") == 0);
}

namespace {

/// A consumer in this process with every event and connection event kept.
struct observed_consumer {
    observed_consumer(const std::string& url, tarry::subscription_options o, tarry::job_handler h = succeed)
        : worker(config_of(url), std::move(o), std::move(h), hooks()) {
        worker.start();
    }
    tarry::consumer_hooks hooks() {
        tarry::consumer_hooks hk;
        hk.on_event = [this](const job_event& e) { log.add(e); };
        hk.on_connection_event = [this](const tarry::connection_event& e) {
            std::lock_guard lock(m);
            connection_events.push_back(e);
        };
        return hk;
    }
    std::size_t connection_count(tarry::connection_event::kind k) {
        std::lock_guard lock(m);
        return static_cast<std::size_t>(std::count_if(connection_events.begin(), connection_events.end(),
                                                      [k](const auto& e) { return e.what == k; }));
    }
    std::string connection_transcript() {
        std::lock_guard lock(m);
        std::string s;
        for (const auto& e : connection_events) s += e.text() + "\n";
        return s;
    }
    event_log log;
    std::mutex m;
    std::vector<tarry::connection_event> connection_events;  ///< guarded by m
    tarry::consumer worker;
};

/// Polls `pred` every 10 ms until it holds or `t` passes; the final answer.
bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds t) {
    const auto deadline = steady::now() + t;
    while (!pred() && steady::now() < deadline) std::this_thread::sleep_for(10ms);
    return pred();
}

/// The broker's ready and unacknowledged counts of `queue` (rabbitmqctl).
std::pair<std::size_t, std::size_t> ready_unacked(const std::string& dir, const std::string& queue) {
    auto r = tarry_test::private_broker::broker_ctl(
        dir, {"list_queues", "name", "messages_ready", "messages_unacknowledged", "--no-table-headers", "--quiet"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    std::istringstream lines(r.out);
    for (std::string name, ready, unacked; lines >> name >> ready >> unacked;)
        if (name == queue) return {std::stoul(ready), std::stoul(unacked)};
    FAIL("no queue " << queue);
    return {};
}

}  // namespace

TEST_CASE("fault: a renewal copy refused by a full queue is published again until confirmed, never nacked") {
    // A quorum work queue with x-delivery-limit 3, x-max-length 1 and
    // x-overflow reject-publish. The test brings the job's count to 2 by
    // two nacks of its own and fills the queue, so that the copy renewing
    // the job at admission is refused (basic.nack). The consumer takes one
    // delivery at a time (prefetch 1, one lane) and believes in a consumer
    // timeout of 7 s, so that a copy of any other original would have been
    // given back (nack, `copy-failed`) 5 s after its delivery: this one,
    // one return from the limit, is published again until the fillers are
    // taken away, and the job runs once.
    TARRY_REQUIRE_BROKER(url);
    TARRY_REQUIRE_BROKER_DIR(dir);
    const auto q = unique_name("refused-renewal");
    tarry::subscription_options o = options_for(q);
    o.queue_type = tarry::queue_kind::quorum;
    o.declare_queue = false;  // declared below, with the limit and the length
    o.delivery_limit = 3;
    o.prefetch = 1;
    o.channels = 1;
    o.broker_consumer_timeout = 7s;
    o.hold_horizon = 4s;
    o.republish_backoff = tarry::retry::backoff_policy::exponential(200ms, 2.0, 800ms);
    queue_guard guard(url, q);
    guard.o.hold_horizon = o.hold_horizon;
    connected_client c(url);
    auto ch = confirm_channel(c);
    {
        auto wq = queue_opts(q);
        wq.arguments = amqp::field_table{{"x-queue-type", std::string("quorum")},
                                         {"x-delivery-limit", std::int64_t{3}},
                                         {"x-max-length", std::int64_t{1}},
                                         {"x-overflow", std::string("reject-publish")}};
        value_of(ch.async_declare_queue(wq, use_future));
    }
    const auto t0 = steady::now();
    const auto due = sys::now() + 11s;
    publish_raw(ch, q, "J", {{"perform_job_at", epoch(due)}});
    // Two returns by hand: x-delivery-count 2 (the second after the fillers).
    auto got = value_of(ch.async_get(q, {}, use_future));
    REQUIRE(got.has_value());
    ok(ch.async_nack(got->item.delivery_tag, {}, use_future));
    got = value_of(ch.async_get(q, {}, use_future));
    REQUIRE(got.has_value());
    REQUIRE(got->item.msg.properties.message_id == std::optional<std::string>("J"));
    // Fillers until the queue refuses one (a quorum queue takes the one that
    // puts it over its length): it refuses publishes from then on.
    std::size_t fillers = 0;
    for (; fillers < 5; ++fillers) {
        amqp::basic_properties p;
        p.message_id = "filler-" + std::to_string(fillers);
        const auto ec = wait(ch.async_publish("", q, amqp::message("filler", p), {}, use_future));
        if (ec) break;
    }
    REQUIRE_MESSAGE(fillers < 5, "the queue never refused a filler");
    ok(ch.async_nack(got->item.delivery_tag, {}, use_future));  // back first in line, count 2

    std::mutex counts_m;
    std::vector<std::string> counts_seen;  // x-delivery-count of each run
    observed_consumer rc(url, o, [&](const tarry::job& j) {
        const auto* v = j.headers().find("x-delivery-count");
        const auto n = v ? amqp::wire::integer_of(*v) : std::nullopt;
        std::lock_guard lock(counts_m);
        counts_seen.push_back(n ? std::to_string(*n) : "none");
        return tarry::job_outcome::success();
    });
    // Refused again and again past the 5 s after which any other copy's
    // original would have been given back.
    REQUIRE_MESSAGE(rc.log.wait_count(kind::failed, 3, 20s), rc.connection_transcript());
    const auto refused_since = steady::now();
    while (steady::now() < refused_since + 6s) {
        CHECK(rc.worker.stats().received == 1);  // never returned, so never redelivered
        std::this_thread::sleep_for(250ms);
    }
    // (rabbitmqctl's counts come from statistics emitted every 5 s: the
    // state has not changed for longer than that.)
    const auto [ready, unacked] = ready_unacked(*dir, q);
    const auto s = rc.worker.stats();
    const auto refusals = rc.log.count(kind::failed);
    MESSAGE("fillers accepted " << fillers << "; while refused: " << refusals << " failed events, ready " << ready
                                << ", unacknowledged " << unacked << ", received " << s.received << ", requeued "
                                << s.requeued << " (after " << seconds_since(t0) << " s)");
    CHECK(unacked == 1);
    CHECK(ready == fillers);
    CHECK(s.received == 1);
    CHECK(s.requeued == 0);
    CHECK(s.dropped == 0);
    CHECK(s.channel_losses == 0);
    for (const auto& e : rc.log.of(kind::failed)) {
        CHECK(e.id == "J");
        CHECK(e.reason.find("refused") != std::string::npos);
    }
    REQUIRE(rc.log.find(kind::requeued, "J") == std::nullopt);

    // The fillers taken away: the next copy goes through.
    for (std::size_t i = 0; i < fillers; ++i)
        REQUIRE(value_of(ch.async_get(q, {.no_ack = true}, use_future)).has_value());
    REQUIRE_MESSAGE(rc.log.wait_count(kind::succeeded, 1, 30s), rc.connection_transcript());
    rc.log.wait_until([](const auto&) { return false; }, 1s);  // a second run would show here
    const auto renewal = rc.log.find(kind::requeued, "J");
    REQUIRE(renewal);
    CHECK(renewal->reason == "delivery-limit");
    const auto runs = rc.log.of(kind::run);
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].id == "J");
    CHECK(runs[0].at >= due);
    CHECK(rc.log.count(kind::requeued) == 1);
    {
        std::lock_guard lock(counts_m);
        CHECK(counts_seen == std::vector<std::string>{"none"});  // the copy: a new message
    }
    const auto end = rc.worker.stats();
    MESSAGE("after: " << rc.log.count(kind::failed) << " failed events, received " << end.received << ", copy failures "
                      << end.copy_failures << ", late confirms " << end.late_confirms << ", ran "
                      << lateness_ms(runs[0]) << " ms after due");
    CHECK(end.received == 2 + end.parked);  // the copy (parked and back again if it came too soon)
    CHECK(end.late_confirms == 0);
    CHECK(end.dropped == 0);
    CHECK(end.channel_losses == 0);
    rc.worker.stop();
    CHECK(ready_in(url, q) == 0);
}

TEST_CASE("fault: the work queue deleted under a consumer holding 100 jobs: they run and are acked, consuming resumes") {
    // The broker cancels the consumer (basic.cancel) and keeps the channel:
    // the 100 held deliveries, of a queue that no longer exists, run when
    // due and are acked on it; the consumer declares the queue again and
    // consumes on another lane, and jobs published then run.
    TARRY_REQUIRE_BROKER(url);
    for (const auto type : {tarry::queue_kind::classic, tarry::queue_kind::quorum}) {
        const bool quorum = type == tarry::queue_kind::quorum;
        CAPTURE(quorum);
        const auto q = unique_name(quorum ? "deleted-quorum" : "deleted-classic");
        queue_guard guard(url, q);
        auto o = options_for(q);
        o.queue_type = type;
        // Two lanes of 5 000: the 100 jobs stay on the first lane, with no
        // hand-over under way when the queue goes (RabbitMQ 3.10 answers
        // a basic.cancel that crosses a quorum queue's deletion with two
        // basic.cancel-ok, which the client takes for a protocol error).
        o.channels = 2;
        observed_consumer rc(url, o);
        REQUIRE(eventually([&] { return rc.worker.health().consuming; }, 10s));
        const auto held = publish_many(url, q, "old", dues_after(100, 5s));
        const auto first_due = sys::now() + 4s;
        REQUIRE(eventually([&] { return rc.worker.stats().held == 100; }, 10s));
        using ck = tarry::connection_event::kind;
        const auto consumed = rc.connection_count(ck::consuming);
        std::uint32_t deleted = 0;
        {
            connected_client c(url);
            deleted = value_of(c.open_channel().async_delete_queue(q, {}, use_future));
        }
        const auto deleted_at = steady::now();
        REQUIRE_MESSAGE(sys::now() < first_due - 1s, "too slow: the held jobs fall due before the delete");
        REQUIRE_MESSAGE(eventually([&] { return rc.connection_count(ck::consumer_cancelled) >= 1; }, 10s),
                        rc.connection_transcript());
        // Declared again and consumed: new jobs run.
        REQUIRE_MESSAGE(eventually([&] { return rc.connection_count(ck::consuming) > consumed; }, 10s),
                        rc.connection_transcript());
        CHECK(rc.worker.health().consuming);
        const auto resumed_ms = std::chrono::duration<double, std::milli>(steady::now() - deleted_at).count();
        CHECK(ready_in(url, q) == 0);
        CHECK(rc.worker.stats().held == 100);  // still held on the old lane
        auto fresh = publish_many(url, q, "new", dues_after(10, 500ms));
        REQUIRE_MESSAGE(rc.log.wait_until(
                            [](const auto& es) {
                                return std::count_if(es.begin(), es.end(), [](const job_event& e) {
                                           return e.what == kind::succeeded;
                                       }) >= 110;
                            },
                            30s),
                        rc.connection_transcript());
        rc.log.wait_until([](const auto&) { return false; }, 1s);  // a second run would show here
        std::map<std::string, int> runs;
        std::size_t early = 0;
        auto all = held;
        all.merge(fresh);
        for (const auto& e : rc.log.of(kind::run)) {
            ++runs[e.id];
            const auto it = all.find(e.id);
            REQUIRE_MESSAGE(it != all.end(), e.id);
            if (std::chrono::duration_cast<std::chrono::microseconds>(e.at.time_since_epoch()).count() < it->second)
                ++early;
        }
        std::size_t lost = 0, twice = 0;
        for (const auto& [id, due] : all) {
            lost += runs[id] == 0;
            twice += runs[id] > 1;
        }
        const auto s = rc.worker.stats();
        MESSAGE(std::string(quorum ? "quorum" : "classic") << ": queue.delete-ok counted " << deleted
                                                << " messages; consuming again " << resumed_ms
                                                << " ms after the delete; lost " << lost << ", early " << early
                                                << ", twice " << twice << ", dropped " << s.dropped
                                                << ", channel losses " << s.channel_losses << "\n"
                                                << rc.connection_transcript());
        CHECK(lost == 0);
        CHECK(early == 0);
        CHECK(twice == 0);
        CHECK(s.succeeded == 110);
        CHECK(s.dropped == 0);
        CHECK(s.channel_losses == 0);
        CHECK(rc.log.count(kind::dropped) == 0);
        CHECK(rc.connection_count(ck::lost) == 0);
        CHECK(rc.connection_count(ck::consumer_cancelled) == 1);
        CHECK(rc.worker.health().consuming);
        CHECK(ready_in(url, q) == 0);
        rc.worker.stop();
        CHECK(ready_in(url, q) == 0);  // nothing came back to the new queue
    }
}
