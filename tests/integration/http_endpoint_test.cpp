// tarry::http_endpoint against a real consumer on the real broker, through
// a Beast client: every route, every refusal, the gateway's confirms and
// refusals, and the endpoint's answers while the consumer or the broker
// fails.
#include "consumer_fixture.hpp"
#include "control_entries.hpp"
#include "http_client.hpp"
#include "private_broker.hpp"
#include "tcp_relay.hpp"

#include "tarry/http/http_endpoint.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

using namespace consumer_it;
using tarry_test::http_get;
using tarry_test::http_request;
using verb = boost::beast::http::verb;
namespace json = boost::json;

namespace {

const std::string token = "s3cret-token";

tarry::http_endpoint_options endpoint_options() {
    tarry::http_endpoint_options o;
    o.token = token;
    return o;
}

std::vector<std::pair<std::string, std::string>> bearer(const std::string& t = token) {
    return {{"Authorization", "Bearer " + t}, {"Content-Type", "application/json"}};
}

tarry_test::http_reply publish(const boost::asio::ip::tcp::endpoint& at, const std::string& queue,
                               const std::string& body, const std::string& t = token) {
    return http_request(at, verb::post, "/v1/queues/" + queue + "/messages", body, bearer(t));
}

/// A consumer on a fresh queue, a gateway connection, and the endpoint.
struct served_queue {
    explicit served_queue(const std::string& url, tarry::subscription_options o,
                          tarry::http_endpoint_options eo = endpoint_options())
        : worker(url, std::move(o)), gateway(url) {
        gateway.connect();
        endpoint.emplace(worker.worker, &gateway.conn, std::move(eo));
        endpoint->start();
    }
    ~served_queue() { endpoint.reset(); }
    boost::asio::ip::tcp::endpoint at() const { return endpoint->local_endpoint(); }
    const std::string& queue() const { return worker.worker.options().queue; }

    running_consumer worker;
    client gateway;
    std::optional<tarry::http_endpoint> endpoint;
};

/// `cfg` connecting through a relay on 127.0.0.1:port.
amqp::connection_config through(amqp::connection_config cfg, std::uint16_t port) {
    cfg.host = "127.0.0.1";
    cfg.port = port;
    return cfg;
}

double value_of(const std::string& metrics, const std::string& series) {
    const auto at = metrics.find("\n" + series + " ");
    REQUIRE_MESSAGE(at != std::string::npos, "no series " << series << " in\n" << metrics);
    return std::stod(metrics.substr(at + series.size() + 2));
}

}  // namespace

TEST_CASE("http: healthz, readyz and metrics of a consuming worker") {
    TARRY_REQUIRE_BROKER(url);
    served_queue s(url, options_for(unique_name("http-health")));
    CHECK(s.at().address().to_string() == "127.0.0.1");  // loopback unless told otherwise
    auto h = http_get(s.at(), "/healthz");
    CHECK(h.status == 200);
    auto r = http_get(s.at(), "/readyz");
    CHECK_MESSAGE(r.status == 200, r.body);
    auto m = http_get(s.at(), "/metrics");
    REQUIRE(m.status == 200);
    CHECK(m.header(boost::beast::http::field::content_type).starts_with("text/plain; version=0.0.4"));
    const std::string q = "{queue=\"" + s.queue() + "\"}";
    CHECK(value_of(m.body, "tarry_connected" + q) == 1);
    CHECK(value_of(m.body, "tarry_jobs_started_total" + q) == 0);
    // HEAD: the headers alone.
    auto head = http_request(s.at(), verb::head, "/metrics");
    CHECK(head.status == 200);
    CHECK(head.body.empty());
}

