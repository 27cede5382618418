// amqps:// against a real broker: a node of this file's own with a TLS
// listener and a throwaway CA (scripts/broker start --tls). Trusting that
// CA, the client verifies the broker (chain and host name) and works end to
// end; with the system's trust store only, verification fails fast and says
// why; verify=verify_none connects anyway; a name the certificate does not
// carry is refused.
#include "amqp_client.hpp"
#include "private_broker.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

using namespace amqp_it;

namespace {

/// Like the other integration tests, these run only under a test broker
/// run (scripts/with-broker), even though they start a node of their own.
bool skip_without_broker_run() {
    if (tarry_test::amqp_url()) return false;
    MESSAGE("SKIPPED: TARRY_TEST_AMQP_URL is not set (run under scripts/with-broker)");
    ++::tarry_test::runtime_skips();
    return true;
}

/// One TLS node for every case of this file, started on first use, stopped
/// when the program exits (failed checks included).
const tarry_test::private_broker& tls_broker() {
    static const tarry_test::private_broker broker = tarry_test::private_broker::with_tls();
    return broker;
}

/// The TLS URL with `query` appended ("" for none). Every connect is bounded
/// by a connection_timeout well below the test's own waits.
std::string tls_url(const std::string& query) {
    const auto& b = tls_broker();
    REQUIRE_MESSAGE(!b.tls_url().empty(), "the TLS broker wrote no tls-url");
    return b.tls_url() + "?connection_timeout=10000" + (query.empty() ? "" : "&" + query);
}

using steady = std::chrono::steady_clock;

}  // namespace

TEST_CASE("amqps with the broker's CA: verified TLS, confirmed publish, delivery intact") {
    if (skip_without_broker_run()) return;
    const auto& broker = tls_broker();
    const auto cfg = config_of(tls_url("cacertfile=" + broker.ca_file()));
    REQUIRE(cfg.tls);
    CHECK(cfg.tls_options.verify_peer);  // the default: verification on
    CHECK(cfg.tls_options.ca_file == broker.ca_file());
    CHECK(cfg.host == "localhost");

    client c(cfg);
    c.connect();
    REQUIRE(c.conn.is_open());
    auto ch = c.open_channel();
    const auto q = unique_name("tls");
    value_of(ch.async_declare_queue(queue_opts(q, true), use_future));
    ok(ch.async_confirm_select(use_future));
    inbox in;
    value_of(ch.async_consume(consume_opts(q), in.handlers(), use_future));

    // A body larger than one frame, so it crosses many TLS records.
    std::vector<std::uint8_t> body(300000);
    for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<std::uint8_t>((i * 31 + 7) % 251);
    amqp::basic_properties p;
    p.message_id = "tls-1";
    p.content_type = "application/octet-stream";
    // In name order: RabbitMQ 4 delivers the header table sorted by name.
    p.headers = amqp::field_table{{"n", std::int32_t{42}}, {"over", std::string("tls")}};
    const amqp::message sent(p, body);
    ok(ch.async_publish("", q, sent, {}, use_future));  // completes on the broker's ack
    CHECK(ch.unconfirmed() == 0);

    auto d = in.next();
    REQUIRE_MESSAGE(d, "no delivery within the wait");
    CHECK(d->routing_key == q);
    CHECK(d->msg.body.size() == body.size());
    CHECK(d->msg == sent);
    ok(ch.async_ack(d->delivery_tag, {}, use_future));
    CHECK(c.conn.usage().bytes_received > body.size());

    // The broker sees this connection as a TLS one.
    auto listed = broker.ctl({"list_connections", "--quiet", "--no-table-headers", "ssl", "ssl_protocol"});
    REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
    CAPTURE(listed.out);
    CHECK(listed.out.find("true") != std::string::npos);
    CHECK(listed.out.find("tlsv1.") != std::string::npos);
}

TEST_CASE("amqps without the CA (system trust store): certificate verification fails, fast") {
    if (skip_without_broker_run()) return;
    const auto url = tls_url("");
    CHECK(config_of(url).tls_options.verify_peer);
    CHECK(config_of(url).tls_options.ca_file.empty());
    client c(url);
    const auto start = steady::now();
    const auto ec = wait(c.conn.async_connect(use_future), 20s);
    const auto took = steady::now() - start;
    const auto diag = c.conn.last_error();
    CAPTURE(diag.message);
    CHECK(ec == amqp::errc::tls_handshake_failed);
    CHECK(diag.code == amqp::errc::tls_handshake_failed);
    CHECK(diag.message.find("TLS handshake") != std::string::npos);
    CHECK(diag.message.find("certificate") != std::string::npos);
    CHECK(took < 5s);  // refused, not timed out
    CHECK_FALSE(c.conn.is_open());
}

TEST_CASE("amqps with verify=verify_none connects without any CA") {
    if (skip_without_broker_run()) return;
    const auto cfg = config_of(tls_url("verify=verify_none"));
    REQUIRE(cfg.tls);
    CHECK_FALSE(cfg.tls_options.verify_peer);
    CHECK(cfg.tls_options.ca_file.empty());
    client c(cfg);
    c.connect();
    auto ch = c.open_channel();
    const auto q = unique_name("tls-noverify");
    value_of(ch.async_declare_queue(queue_opts(q, true), use_future));
    ok(ch.async_confirm_select(use_future));
    ok(ch.async_publish("", q, amqp::message("unverified but encrypted"), {}, use_future));
    auto got = value_of(ch.async_get(q, {.no_ack = true}, use_future));
    REQUIRE(got);
    CHECK(got->item.msg.body_view() == "unverified but encrypted");
}

TEST_CASE("amqps with the CA but another server name: the host name check refuses") {
    if (skip_without_broker_run()) return;
    const auto& broker = tls_broker();
    client c(tls_url("cacertfile=" + broker.ca_file() +
                     "&server_name_indication=not-this-broker.invalid"));
    const auto start = steady::now();
    const auto ec = wait(c.conn.async_connect(use_future), 20s);
    const auto took = steady::now() - start;
    CAPTURE(c.conn.last_error().message);
    CHECK(ec == amqp::errc::tls_handshake_failed);
    CHECK(c.conn.last_error().message.find("certificate") != std::string::npos);
    CHECK(took < 5s);
}
