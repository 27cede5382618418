// AMQP URLs: RabbitMQ's URI spec, percent-decoding, query options, errors.
#include "tarry/amqp/error.hpp"
#include "tarry/amqp/url.hpp"

#include <doctest/doctest.h>

#include <ostream>  // doctest prints std::error_code with it

using namespace tarry::amqp;

TEST_CASE("a full URL fills every field") {
    auto r = parse_url("amqp://al%40ice:p%3Ass@broker.example:5673/my%2Fvhost");
    REQUIRE_FALSE(r.error);
    CHECK(r.config.username == "al@ice");
    CHECK(r.config.password == "p:ss");
    CHECK(r.config.host == "broker.example");
    CHECK(r.config.port == 5673);
    CHECK(r.config.vhost == "my/vhost");
    CHECK_FALSE(r.config.tls);
}

TEST_CASE("defaults: no path means vhost /, port by scheme, heartbeat on") {
    auto r = parse_url("amqp://localhost");
    REQUIRE_FALSE(r.error);
    CHECK(r.config.vhost == "/");
    CHECK(r.config.effective_port() == 5672);
    CHECK(r.config.heartbeat == 60);
    CHECK(r.config.username == "guest");
    auto s = parse_url("amqps://h/");
    REQUIRE_FALSE(s.error);
    CHECK(s.config.tls);
    CHECK(s.config.vhost == "/");
    CHECK(s.config.effective_port() == 5671);
    CHECK(s.config.tls_options.verify_peer);
    CHECK(parse_url("amqp://h/%2F").config.vhost == "/");
    CHECK(parse_url("AMQP://h").config.host == "h");
}

TEST_CASE("IPv6 hosts in brackets") {
    auto r = parse_url("amqp://u:p@[::1]:5999/v");
    REQUIRE_FALSE(r.error);
    CHECK(r.config.host == "::1");
    CHECK(r.config.port == 5999);
    auto s = parse_url("amqp://[fe80::1]");
    REQUIRE_FALSE(s.error);
    CHECK(s.config.host == "fe80::1");
    CHECK(s.config.port == 0);
}

TEST_CASE("query options") {
    auto r = parse_url(
        "amqps://h/v?heartbeat=5&frame_max=8192&channel_max=16&connection_timeout=2500"
        "&connection_name=worker%201&verify=verify_none&cacertfile=%2Fca.pem"
        "&server_name_indication=broker&auth_mechanism=PLAIN");
    REQUIRE_MESSAGE(!r.error, r.detail);
    CHECK(r.config.heartbeat == 5);
    CHECK(r.config.frame_max == 8192);
    CHECK(r.config.channel_max == 16);
    CHECK(r.config.connection_timeout == std::chrono::milliseconds(2500));
    CHECK(r.config.connection_name == "worker 1");
    CHECK_FALSE(r.config.tls_options.verify_peer);
    CHECK(r.config.tls_options.ca_file == "/ca.pem");
    CHECK(r.config.tls_options.server_name == "broker");
    CHECK(parse_url("amqp://h?heartbeat=0").config.heartbeat == 0);
}

TEST_CASE("settings not in the URL come from the base config") {
    connection_config base;
    base.reconnect = false;
    base.heartbeat = 7;
    auto r = parse_url("amqp://h", base);
    REQUIRE_FALSE(r.error);
    CHECK_FALSE(r.config.reconnect);
    CHECK(r.config.heartbeat == 7);
}

TEST_CASE("errors name what was wrong") {
    struct bad {
        const char* url;
        const char* says;
    };
    for (const bad& b : {
             bad{"http://h", "scheme"},
             bad{"amqp://h:99999", "port '99999'"},
             bad{"amqp://h:x1", "port 'x1'"},
             bad{"amqp://h:", "empty port"},
             bad{"amqp://h/a/b", "unescaped '/'"},
             bad{"amqp://h/%zz", "vhost has a bad percent-escape"},
             bad{"amqp://us%4:p@h", "user name"},
             bad{"amqp://[::1", "closing ']'"},
             bad{"amqp://h?hearbeat=5", "unknown option 'hearbeat'"},
             bad{"amqp://h?heartbeat=abc", "heartbeat='abc'"},
             bad{"amqp://h?heartbeat=70000", "heartbeat='70000'"},
             bad{"amqp://h?frame_max=100", "frame_max='100'"},
             bad{"amqp://h?verify=maybe", "verify"},
             bad{"amqp://h?auth_mechanism=EXTERNAL", "PLAIN"},
             bad{"amqp://h?heartbeat", "no '=value'"},
             bad{"amqp://h#frag", "fragment"},
         }) {
        CAPTURE(b.url);
        auto r = parse_url(b.url);
        CHECK(r.error == errc::invalid_url);
        CHECK_MESSAGE(r.detail.find(b.says) != std::string::npos, r.detail);
    }
}

TEST_CASE("the redacted URL hides the password and round-trips the rest") {
    auto r = parse_url("amqp://us%20er:secret@h:1234/v%2Fx");
    REQUIRE_FALSE(r.error);
    const std::string u = to_redacted_url(r.config);
    CHECK(u == "amqp://us%20er:***@h:1234/v%2Fx");
    CHECK(u.find("secret") == std::string::npos);
    auto back = parse_url(u);
    REQUIRE_FALSE(back.error);
    CHECK(back.config.vhost == "v/x");
    CHECK(back.config.username == "us er");
}

TEST_CASE("percent_decode: escapes in either case, '+' kept, bad escapes refused") {
    CHECK(percent_decode("") == "");
    CHECK(percent_decode("a%20b%2Fc%2fd") == "a b/c/d");
    CHECK(percent_decode("a+b") == "a+b");
    CHECK(percent_decode("%00") == std::string(1, '\0'));
    CHECK(percent_decode("%FF%ff") == "\xFF\xFF");
    CHECK(percent_decode("100%25") == "100%");
    CHECK(percent_decode("%252F") == "%2F");  // decoded once only
    for (const std::string_view bad : {"%", "%2", "a%", "%zz", "%2g", "%g2", "% 20", "%-1"}) {
        CAPTURE(bad);
        CHECK_FALSE(percent_decode(bad));
    }
}