TEST_CASE("http: a publish is confirmed (201), its jobs run when due, under the ids given or assigned") {
    TARRY_REQUIRE_BROKER(url);
    served_queue s(url, options_for(unique_name("http-publish")));
    const auto sent = sys::now();
    auto p = publish(s.at(), s.queue(),
                     R"({"messages":[{"body":"later","delay":2,"id":"job-later"},{"body":{"k":1},"headers":{"x-a":"b"}}]})");
    REQUIRE_MESSAGE(p.status == 201, p.body);
    const auto ids = json::parse(p.body).at("ids").as_array();
    REQUIRE(ids.size() == 2);
    CHECK(ids[0].as_string() == "job-later");
    const std::string assigned(ids[1].as_string());
    CHECK(assigned.size() == 36);  // a UUID
    REQUIRE(s.worker.log.wait_count(kind::succeeded, 2, 10s));
    const auto later = s.worker.log.find(kind::run, "job-later");
    REQUIRE(later);
    CHECK(later->at >= sent + 2s);  // never early
    CHECK(later->at < sent + 4s);
    CHECK(s.worker.log.find(kind::run, assigned));
    auto m = http_get(s.at(), "/metrics");
    const std::string q = "{queue=\"" + s.queue() + "\"}";
    CHECK(value_of(m.body, "tarry_jobs_started_total" + q) == 2);
    CHECK(value_of(m.body, "tarry_start_lateness_seconds_count" + q) == 2);
}

TEST_CASE("http: /jobs pages the held jobs in due order with a stable cursor; parked counts from the broker") {
    TARRY_REQUIRE_BROKER(url);
    auto o = options_for(unique_name("http-jobs"));
    o.hold_horizon = 10min;
    served_queue s(url, o);
    // Five jobs due in 60..100 s, published in another order; one due in
    // an hour, so parked.
    auto p = publish(s.at(), s.queue(),
                     R"({"messages":[{"body":"c","delay":80,"id":"c"},{"body":"a","delay":60,"id":"a"},)"
                     R"({"body":"e","delay":100,"id":"e"},{"body":"b","delay":70,"id":"b"},)"
                     R"({"body":"d","delay":90,"id":"d"},{"body":"far","delay":3600,"id":"far"}]})");
    REQUIRE_MESSAGE(p.status == 201, p.body);
    REQUIRE(s.worker.log.wait_count(kind::parked, 1, 10s));
    for (int i = 0; i < 100 && s.worker.worker.stats().held < 5; ++i) std::this_thread::sleep_for(50ms);
    REQUIRE(s.worker.worker.stats().held == 5);

    std::vector<std::string> seen;
    std::string after;
    std::vector<double> dues;
    for (int page = 0; page < 5; ++page) {
        auto r = http_get(s.at(), "/jobs?limit=2" + (after.empty() ? "" : "&after=" + after));
        REQUIRE_MESSAGE(r.status == 200, r.body);
        const auto doc = json::parse(r.body).as_object();
        CHECK(doc.at("held").as_int64() == (page == 0 ? 5 : 6));
        for (const auto& j : doc.at("jobs").as_array()) {
            seen.emplace_back(j.at("id").as_string());
            dues.push_back(j.at("due").to_number<double>());
            CHECK(j.at("attempt").as_int64() == 1);
        }
        const auto& parked = doc.at("parked_by_queue").as_object();
        CHECK(parked.size() == s.worker.worker.wait_queues().size());
        if (doc.at("next").is_null()) break;
        after = std::string(doc.at("next").as_string());
        if (page == 0) {
            // A job that arrives between pages, due before the cursor, does
            // not make the next page repeat or skip one held throughout.
            auto early = publish(s.at(), s.queue(), R"({"messages":[{"body":"z","delay":50,"id":"z"}]})");
            REQUIRE(early.status == 201);
            for (int i = 0; i < 100 && s.worker.worker.stats().held < 6; ++i) std::this_thread::sleep_for(50ms);
        }
    }
    CHECK(seen == std::vector<std::string>{"a", "b", "c", "d", "e"});
    CHECK(std::is_sorted(dues.begin(), dues.end()));
    // The parked one is counted in its wait queue (the broker's count).
    std::uint64_t parked_total = 0;
    for (int i = 0; i < 50 && parked_total == 0; ++i) {
        std::this_thread::sleep_for(100ms);
        const auto doc = json::parse(http_get(s.at(), "/jobs").body).as_object();
        parked_total = 0;
        for (const auto& [q, n] : doc.at("parked_by_queue").as_object())
            if (n.is_int64()) parked_total += static_cast<std::uint64_t>(n.as_int64());
    }
    CHECK(parked_total == 1);
}

