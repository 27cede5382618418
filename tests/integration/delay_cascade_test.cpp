// The broker-side delay cascade on the real broker (docs/cascades.md):
// every delay of a 10-level binary cascade reaches its destination, never
// early and after its hops; a topology imported from the exported
// definitions into a fresh broker works the same; destinations of every
// exchange type; a message delayed again keeps no x-death (else the broker
// drops it as a dead-letter cycle); what no delivery queue takes goes to
// the catch-all without blocking the others; a node restart loses nothing
// in the cascade; a pika consumer receives what async_publish_delayed sent;
// a publisher parking far jobs (park_beyond, `tarry publish
// --park-beyond-ms`) sends them through the cascade to arrive before they
// are due, and refuses them when there is no cascade;
// and `tarry topology` / `tarry delay` as processes.
#include "amqp_client.hpp"
#include "python_peer.hpp"
#include "private_broker.hpp"
#include "tarry_tool.hpp"

#include "tarry/parking/cascade_declaration.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/json/src.hpp>  // Boost.JSON, header-only, to read the exported definitions

#include <fstream>
#include <map>
#include <set>

using namespace amqp_it;
namespace parking = tarry::parking;
namespace json = boost::json;
using steady = std::chrono::steady_clock;

namespace {

parking::cascade_spec spec_of(std::string prefix, unsigned levels, std::chrono::milliseconds unit,
                              amqp::queue_kind kind = amqp::queue_kind::classic) {
    parking::cascade_spec s;
    s.prefix = std::move(prefix);
    s.levels = levels;
    s.unit = unit;
    s.queue_type = kind;
    return s;
}

amqp::queue_options durable_queue(std::string name) {
    auto q = queue_opts(std::move(name));
    q.durable = true;
    return q;
}

// Declares the cascade with its descriptor; deletes everything it and the
// destinations' delivery queues declared when it goes.
struct declared_cascade {
    declared_cascade(client& c, parking::cascade_spec spec) : c(c), cascade(std::move(spec)) {
        auto ch = c.open_channel();
        amqp::diagnostics why;
        const auto ec = wait(parking::async_declare_cascade(c.conn.get_executor(), ch, cascade, why, use_future));
        REQUIRE_MESSAGE(!ec, why.message);
    }
    ~declared_cascade() {
        auto ch = c.open_channel();
        for (const auto& q : own_queues) wait(ch.async_delete_queue(q, {}, use_future));
        const auto t = cascade.topology();
        for (const auto& q : t.queues) wait(ch.async_delete_queue(q.name, {}, use_future));
        for (const auto& d : destinations)
            wait(ch.async_delete_queue(cascade.delivery(d).queues.front().name, {}, use_future));
        for (const auto& x : t.exchanges) wait(ch.async_delete_exchange(x.name, {}, use_future));
    }
    client& c;
    parking::delay_cascade cascade;
    std::vector<parking::cascade_destination> destinations;  ///< whose delivery queues to delete
    std::vector<std::string> own_queues;                     ///< destination queues to delete too

