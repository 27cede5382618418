// Errors: a broker channel.close isolates one channel; authentication and
// vhost failures, TLS failures and unreachable brokers fail fast and clearly.
#include "amqp_client.hpp"
#include "process.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>

#include <filesystem>

using namespace amqp_it;

TEST_CASE("a failing declare closes its channel only; another channel keeps consuming") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto good = c.open_channel();
    auto bad = c.open_channel();
    const auto q = unique_name("isolated");
    value_of(good.async_declare_queue(queue_opts(q, true), use_future));
    inbox in;
    in.subscribe(good, q);
    ok(good.async_publish("", q, amqp::message("before"), {}, use_future));
    REQUIRE(in.next());

    // 404: passive declare of a queue that does not exist.
    const auto missing = unique_name("missing");
    auto [ec, info] = wait(bad.async_declare_queue(passive_queue(missing), use_future));
    CHECK(ec == amqp::reply_code::not_found);
    CHECK_FALSE(amqp::requires_reconnect(ec));
    CHECK_FALSE(bad.is_open());
    const auto diag = bad.last_error();
    REQUIRE(diag.reply);
    CHECK(diag.reply->code == 404);
    CHECK(diag.reply->text.find(missing) != std::string::npos);
    CHECK(diag.message.find("queue.declare") != std::string::npos);
    CHECK(wait(bad.async_qos(prefetch(1), use_future)) == amqp::errc::channel_closed);

    ok(good.async_publish("", q, amqp::message("after"), {}, use_future));
    auto d = in.next();
    REQUIRE(d);
    CHECK(d->msg.body_view() == "after");
    ok(good.async_ack(d->delivery_tag, {.multiple = true}, use_future));
    CHECK(c.conn.is_open());

    // 406: redeclare with other arguments.
    auto again = c.open_channel();
    auto [ec2, info2] = wait(again.async_declare_queue(
        queue_opts(q, true, false, {{"x-max-length", std::int32_t{5}}}), use_future));
    CHECK(ec2 == amqp::reply_code::precondition_failed);
    REQUIRE(again.last_error().reply);
    CHECK(again.last_error().reply->text.find("x-max-length") != std::string::npos);
    CHECK(good.is_open());
    CHECK(c.conn.is_open());
}

TEST_CASE("pending operations behind a failing one fail with the broker's code too") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    auto f1 = ch.async_declare_queue(passive_queue(unique_name("nope")), use_future);
    auto f2 = ch.async_purge_queue("whatever", use_future);
    auto f3 = ch.async_publish("", "x", amqp::message("m"), {}, use_future);
    CHECK(std::get<0>(wait(std::move(f1))) == amqp::reply_code::not_found);
    CHECK(std::get<0>(wait(std::move(f2))) == amqp::reply_code::not_found);
    CHECK(wait(std::move(f3)) == amqp::reply_code::not_found);
}

TEST_CASE("publishing to a missing exchange closes the channel with 404") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    std::promise<amqp::diagnostics> closed;
    ch.set_close_handler([&](const amqp::diagnostics& d) { closed.set_value(d); });
    ok(ch.async_publish(unique_name("no-exchange"), "k", amqp::message("m"), {}, use_future));
    auto d = wait(closed.get_future());
    CHECK(d.code == amqp::reply_code::not_found);
    REQUIRE(d.reply);
    CHECK(d.reply->method_id == 40);
    CHECK(c.conn.is_open());
}

TEST_CASE("wrong password: authentication_failed, quickly") {
    TARRY_REQUIRE_BROKER(url);
    auto cfg = config_of(url);
    cfg.password = "wrong-password";
    client c(cfg);
    const auto start = std::chrono::steady_clock::now();
    const auto ec = wait(c.conn.async_connect(use_future));
    CHECK(ec == amqp::errc::authentication_failed);
    CHECK(std::chrono::steady_clock::now() - start < 10s);
    const auto d = c.conn.last_error();
    CHECK(d.message.find("ACCESS_REFUSED") != std::string::npos);
    CHECK_FALSE(c.conn.is_open());
}

TEST_CASE("unknown vhost: vhost_access_refused, quickly") {
    TARRY_REQUIRE_BROKER(url);
    auto cfg = config_of(url);
    cfg.vhost = unique_name("no-such-vhost");
    client c(cfg);
    const auto ec = wait(c.conn.async_connect(use_future));
    CHECK(ec == amqp::errc::vhost_access_refused);
    CHECK(c.conn.last_error().message.find(cfg.vhost) != std::string::npos);
}

TEST_CASE("nothing listening: connect_failed; operations before connecting: not_connected") {
    auto cfg = config_of("amqp://guest:guest@127.0.0.1:1/");
    client c(cfg);
    auto [ec0, ch] = wait(c.conn.async_open_channel(use_future));
    CHECK(ec0 == amqp::errc::not_connected);
    const auto ec = wait(c.conn.async_connect(use_future));
    CHECK(ec == amqp::errc::connect_failed);
    CHECK(c.conn.last_error().message.find("127.0.0.1:1") != std::string::npos);
}

TEST_CASE("TLS to a plain AMQP port fails the TLS handshake with a clear error") {
    TARRY_REQUIRE_BROKER(url);
    auto cfg = config_of(url);
    cfg.tls = true;
    client c(cfg);
    const auto ec = wait(c.conn.async_connect(use_future));
    CHECK(ec == amqp::errc::tls_handshake_failed);
    CHECK(c.conn.last_error().message.find("TLS handshake") != std::string::npos);
}

TEST_CASE("TLS with a certificate nobody vouches for is refused (peer verification is on)") {
    // A TLS listener with a fresh self-signed certificate made by openssl.
    char tmpl[] = "/tmp/tarry-tls.XXXXXX";
    REQUIRE(mkdtemp(tmpl));
    const std::string dir = tmpl;
    struct cleanup {
        std::string d;
        ~cleanup() {
            std::error_code ec;
            std::filesystem::remove_all(d, ec);
        }
    } cleanup_dir{dir};
    auto r = tarry_test::run_process(
        {"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem"},
        30s);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);

    boost::asio::io_context server_io;
    boost::asio::ssl::context sctx(boost::asio::ssl::context::tls_server);
    sctx.use_certificate_chain_file(dir + "/cert.pem");
    sctx.use_private_key_file(dir + "/key.pem", boost::asio::ssl::context::pem);
    boost::asio::ip::tcp::acceptor acceptor(server_io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    const auto port = acceptor.local_endpoint().port();
    std::thread server([&] {
        boost::asio::ssl::stream<boost::asio::ip::tcp::socket> s(server_io, sctx);
        boost::system::error_code ec;
        acceptor.accept(s.next_layer(), ec);
        if (!ec) s.handshake(boost::asio::ssl::stream_base::server, ec);
    });

    amqp::connection_config cfg;
    cfg.host = "127.0.0.1";
    cfg.port = port;
    cfg.tls = true;
    cfg.connection_timeout = 10s;
    {
        client c(cfg);
        const auto ec = wait(c.conn.async_connect(use_future));
        CHECK(ec == amqp::errc::tls_handshake_failed);
        CHECK_MESSAGE(c.conn.last_error().message.find("certificate verify failed") !=
                          std::string::npos,
                      c.conn.last_error().message);
    }
    acceptor.close();
    server.join();
}
