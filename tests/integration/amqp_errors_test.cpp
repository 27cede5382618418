// Errors: a broker channel.close isolates one channel; authentication and
// vhost failures, TLS failures and unreachable brokers fail fast and clearly;
// each operation's diagnostics are its own, and tarry::error carries them.
#include "amqp_client.hpp"
#include "process.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>

#include <filesystem>

using namespace amqp_it;

namespace {

/// Diagnostics no operation writes: what a test finds there was written.
amqp::diagnostics stale() {
    return {amqp::errc::heartbeat_timeout, "stale", amqp::broker_reply{320, "stale", 0, 0}};
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

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

TEST_CASE("a passive declare of a missing queue: its diagnostics hold 404 and the broker's words") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    amqp::diagnostics opened = stale();
    auto [open_ec, ch] = wait(c.conn.async_open_channel(opened, use_future));
    REQUIRE_FALSE(open_ec);
    CHECK_FALSE(opened.code);  // success clears them
    CHECK(opened.message.empty());
    CHECK_FALSE(opened.reply);

    const auto missing = unique_name("missing");
    amqp::diagnostics diag = stale();
    auto [ec, info] = wait(ch.async_declare_queue(passive_queue(missing), diag, use_future));
    CHECK(ec == amqp::reply_code::not_found);
    CHECK(diag.code == amqp::reply_code::not_found);
    REQUIRE(diag.reply);
    CHECK(diag.reply->code == 404);
    CHECK_MESSAGE(has(diag.reply->text, missing), diag.reply->text);
    CHECK(diag.reply->class_id == 50);  // queue.declare
    CHECK(diag.reply->method_id == 10);
    CHECK_MESSAGE(starts_with(diag.message, "queue.declare: "), diag.message);
    CHECK(has(diag.message, missing));

    // Started on the channel the broker closed: refused, and not because of that reply.
    amqp::diagnostics after = stale();
    CHECK(wait(ch.async_qos(prefetch(1), after, use_future)) == amqp::errc::channel_closed);
    CHECK(after.code == amqp::errc::channel_closed);
    CHECK(starts_with(after.message, "basic.qos: "));
    CHECK_FALSE(after.reply);
}

TEST_CASE("operations pending behind the failing one: their own name, the cause's reply") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto missing = unique_name("nope");
    amqp::diagnostics declare, purge;
    auto f1 = ch.async_declare_queue(passive_queue(missing), declare, use_future);
    auto f2 = ch.async_purge_queue("whatever", purge, use_future);
    CHECK(std::get<0>(wait(std::move(f1))) == amqp::reply_code::not_found);
    CHECK(std::get<0>(wait(std::move(f2))) == amqp::reply_code::not_found);
    CHECK(starts_with(declare.message, "queue.declare: "));
    CHECK_MESSAGE(starts_with(purge.message, "queue.purge: "), purge.message);
    REQUIRE(purge.reply);
    CHECK(purge.reply->method_id == 10);  // the declare closed the channel
    CHECK(has(purge.reply->text, missing));
}

TEST_CASE("two failures in a row each get their own diagnostics; last_error() keeps only the latest") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);

    SUBCASE("on two channels, at once") {
        auto one = c.open_channel();
        auto two = c.open_channel();
        const auto a = unique_name("missing-a");
        const auto b = unique_name("missing-b");
        amqp::diagnostics da, db;
        auto fa = one.async_declare_queue(passive_queue(a), da, use_future);
        auto fb = two.async_declare_queue(passive_queue(b), db, use_future);
        CHECK(std::get<0>(wait(std::move(fa))) == amqp::reply_code::not_found);
        CHECK(std::get<0>(wait(std::move(fb))) == amqp::reply_code::not_found);
        REQUIRE(da.reply);
        REQUIRE(db.reply);
        CHECK(has(da.reply->text, a));
        CHECK_FALSE(has(da.reply->text, b));
        CHECK(has(db.reply->text, b));
        CHECK_FALSE(has(db.reply->text, a));
        CHECK(has(da.message, "channel " + std::to_string(one.number())));
        CHECK(has(db.message, "channel " + std::to_string(two.number())));

        // tarry::error carries them: the same code, and what() has both parts.
        const tarry::error e("cannot check queue '" + a + "'", da);
        CHECK(e.code() == amqp::reply_code::not_found);
        CHECK(e.code() == da.code);
        CHECK(std::string(e.what()) == "cannot check queue '" + a + "': " + da.message);
        REQUIRE(e.diagnostics().reply);
        CHECK(*e.diagnostics().reply == *da.reply);
        try {
            throw tarry::error("cannot check queue '" + b + "'", db);
        } catch (const std::system_error& caught) {
            CHECK(caught.code() == amqp::reply_code::not_found);
            CHECK(has(caught.what(), b));
        }
    }
    SUBCASE("on one channel that stays open") {
        auto ch = c.open_channel();
        amqp::message huge("m");
        huge.properties.headers = amqp::field_table{{"big", std::string(200000, 'h')}};
        amqp::diagnostics first, second;
        auto f1 = ch.async_publish("", std::string(300, 'k'), amqp::message("m"), {}, first, use_future);
        auto f2 = ch.async_publish("", "q", huge, {}, second, use_future);
        CHECK(wait(std::move(f1)) == amqp::errc::invalid_argument);
        CHECK(wait(std::move(f2)) == amqp::errc::header_too_large);
        CHECK(first.code == amqp::errc::invalid_argument);
        CHECK_MESSAGE(has(first.message, "routing-key"), first.message);
        CHECK(second.code == amqp::errc::header_too_large);
        CHECK(starts_with(second.message, "basic.publish: "));
        CHECK(ch.is_open());
        // The channel's last_error() only knows the latest: reading it after
        // the first failure could have given the second.
        CHECK(ch.last_error().code == second.code);
        CHECK(ch.last_error().message == second.message);
    }
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
    amqp::diagnostics diag = stale();
    const auto ec = wait(c.conn.async_connect(diag, use_future));
    CHECK(ec == amqp::errc::authentication_failed);
    CHECK(std::chrono::steady_clock::now() - start < 10s);
    CHECK(diag.code == amqp::errc::authentication_failed);
    CHECK_MESSAGE(starts_with(diag.message, "connect: "), diag.message);
    CHECK(has(diag.message, "ACCESS_REFUSED"));
    REQUIRE(diag.reply);
    CHECK(diag.reply->code == 403);
    const auto d = c.conn.last_error();
    CHECK(d.message.find("ACCESS_REFUSED") != std::string::npos);
    CHECK_FALSE(c.conn.is_open());

    const tarry::error e("tarry: cannot connect", diag);
    CHECK(e.code() == amqp::errc::authentication_failed);
    CHECK(e.code() != amqp::reply_code::not_found);  // told apart from a missing queue
    CHECK(std::string(e.what()) == "tarry: cannot connect: " + diag.message);
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
    amqp::diagnostics open = stale();
    auto [ec0, ch] = wait(c.conn.async_open_channel(open, use_future));
    CHECK(ec0 == amqp::errc::not_connected);
    CHECK(open.code == amqp::errc::not_connected);
    CHECK(starts_with(open.message, "channel.open: "));
    amqp::diagnostics connect = stale();
    const auto ec = wait(c.conn.async_connect(connect, use_future));
    CHECK(ec == amqp::errc::connect_failed);
    CHECK(connect.code == amqp::errc::connect_failed);
    CHECK_MESSAGE(has(connect.message, "127.0.0.1:1"), connect.message);
    CHECK_FALSE(connect.reply);
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