TEST_CASE("http: every refusal has its status and says why") {
    TARRY_REQUIRE_BROKER(url);
    auto o = options_for(unique_name("http-refusals"));
    o.max_delay = std::chrono::hours(1);
    auto eo = endpoint_options();
    eo.max_body_bytes = 4096;
    eo.max_header_bytes = 2048;
    served_queue s(url, o, eo);
    const std::string good = R"({"messages":[{"body":"x"}]})";
    CHECK(http_get(s.at(), "/nope").status == 404);
    CHECK(http_request(s.at(), verb::post, "/metrics", "x").status == 405);
    CHECK(http_request(s.at(), verb::post, "/metrics", "x").header(boost::beast::http::field::allow) != "");
    CHECK(http_get(s.at(), "/jobs?limit=0").status == 400);
    CHECK(http_get(s.at(), "/jobs?limit=1001").status == 400);
    CHECK(http_get(s.at(), "/jobs?after=not-a-cursor").status == 400);
    auto none = http_request(s.at(), verb::post, "/v1/queues/" + s.queue() + "/messages", good);
    CHECK(none.status == 401);
    CHECK(publish(s.at(), s.queue(), good, "wrong").status == 403);
    CHECK(publish(s.at(), "another-queue", good).status == 404);
    CHECK(publish(s.at(), s.queue(), "{not json").status == 400);
    CHECK(publish(s.at(), s.queue(), R"({"messages":[{"body":"x","delay":7200}]})").status == 400);
    CHECK(publish(s.at(), s.queue(), R"({"messages":[{"body":"x","delay":-1}]})").status == 400);
    CHECK(publish(s.at(), s.queue(), R"({"messages":[]})").status == 400);
    auto big = publish(s.at(), s.queue(), R"({"messages":[{"body":")" + std::string(5000, 'x') + "\"}]}");
    CHECK(big.status == 413);
    auto long_header = http_request(s.at(), verb::get, "/metrics", {}, {{"X-Long", std::string(4000, 'h')}});
    CHECK(long_header.status == 413);
    // A malformed request line: 400, and the connection is closed.
    const auto raw = tarry_test::raw_exchange(s.at(), "GARBAGE\r\n\r\n");
    CHECK(raw.starts_with("HTTP/1.1 400"));
    // Each error body is JSON with the reason.
    auto bad = publish(s.at(), s.queue(), R"({"messages":[{"body":"x","delay":"soon"}]})");
    CHECK(bad.status == 400);
    CHECK(json::parse(bad.body).at("error").as_string().find("delay") != json::string::npos);
    // Nothing of that was published.
    CHECK(s.worker.worker.stats().received == 0);
    CHECK(publish(s.at(), s.queue(), good).status == 201);
}

TEST_CASE("http: without a token every publish is refused (403); without a gateway connection, 503") {
    TARRY_REQUIRE_BROKER(url);
    running_consumer worker(url, options_for(unique_name("http-no-token")));
    {
        client gateway(url);
        gateway.connect();
        tarry::http_endpoint ep(worker.worker, &gateway.conn);  // no token
        ep.start();
        CHECK(publish(ep.local_endpoint(), worker.worker.options().queue, R"({"messages":[{"body":"x"}]})")
                  .status == 403);
    }
    tarry::http_endpoint ep(worker.worker, nullptr, endpoint_options());
    ep.start();
    CHECK(publish(ep.local_endpoint(), worker.worker.options().queue, R"({"messages":[{"body":"x"}]})").status ==
          503);
    // /jobs still answers; the parked counts are unknown (null).
    auto j = http_get(ep.local_endpoint(), "/jobs");
    REQUIRE(j.status == 200);
    const auto doc = json::parse(j.body);
    for (const auto& [q, n] : doc.at("parked_by_queue").as_object()) CHECK(n.is_null());
    CHECK(worker.worker.stats().received == 0);
}