    /// A fresh durable queue named after `what`, as a destination: it and
    /// its delivery queue go with the cascade.
    std::string destination_queue(const std::string& what) {
        const std::string q = unique_name(what);
        auto ch = c.open_channel();
        value_of(ch.async_declare_queue(durable_queue(q), use_future));
        destinations.push_back({"", q});
        own_queues.push_back(q);
        return q;
    }
};

// Deliveries with the moment each arrived.
struct arrivals {
    struct arrival {
        steady::time_point at;
        amqp::delivery d;
    };
    amqp::consumer_handlers handlers() {
        return {[this](amqp::delivery d) {
                    std::lock_guard lock(m);
                    items.push_back({steady::now(), std::move(d)});
                    cv.notify_all();
                },
                [](std::error_code) {}};
    }
    /// Consumes `queue` (no_ack) on `ch`.
    void subscribe(const amqp::channel& ch, const std::string& queue) {
        auto o = consume_opts(queue);
        o.no_ack = true;
        value_of(ch.async_consume(o, handlers(), use_future));
    }
    bool wait_for(std::size_t n, std::chrono::milliseconds t) {
        std::unique_lock lock(m);
        return cv.wait_for(lock, t, [&] { return items.size() >= n; });
    }
    std::vector<arrival> take() {
        std::lock_guard lock(m);
        return items;
    }
    std::mutex m;
    std::condition_variable cv;
    std::vector<arrival> items;
};

// The queues a message passed (its x-death entries); 0 without x-death.
std::size_t deaths(const amqp::delivery& d) {
    if (!d.msg.properties.headers) return 0;
    const auto* v = d.msg.properties.headers->find("x-death");
    if (!v) return 0;
    const auto* a = v->get_if<amqp::wire::field_array>();
    return a ? a->size() : 0;
}

std::string body_of(const amqp::delivery& d) { return std::string(d.msg.body.begin(), d.msg.body.end()); }

// Publishes `n` messages, message i delayed by delays[i], through `pub`;
// each body is its index. Returns when each was confirmed, with the moment
// before each publish started.
std::vector<steady::time_point> publish_all(tarry::publisher& pub, const parking::cascade_destination& to,
                                            const std::vector<std::chrono::milliseconds>& delays) {
    std::vector<steady::time_point> started;
    std::vector<std::future<std::error_code>> confirms;
    for (std::size_t i = 0; i < delays.size(); ++i) {
        started.push_back(steady::now());
        confirms.push_back(
            pub.async_publish_delayed(to.exchange, to.routing_key, amqp::message(std::to_string(i)), delays[i], use_future));
    }
    for (auto& f : confirms) ok(std::move(f));
    return started;
}

// Every message arrived once, never before its delay, after the hops its
// route says.
void check_arrivals(const parking::delay_cascade& cascade, const parking::cascade_destination& to,
                    const std::vector<std::chrono::milliseconds>& delays,
                    const std::vector<steady::time_point>& started, arrivals& got) {
    REQUIRE_MESSAGE(got.wait_for(delays.size(), cascade.max_delay() + 10s), got.take().size() << " arrived");
    std::this_thread::sleep_for(200ms);
    const auto all = got.take();
    CHECK(all.size() == delays.size());
    std::vector<int> seen(delays.size(), 0);
    std::chrono::milliseconds worst_late{0};
    for (const auto& a : all) {
        const std::size_t i = std::stoul(body_of(a.d));
        REQUIRE(i < delays.size());
        ++seen[i];
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(a.at - started[i]);
        CHECK_MESSAGE(waited >= delays[i], "message " << i << " arrived after " << waited.count() << " ms, before its "
                                                      << delays[i].count() << " ms");
        worst_late = std::max(worst_late, waited - delays[i]);
        const auto route = cascade.route(to, delays[i], parking::unit_rounding::up);
        REQUIRE(route);
        CHECK(deaths(a.d) == (route->units == 0 ? 0 : route->hops + 1));  // + the delivery queue
        CHECK(a.d.routing_key == to.routing_key);
    }
    for (std::size_t i = 0; i < seen.size(); ++i) CHECK_MESSAGE(seen[i] == 1, "message " << i << " arrived " << seen[i] << " times");
    MESSAGE("latest arrival after its delay: " << worst_late.count() << " ms");
}

// A cascade of 10 ms units, one destination queue consumed into `got`,
// and a publisher given the cascade's spec; the queue is deleted first,
// then the cascade.
struct one_destination {
    one_destination(const std::string& url, const std::string& what, unsigned levels)
        : c(url), dc(c, spec_of(unique_name(what), levels, 10ms)), q(unique_name(what + "-dest")),
          ch(c.open_channel()), to{"", q}, pub(c.conn, spec_given(dc)) {
        value_of(ch.async_declare_queue(durable_queue(q), use_future));
        dc.destinations.push_back(to);
        got.subscribe(ch, q);
    }
    ~one_destination() { wait(ch.async_delete_queue(q, {}, use_future)); }
    static tarry::publisher_options spec_given(const declared_cascade& dc) {
        tarry::publisher_options o;
        o.delay_cascade = dc.cascade.spec();
        return o;
    }
    connected_client c;
    declared_cascade dc;
    std::string q;
    amqp::channel ch;
    parking::cascade_destination to;
    arrivals got;
    tarry::publisher pub;
};

std::vector<std::chrono::milliseconds> unit_multiples(std::int64_t count, std::chrono::milliseconds unit) {
    std::vector<std::chrono::milliseconds> d;
    for (std::int64_t k = 0; k < count; ++k) d.push_back(k * unit);
    return d;
}

}  // namespace

TEST_CASE("cascade: every delay from 0 to 2^10 - 1 units of 10 ms arrives once, never early, after its hops") {
    TARRY_REQUIRE_BROKER(url);
    one_destination f(url, "cascade", 10);
    const auto delays = unit_multiples(1024, 10ms);
    const auto started = publish_all(f.pub, f.to, delays);
    check_arrivals(f.dc.cascade, f.to, delays, started, f.got);
}

TEST_CASE("cascade: exported definitions imported into a fresh broker route the same; declaring adds the descriptor") {
    TARRY_REQUIRE_BROKER(shared_url);
    (void)shared_url;
    tarry_test::private_broker fresh;
    const std::string vhost = "delays";
    const auto spec = spec_of("imported.delay", 10, 10ms);
    // The export, as `tarry topology export` writes it.
    const auto exported = run_tarry({"topology", "export", "--strategy", "binary", "--levels", "10", "--unit-ms", "10",
                                     "--prefix", spec.prefix, "--vhost", vhost, "--format", "definitions"});
    REQUIRE_MESSAGE(exported.exit_code == 0, exported.err);
    const std::string file = fresh.dir() + "/definitions.json";
    std::ofstream(file) << exported.out;
    auto imported = fresh.ctl({"import_definitions", file});
    REQUIRE_MESSAGE(imported.exit_code == 0, imported.out << imported.err);
    REQUIRE(fresh.ctl({"set_permissions", "-p", vhost, "guest", ".*", ".*", ".*"}).exit_code == 0);
    const std::string vhost_url = fresh.url().substr(0, fresh.url().rfind('/')) + "/" + vhost;

    // Every queue of the cascade is there, in the vhost.
    connected_client c(vhost_url);
    auto ch = c.open_channel();
    const parking::delay_cascade cascade(spec);
    for (const auto& q : cascade.topology().queues) value_of(ch.async_declare_queue(passive_queue(q.name), use_future));

    // No descriptor yet: `tarry delay` says so and what to do.
    const std::string q = "imported-dest";
    value_of(ch.async_declare_queue(durable_queue(q), use_future));
    const std::vector<std::string> delay_args{"delay",         "--url",      vhost_url,  "--exchange", "",
                                              "--routing-key", q,            "--delay-ms", "30",        "--prefix",
                                              spec.prefix,     "--body",     "via-tool"};
    auto refused = run_tarry(delay_args);
    CHECK(refused.exit_code == 1);
    CHECK(refused.err.find("holds no message") != std::string::npos);
    CHECK(refused.err.find("tarry topology declare") != std::string::npos);
    // Declaring over the imported topology changes nothing (a queue with
    // other arguments would fail with 406) and writes the descriptor.
    // (--vhost names the imported virtual host; the URL's is "/").
    auto declared = run_tarry({"topology", "declare", "--url", fresh.url(), "--vhost", vhost, "--strategy", "binary",
                               "--levels", "10", "--unit-ms", "10", "--prefix", spec.prefix});
    REQUIRE_MESSAGE(declared.exit_code == 0, declared.err);

    arrivals got;
    got.subscribe(ch, q);
    auto sent = run_tarry(delay_args);
    REQUIRE_MESSAGE(sent.exit_code == 0, sent.err);
    REQUIRE(got.wait_for(1, 5s));
    CHECK(body_of(got.take().front().d) == "via-tool");
    CHECK(deaths(got.take().front().d) == 3);  // 3 units: two levels and the delivery queue

    // A walk of the first 64 delays through the imported topology.
    arrivals walk;
    const std::string q2 = "imported-walk";
    value_of(ch.async_declare_queue(durable_queue(q2), use_future));
    walk.subscribe(ch, q2);
    tarry::publisher_options o;
    o.delay_cascade_prefix = spec.prefix;  // read from the descriptor
    tarry::publisher pub(c.conn, o);
    const parking::cascade_destination to{"", q2};
    const auto delays = unit_multiples(64, 10ms);
    const auto started = publish_all(pub, to, delays);
    check_arrivals(cascade, to, delays, started, walk);
}