TEST_CASE("http: messages the broker refuses are named (207); the others were sent and run") {
    TARRY_REQUIRE_BROKER(url);
    // A queue that takes two messages and refuses more (reject-publish),
    // served by a consumer that declares nothing and is stopped, so the
    // queue fills.
    const std::string q = unique_name("http-partial");
    {
        connected_client admin(url);
        auto ch = admin.open_channel();
        wait(ch.async_declare_queue(
            queue_opts(q, false, false, {{"x-max-length", std::int32_t{2}}, {"x-overflow", "reject-publish"}}),
            use_future));
    }
    auto o = options_for(q);
    o.declare_queue = false;
    served_queue s(url, o);
    s.worker.worker.stop();
    auto p = publish(s.at(), q, R"({"messages":[{"body":"1","id":"one"},{"body":"2","id":"two"},{"body":"3","id":"three"}]})");
    REQUIRE_MESSAGE(p.status == 207, p.body);
    const auto doc = json::parse(p.body).as_object();
    const auto& ids = doc.at("ids").as_array();
    REQUIRE(ids.size() == 3);
    CHECK(ids[0].as_string() == "one");
    CHECK(ids[1].as_string() == "two");
    CHECK(ids[2].is_null());
    const auto& errors = doc.at("errors").as_array();
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].at("index").as_int64() == 2);
    CHECK_FALSE(errors[0].at("error").as_string().empty());
    // readyz says the stopped consumer is not ready.
    auto r = http_get(s.at(), "/readyz");
    CHECK(r.status == 503);
    CHECK_FALSE(r.body.empty());
}

TEST_CASE("http: the gateway's broker unreachable: 503 and nothing sent; readyz says why the consumer is not ready") {
    TARRY_REQUIRE_BROKER(url);
    const auto cfg = config_of(url);
    auto relay = std::make_unique<tarry_test::tcp_relay>(cfg.host, cfg.effective_port());
    const auto port = relay->port();
    const auto relayed = through(cfg, port);
    auto o = options_for(unique_name("http-unreachable"));
    running_consumer worker(relayed, o);
    client gateway(relayed);
    gateway.connect();
    tarry::http_endpoint ep(worker.worker, &gateway.conn, endpoint_options());
    ep.start();
    REQUIRE(http_get(ep.local_endpoint(), "/readyz").status == 200);
    relay.reset();  // every connection through it cut, and no new one taken
    // Both have read the end of their connections (the consumer may be a
    // little later than the gateway on a loaded machine).
    for (int i = 0; i < 100 && (gateway.conn.is_open() || worker.worker.health().ready()); ++i)
        std::this_thread::sleep_for(20ms);
    auto p = publish(ep.local_endpoint(), o.queue, R"({"messages":[{"body":"x"}]})");
    CHECK_MESSAGE(p.status == 503, p.body);
    auto r = http_get(ep.local_endpoint(), "/readyz");
    CHECK(r.status == 503);
    CHECK_MESSAGE(r.body.find("lost") != std::string::npos, r.body);
    CHECK(http_get(ep.local_endpoint(), "/healthz").status == 200);  // the process answers
    CHECK(http_get(ep.local_endpoint(), "/metrics").body.find("tarry_connected{queue=\"" + o.queue + "\"} 0") !=
          std::string::npos);
    // Back: the consumer reconnects through a relay on the same port.
    relay = std::make_unique<tarry_test::tcp_relay>(cfg.host, cfg.effective_port(), port);
    bool ready = false;
    for (int i = 0; i < 200 && !ready; ++i) {
        std::this_thread::sleep_for(50ms);
        ready = http_get(ep.local_endpoint(), "/readyz").status == 200;
    }
    CHECK(ready);
}

TEST_CASE("http: healthz is 503 while the consumer's I/O thread does not answer") {
    TARRY_REQUIRE_BROKER(url);
    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    std::thread t([&] { io.run(); });
    {
        tarry::consumer worker(io.get_executor(), config_of(url), options_for(unique_name("http-stuck")), succeed);
        worker.start();
        tarry::http_endpoint ep(worker, nullptr, endpoint_options());
        ep.start();
        CHECK(http_get(ep.local_endpoint(), "/healthz").status == 200);
        std::promise<void> release;
        auto released = release.get_future().share();
        boost::asio::post(io, [released] { released.wait(); });  // the I/O thread is stuck
        auto h = http_get(ep.local_endpoint(), "/healthz");
        release.set_value();
        CHECK(h.status == 503);
        CHECK(http_get(ep.local_endpoint(), "/healthz").status == 200);
        ep.stop();
        worker.stop();
    }
    guard.reset();
    t.join();
}

TEST_CASE("http: keep-alive, pipelining and Expect: 100-continue") {
    TARRY_REQUIRE_BROKER(url);
    served_queue s(url, options_for(unique_name("http-keepalive")));
    const std::string two = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                            "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    const auto got = tarry_test::raw_exchange(s.at(), two);
    CHECK(got.find("HTTP/1.1 200") == 0);
    CHECK(got.find("ok\n") != std::string::npos);
    CHECK(got.find("ready\n") != std::string::npos);
    const std::string body = R"({"messages":[{"body":"x"}]})";
    const std::string expect = "POST /v1/queues/" + s.queue() +
                               "/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token +
                               "\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nConnection: close\r\n"
                               "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    const auto cont = tarry_test::raw_exchange(s.at(), expect);
    CHECK(cont.find("HTTP/1.1 100 Continue") == 0);
    CHECK(cont.find("HTTP/1.1 201") != std::string::npos);
}

TEST_CASE("http: stop() cuts open connections, returns, and the port answers no more") {
    TARRY_REQUIRE_BROKER(url);
    running_consumer worker(url, options_for(unique_name("http-stop")));
    tarry::http_endpoint ep(worker.worker, nullptr, endpoint_options());
    ep.start();
    const auto at = ep.local_endpoint();
    // A client that sent half a request.
    auto half = std::async(std::launch::async, [&] { return tarry_test::raw_exchange(at, "GET /metr", 20s); });
    std::this_thread::sleep_for(200ms);
    const auto t0 = std::chrono::steady_clock::now();
    ep.stop();
    CHECK(std::chrono::steady_clock::now() - t0 < 2s);
    CHECK(half.wait_for(5s) == std::future_status::ready);
    CHECK(http_get(at, "/healthz").status == 0);
    ep.stop();  // idempotent
}

TEST_CASE("http: options that cannot work are refused at construction; a port in use at start") {
    TARRY_REQUIRE_BROKER(url);
    running_consumer worker(url, options_for(unique_name("http-options")));
    auto bad_host = endpoint_options();
    bad_host.host = "localhost";  // a name, not an address
    CHECK_THROWS_AS(tarry::http_endpoint(worker.worker, nullptr, bad_host), tarry::error);
    auto no_messages = endpoint_options();
    no_messages.max_messages = 0;
    CHECK_THROWS_AS(tarry::http_endpoint(worker.worker, nullptr, no_messages), tarry::error);
    tarry::http_endpoint first(worker.worker, nullptr, endpoint_options());
    first.start();
    auto same = endpoint_options();
    same.port = first.local_endpoint().port();
    tarry::http_endpoint second(worker.worker, nullptr, same);
    try {
        second.start();
        FAIL("a second endpoint on the same port started");
    } catch (const tarry::error& e) {
        CHECK(e.code() == std::errc::address_in_use);
        CHECK(std::string(e.what()).find(std::to_string(same.port)) != std::string::npos);
    }
}

TEST_CASE("http: the broker stops taking publishes mid-request, then the connection drops: 207 names every message not sent") {
    TARRY_REQUIRE_BROKER(url);
    TARRY_REQUIRE_BROKER_DIR(dir);
    const auto cfg = config_of(url);
    tarry_test::tcp_relay relay(cfg.host, cfg.effective_port());
    const auto relayed = through(cfg, relay.port());
    auto o = options_for(unique_name("http-mid-request"));
    running_consumer worker(url, o);
    client gateway(relayed);
    gateway.connect();
    tarry::http_endpoint ep(worker.worker, &gateway.conn, endpoint_options());
    ep.start();
    // A memory alarm: the broker stops reading publishing connections, so
    // the request's publishes stay unconfirmed ...
    struct alarm_cleared {
        std::string dir;
        ~alarm_cleared() { tarry_test::private_broker::broker_ctl(dir, {"set_vm_memory_high_watermark", "0.4"}); }
    } cleared{*dir};
    const auto alarm = tarry_test::private_broker::broker_ctl(*dir, {"set_vm_memory_high_watermark", "0.000001"});
    REQUIRE_MESSAGE(alarm.exit_code == 0, alarm.err);
    auto answer = std::async(std::launch::async, [&] {
        return publish(ep.local_endpoint(), o.queue,
                       R"({"messages":[{"body":"1","id":"one"},{"body":"2","id":"two"},{"body":"3","id":"three"}]})");
    });
    CHECK(answer.wait_for(1500ms) == std::future_status::timeout);  // still waiting for confirms
    // ... until the gateway's connection is cut.
    relay.cut_all();
    REQUIRE(answer.wait_for(10s) == std::future_status::ready);
    const auto p = answer.get();
    REQUIRE_MESSAGE(p.status == 207, p.body);
    const auto doc = json::parse(p.body).as_object();
    for (const auto& id : doc.at("ids").as_array()) CHECK(id.is_null());
    const auto& errors = doc.at("errors").as_array();
    REQUIRE(errors.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(errors[i].at("index").as_int64() == static_cast<std::int64_t>(i));
        CHECK_FALSE(errors[i].at("error").as_string().empty());
    }
    // Once the alarm is over, the gateway (reconnected) publishes again.
    const auto clear = tarry_test::private_broker::broker_ctl(*dir, {"set_vm_memory_high_watermark", "0.4"});
    REQUIRE_MESSAGE(clear.exit_code == 0, clear.err);
    int status = 0;
    for (int i = 0; i < 100 && status != 201; ++i) {
        status = static_cast<int>(publish(ep.local_endpoint(), o.queue, R"({"messages":[{"body":"after"}]})").status);
        if (status != 201) std::this_thread::sleep_for(100ms);
    }
    CHECK(status == 201);
}