TEST_CASE("cascade: direct, topic, fanout and default-exchange destinations") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    declared_cascade dc(c, spec_of(unique_name("kinds"), 6, 10ms));
    auto ch = c.open_channel();
    const std::string direct = unique_name("direct"), topic = unique_name("topic"), fanout = unique_name("fanout");
    value_of(ch.async_declare_queue(durable_queue(direct + "-q"), use_future));
    value_of(ch.async_declare_queue(durable_queue(topic + "-q"), use_future));
    value_of(ch.async_declare_queue(durable_queue(fanout + "-q1"), use_future));
    value_of(ch.async_declare_queue(durable_queue(fanout + "-q2"), use_future));
    value_of(ch.async_declare_queue(durable_queue(direct + "-default"), use_future));
    ok(ch.async_declare_exchange(exchange_opts(direct, "direct"), use_future));
    ok(ch.async_declare_exchange(exchange_opts(topic, "topic"), use_future));
    ok(ch.async_declare_exchange(exchange_opts(fanout, "fanout"), use_future));
    ok(ch.async_bind_queue(direct + "-q", direct, "d.key", {}, use_future));
    ok(ch.async_bind_queue(topic + "-q", topic, "orders.*.created", {}, use_future));
    ok(ch.async_bind_queue(fanout + "-q1", fanout, "", {}, use_future));
    ok(ch.async_bind_queue(fanout + "-q2", fanout, "", {}, use_future));
    const std::vector<parking::cascade_destination> destinations{
        {direct, "d.key"}, {topic, "orders.eu.created"}, {fanout, "anything"}, {"", direct + "-default"}};
    dc.destinations = destinations;
    std::map<std::string, arrivals> got;
    for (const auto& q : {direct + "-q", topic + "-q", fanout + "-q1", fanout + "-q2", direct + "-default"})
        got[q].subscribe(ch, q);
    tarry::publisher_options o;
    o.delay_cascade = dc.cascade.spec();
    tarry::publisher pub(c.conn, o);
    const auto start = steady::now();
    for (const auto& d : destinations) ok(pub.async_publish_delayed(d.exchange, d.routing_key, amqp::message("x"), 50ms, use_future));
    for (auto& [q, a] : got) {
        REQUIRE_MESSAGE(a.wait_for(1, 5s), q << " got nothing");
        CHECK(a.take().front().at - start >= 50ms);
        CHECK(deaths(a.take().front().d) == 3);  // 5 units = 101: two levels, then the delivery queue
    }
    for (const auto& q : {direct + "-q", topic + "-q", fanout + "-q1", fanout + "-q2", direct + "-default"})
        wait(ch.async_delete_queue(q, {}, use_future));
}

TEST_CASE("cascade: a delivered message delayed again drops its x-death, so it is not taken for a cycle; the key "
          "does not grow") {
    TARRY_REQUIRE_BROKER(url);
    one_destination f(url, "again", 6);
    auto& got = f.got;
    ok(f.pub.async_publish_delayed("", f.q, amqp::message("retry me"), 30ms, use_future));
    REQUIRE(got.wait_for(1, 5s));
    // A consumer retries it three times through the same levels, each time
    // with the message as it was delivered (x-death and all).
    for (std::size_t round = 2; round <= 4; ++round) {
        const auto last = got.take().back().d;
        CHECK(deaths(last) == 3);  // 3 units = 11: two levels and the delivery queue, this round's only
        ok(f.pub.async_publish_delayed("", f.q, last.msg, 30ms, use_future));
        REQUIRE_MESSAGE(got.wait_for(round, 5s), "round " << round << " was dropped");
    }
    CHECK(body_of(got.take().back().d) == "retry me");
}

TEST_CASE("cascade: refusals before sending: above the longest delay (1000 years), an expiration") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher_options o;
    o.delay_cascade = parking::cascade_spec{};  // 28 levels of 1 s: about 8.5 years
    o.delay_cascade->prefix = unique_name("refusals");
    tarry::publisher pub(c.conn, o);
    amqp::diagnostics why;
    // The destination is checked and its delivery queue declared first, so
    // use a cascade and a queue that exist.
    declared_cascade dc(c, *o.delay_cascade);
    const std::string q = dc.destination_queue("refused-dest");
    const auto far = std::chrono::hours(24 * 365 * 1000);
    CHECK(wait(pub.async_publish_delayed("", q, amqp::message("x"), far, why, use_future)) ==
          tarry::publish_errc::delay_exceeds_max);
    CHECK(why.message.find("above the delay cascade's longest") != std::string::npos);
    amqp::message expiring("x");
    expiring.properties.expiration = "5000";
    CHECK(wait(pub.async_publish_delayed("", q, expiring, 10s, why, use_future)) == amqp::errc::invalid_argument);
    CHECK(why.message.find("expiration") != std::string::npos);
    CHECK(pub.stats().published == 0);
}

TEST_CASE("cascade: a destination whose delivery queue was removed goes to the catch-all; the others still arrive") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    declared_cascade dc(c, spec_of(unique_name("catch"), 4, 10ms));
    auto ch = c.open_channel();
    const std::string gone = unique_name("gone"), kept = unique_name("kept");
    value_of(ch.async_declare_queue(durable_queue(gone), use_future));
    value_of(ch.async_declare_queue(durable_queue(kept), use_future));
    dc.destinations = {{"", gone}, {"", kept}};
    tarry::publisher_options o;
    o.delay_cascade = dc.cascade.spec();
    tarry::publisher pub(c.conn, o);
    ok(pub.async_publish_delayed("", gone, amqp::message("first"), 20ms, use_future));  // declares its delivery queue
    std::this_thread::sleep_for(300ms);  // "first" has reached `gone`
    wait(ch.async_delete_queue(dc.cascade.delivery({"", gone}).queues.front().name, {}, use_future));
    arrivals got;
    got.subscribe(ch, kept);
    ok(pub.async_publish_delayed("", gone, amqp::message("lost"), 20ms, use_future));
    ok(pub.async_publish_delayed("", kept, amqp::message("kept"), 40ms, use_future));
    REQUIRE(got.wait_for(1, 5s));
    CHECK(body_of(got.take().front().d) == "kept");
    const auto unrouted = value_of(ch.async_declare_queue(passive_queue(dc.cascade.spec().prefix + ".unrouted"), use_future));
    CHECK(unrouted.message_count == 1);
    wait(ch.async_delete_queue(gone, {}, use_future));
    wait(ch.async_delete_queue(kept, {}, use_future));
}