TEST_CASE("http: DELETE cancels a held job (200), PUT reschedules one (200): the job runs once, when asked") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    served_queue s(url, options_for(unique_name("http-cancel")));
    control_stream_cleanup stream{c, s.queue()};
    const std::string jobs = "/v1/queues/" + s.queue() + "/messages/";
    auto p = publish(s.at(), s.queue(),
                     R"({"messages":[{"body":"a","delay":2.5,"id":"gone"},{"body":"b","delay":2.5,"id":"moved"}]})");
    REQUIRE_MESSAGE(p.status == 201, p.body);
    REQUIRE(wait_held(s.worker, 2));
    auto d = http_request(s.at(), verb::delete_, jobs + "gone", "", bearer());
    CHECK_MESSAGE(d.status == 200, d.body);
    CHECK(d.body == R"({"id":"gone"})");
    const auto asked = sys::now();
    auto u = http_request(s.at(), verb::put, jobs + "moved", R"({"body":"b2","delay":1})", bearer());
    CHECK_MESSAGE(u.status == 200, u.body);
    CHECK(u.body == R"({"id":"moved"})");
    REQUIRE(s.worker.log.wait_count(kind::succeeded, 1, 10s));
    REQUIRE(s.worker.log.wait_count(kind::cancelled, 2, 10s));  // "gone", and moved's first copy
    const auto run = s.worker.log.find(kind::run, "moved");
    REQUIRE(run);
    CHECK(run->at >= asked + 1s);
    CHECK(run->at < asked + 2s);
    CHECK(s.worker.log.count(kind::run) == 1);
    CHECK_FALSE(s.worker.log.find(kind::run, "gone"));
}

TEST_CASE("http: job commands are refused as publishes are, and a bad reschedule body is a 400 naming the field") {
    TARRY_REQUIRE_BROKER(url);
    served_queue s(url, options_for(unique_name("http-cancel-refused")));
    const std::string jobs = "/v1/queues/" + s.queue() + "/messages/";
    auto r = http_request(s.at(), verb::delete_, jobs + "x", "", {});
    CHECK(r.status == 401);
    r = http_request(s.at(), verb::delete_, jobs + "x", "", bearer("wrong"));
    CHECK(r.status == 403);
    r = http_request(s.at(), verb::put, jobs + "x", R"({"delay":1})", bearer());
    CHECK(r.status == 400);
    CHECK_MESSAGE(r.body.find("body: missing") != std::string::npos, r.body);
    r = http_request(s.at(), verb::put, jobs + "x", R"({"body":"b","id":"y"})", bearer());
    CHECK(r.status == 400);
    r = http_request(s.at(), verb::get, jobs + "x", "", bearer());
    CHECK(r.status == 405);
    CHECK(r.header(boost::beast::http::field::allow) == "PUT, DELETE");
    r = http_request(s.at(), verb::delete_, "/v1/queues/other/messages/x", "", bearer());
    CHECK(r.status == 404);
}