TEST_CASE("cascade: a node restart while messages wait in quorum levels loses none, and none arrives early") {
    TARRY_REQUIRE_BROKER(shared_url);
    (void)shared_url;
    tarry_test::private_broker node;
    const auto spec = spec_of("restart.delay", 8, 25ms, amqp::queue_kind::quorum);
    const std::string q = "restart-dest";
    const std::vector<std::chrono::milliseconds> delays = [] {
        std::vector<std::chrono::milliseconds> d;
        for (int i = 0; i < 20; ++i) d.push_back(std::chrono::milliseconds(4000 + 100 * i));
        return d;
    }();
    std::vector<steady::time_point> started;
    {
        connected_client c(node.url());
        auto ch = c.open_channel();
        ok(parking::async_declare_cascade(c.conn.get_executor(), ch, parking::delay_cascade(spec), use_future));
        value_of(ch.async_declare_queue(durable_queue(q), use_future));
        tarry::publisher_options o;
        o.delay_cascade_prefix = spec.prefix;
        tarry::publisher from_descriptor(c.conn, o);
        started = publish_all(from_descriptor, {"", q}, delays);
    }
    node.stop_node();
    node.start_again();
    connected_client c(node.url());
    auto ch = c.open_channel();
    arrivals got;
    got.subscribe(ch, q);
    const parking::delay_cascade cascade(spec);
    REQUIRE_MESSAGE(got.wait_for(delays.size(), 20s), got.take().size() << " of " << delays.size() << " arrived");
    std::this_thread::sleep_for(300ms);
    const auto all = got.take();
    CHECK(all.size() == delays.size());
    std::set<std::string> bodies;
    for (const auto& a : all) {
        const std::size_t i = std::stoul(body_of(a.d));
        bodies.insert(body_of(a.d));
        CHECK(a.at - started[i] >= delays[i]);
    }
    CHECK(bodies.size() == delays.size());
}

TEST_CASE("cascade: a pika consumer on a plain queue receives what async_publish_delayed sent") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    declared_cascade dc(c, spec_of(unique_name("pika"), 8, 10ms));
    const std::string q = dc.destination_queue("pika-dest");
    tarry::publisher_options o;
    o.delay_cascade_prefix = dc.cascade.spec().prefix;  // found through the descriptor
    tarry::publisher pub(c.conn, o);
    amqp::message m("from tarry, later");
    m.properties.message_id = "delayed-1";
    const auto start = steady::now();
    ok(pub.async_publish_delayed("", q, m, 300ms, use_future));
    auto r = tarry_test::run_python("pika_peer.py", {"read", url, q}, 60s);
    const auto waited = steady::now() - start;
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    const json::object out = json::parse(r.out).as_object();
    CHECK(out.at("message_id").as_string() == "delayed-1");
    CHECK(out.at("body").as_string() == "66726f6d2074617272792c206c61746572");  // hex of the body
    CHECK(waited >= 300ms);
}

// Far jobs parked by the publisher (publisher_options::park_beyond).
namespace {

// The perform_job_at of a delivery, as written by async_publish.
std::optional<tarry::wall_time> due_of(const amqp::delivery& d) {
    if (!d.msg.properties.headers) return std::nullopt;
    const auto* v = d.msg.properties.headers->find("perform_job_at");
    if (!v) return std::nullopt;
    const auto* seconds = v->get_if<double>();
    if (!seconds) return std::nullopt;
    return tarry::wall_time(std::chrono::duration_cast<tarry::wall_time::duration>(
        std::chrono::duration<double>(*seconds)));
}

}  // namespace

TEST_CASE("cascade: a publisher parking far jobs sends one due beyond park_beyond through the cascade, to arrive "
          "park_margin before due and never after; a near one and one with an expiration go at once") {
    TARRY_REQUIRE_BROKER(url);
    one_destination f(url, "park", 10);  // 10 ms units, up to 10.23 s
    tarry::publisher_options o;
    o.delay_cascade = f.dc.cascade.spec();
    o.park_beyond = 1s;
    o.park_margin = 300ms;
    tarry::publisher parker(f.c.conn, o);
    amqp::message far("far"), near("near"), expiring("expiring");
    expiring.properties.expiration = "60000";
    ok(parker.async_publish("", f.q, far, tarry::job_schedule::after(3s), use_future));
    ok(parker.async_publish("", f.q, near, tarry::job_schedule::after(900ms), use_future));
    ok(parker.async_publish("", f.q, expiring, tarry::job_schedule::after(3s), use_future));
    REQUIRE(f.got.wait_for(3, 10s));
    const auto all = f.got.take();
    REQUIRE(all.size() == 3);
    // The two that went at once came first, through no queue but theirs.
    CHECK(body_of(all[0].d) == "near");
    CHECK(body_of(all[1].d) == "expiring");
    CHECK(deaths(all[0].d) == 0);
    CHECK(deaths(all[1].d) == 0);
    const auto& parked = all[2].d;
    REQUIRE(body_of(parked) == "far");
    const auto wall_arrival = std::chrono::system_clock::now() - (steady::now() - all[2].at);
    const auto due = due_of(parked);
    REQUIRE(due);
    // It waited in the cascade (its hops and the delivery queue)...
    CHECK(deaths(parked) >= 2);
    // ...and arrived before it was due, and not before due - margin - one unit.
    CHECK_MESSAGE(wall_arrival < *due, "arrived " << std::chrono::duration_cast<std::chrono::milliseconds>(
                                                         wall_arrival - *due).count() << " ms after due");
    CHECK(wall_arrival >= *due - o.park_margin - 10ms - 5ms);  // 5 ms: the two clocks read apart
    CHECK(parker.stats().confirmed == 3);
}

TEST_CASE("cascade: a publisher parking far jobs with no cascade declared fails the far publish, says to declare "
          "it, and sends nothing; near jobs still go") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const std::string q = unique_name("park-none");
    auto ch = c.open_channel();
    value_of(ch.async_declare_queue(durable_queue(q), use_future));
    tarry::publisher_options o;
    o.delay_cascade_prefix = unique_name("never-declared");
    o.park_beyond = 1s;
    tarry::publisher pub(c.conn, o);
    amqp::diagnostics why;
    const auto ec = wait(pub.async_publish("", q, amqp::message("far"), tarry::job_schedule::after(1h), why, use_future));
    CHECK(ec);
    CHECK_MESSAGE(why.message.find("tarry topology declare") != std::string::npos, why.message);
    ok(pub.async_publish("", q, amqp::message("near"), tarry::job_schedule::after(500ms), use_future));
    const auto [dec_ec, declared] = [&] {
        auto r = ch.async_declare_queue(passive_queue(q), use_future).get();
        return std::pair{std::get<0>(r), std::get<1>(r)};
    }();
    REQUIRE_FALSE(dec_ec);
    CHECK(declared.message_count == 1);  // the near one alone
    wait(ch.async_delete_queue(q, {}, use_future));
}

TEST_CASE("cascade: a delayed or parked message for a queue or exchange that does not exist fails at once "
          "(unroutable), instead of being dropped when it comes out of the cascade") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    declared_cascade dc(c, spec_of(unique_name("missing"), 6, 10ms));
    tarry::publisher_options o;
    o.delay_cascade = dc.cascade.spec();
    o.park_beyond = 1s;
    tarry::publisher pub(c.conn, o);
    amqp::diagnostics why;
    const std::string no_queue = unique_name("no-such-queue");
    CHECK(wait(pub.async_publish_delayed("", no_queue, amqp::message("x"), 100ms, why, use_future)) ==
          tarry::publish_errc::unroutable);
    CHECK_MESSAGE(why.message.find(no_queue) != std::string::npos, why.message);
    CHECK(wait(pub.async_publish("", no_queue, amqp::message("far"), tarry::job_schedule::after(1h), why,
                                 use_future)) == tarry::publish_errc::unroutable);
    CHECK(wait(pub.async_publish_delayed(unique_name("no-such-exchange"), "k", amqp::message("x"), 100ms, why,
                                         use_future)) == tarry::publish_errc::unroutable);
    CHECK(why.message.find("exchange") != std::string::npos);
    CHECK(pub.stats().published == 0);
    // The publisher still works for a destination that exists.
    const std::string q = dc.destination_queue("exists");
    ok(pub.async_publish_delayed("", q, amqp::message("y"), 100ms, use_future));
}

TEST_CASE("cascade: the tool's usage errors exit 2 with the reason") {
    const auto run = [](std::vector<std::string> args) { return run_tarry(std::move(args)); };
    auto r = run({"topology"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("no topology command given") != std::string::npos);
    r = run({"topology", "export", "--strategy", "fibonacci", "--levels", "3", "--unit-ms", "10", "--format",
             "definitions"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("binary or powers") != std::string::npos);
    r = run({"topology", "export", "--strategy", "powers", "--levels", "3", "--unit-ms", "10", "--format", "terraform"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--base is required") != std::string::npos);
    r = run({"topology", "export", "--strategy", "binary", "--levels", "40", "--unit-ms", "1000", "--format",
             "definitions"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("longest x-message-ttl") != std::string::npos);
    r = run({"topology", "export", "--strategy", "binary", "--levels", "3", "--unit-ms", "10", "--format", "yaml"});
    CHECK(r.exit_code == 2);
    r = run({"topology", "declare", "--url", "amqp://localhost", "--strategy", "binary", "--levels", "3", "--unit-ms",
             "10", "--format", "terraform"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("export's formats") != std::string::npos);
    r = run({"topology", "export", "--strategy", "binary", "--levels", "3", "--unit-ms", "10", "--format", "amqp"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("tarry topology declare") != std::string::npos);
    r = run({"delay", "--url", "amqp://localhost", "--routing-key", "q", "--delay-ms", "10"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--exchange is required") != std::string::npos);
    r = run({"delay", "--url", "amqp://localhost", "--exchange", "", "--routing-key", "q", "--delay-ms", "-5"});
    CHECK(r.exit_code == 2);
    r = run({"publish", "--url", "amqp://localhost", "--queue", "q", "--park-beyond-ms", "soon"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--park-beyond-ms needs a non-negative integer") != std::string::npos);
    r = run({"publish", "--url", "amqp://localhost", "--queue", "q", "--prefix", "p"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--prefix goes with --park-beyond-ms") != std::string::npos);
}

TEST_CASE("cascade: tarry publish --park-beyond-ms parks a far job in the cascade (the queue stays empty until it "
          "comes back); with no cascade it exits 1 saying to declare one") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    declared_cascade dc(c, spec_of(unique_name("cli-park"), 10, 10ms));
    const std::string q = dc.destination_queue("cli-park-dest");
    auto ch = c.open_channel();
    const auto depth = [&] {
        auto r = ch.async_declare_queue(passive_queue(q), use_future).get();
        REQUIRE_FALSE(std::get<0>(r));
        return std::get<1>(r).message_count;
    };
    auto r = run_tarry({"publish", "--url", url, "--queue", q, "--delay-ms", "4000", "--id", "far-1", "--park-beyond-ms",
                        "1000", "--prefix", dc.cascade.spec().prefix});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find("published far-1 due ") == 0);
    CHECK(depth() == 0);  // in the cascade
    const auto deadline = steady::now() + 15s;
    while (depth() == 0 && steady::now() < deadline) std::this_thread::sleep_for(50ms);
    CHECK(depth() == 1);  // back in the queue, 250 ms before it is due
    r = run_tarry({"publish", "--url", url, "--queue", q, "--delay-ms", "60000", "--park-beyond-ms", "1000", "--prefix",
                   unique_name("no-such-cascade")});
    CHECK(r.exit_code == 1);
    CHECK_MESSAGE(r.err.find("tarry topology declare") != std::string::npos, r.err);
    CHECK(depth() == 1);
}
