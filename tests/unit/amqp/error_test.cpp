// Error categories, broker replies, the reconnect predicate, diagnostics and
// tarry::error.
#include "tarry/amqp/error.hpp"

#include <doctest/doctest.h>

#include <ostream>  // doctest prints std::error_code with it
#include <type_traits>

using namespace tarry::amqp;

TEST_CASE("our codes and broker codes live in separate categories") {
    std::error_code ours = errc::heartbeat_timeout;
    std::error_code theirs = reply_code::not_found;
    CHECK(std::string(ours.category().name()) == "tarry.amqp");
    CHECK(std::string(theirs.category().name()) == "tarry.amqp.broker");
    CHECK(theirs.value() == 404);
    CHECK(theirs.message() == "NOT_FOUND (404)");
    CHECK(broker_error(404) == reply_code::not_found);
    CHECK(broker_error(599).message() == "broker reply code (599)");
    CHECK(ours.message().find("heartbeat") != std::string::npos);
    for (int e = 1; e <= static_cast<int>(errc::header_too_large); ++e) {
        CHECK(make_error_code(static_cast<errc>(e)).message().find("unknown") == std::string::npos);
    }
}

TEST_CASE("broker_reply reads like RabbitMQ's log line") {
    broker_reply r{404, "NOT_FOUND - no queue 'q' in vhost '/'", 50, 10};
    CHECK(r.to_string() == "404 NOT_FOUND - no queue 'q' in vhost '/' (in queue.declare)");
    broker_reply bare{406, "", 0, 0};
    CHECK(bare.to_string() == "406 PRECONDITION_FAILED");
    broker_reply plain{320, "shutdown", 0, 0};
    CHECK(plain.to_string() == "320 CONNECTION_FORCED - shutdown");
}

TEST_CASE("requires_reconnect separates connection errors from channel errors") {
    CHECK_FALSE(requires_reconnect({}));
    CHECK(requires_reconnect(errc::connection_lost));
    CHECK(requires_reconnect(errc::heartbeat_timeout));
    CHECK(requires_reconnect(errc::authentication_failed));
    CHECK(requires_reconnect(reply_code::connection_forced));
    CHECK(requires_reconnect(reply_code::internal_error));
    CHECK(requires_reconnect(std::make_error_code(std::errc::connection_reset)));
    CHECK_FALSE(requires_reconnect(reply_code::not_found));
    CHECK_FALSE(requires_reconnect(reply_code::precondition_failed));
    CHECK_FALSE(requires_reconnect(reply_code::access_refused));
    CHECK_FALSE(requires_reconnect(errc::channel_closed));
    CHECK_FALSE(requires_reconnect(errc::publish_nacked));
    CHECK_FALSE(requires_reconnect(errc::connection_closed));
    CHECK_FALSE(requires_reconnect(errc::operation_cancelled));
    CHECK_FALSE(requires_reconnect(errc::header_too_large));
    CHECK(is_hard_reply_code(504));
    CHECK_FALSE(is_hard_reply_code(312));
}

TEST_CASE("diagnostics::from: a code and a message, no broker reply") {
    const auto d = diagnostics::from(errc::channel_closed, "basic.qos: channel 1 is closed");
    CHECK(d.code == errc::channel_closed);
    CHECK(d.message == "basic.qos: channel 1 is closed");
    CHECK_FALSE(d.reply);
    CHECK(diagnostics::from(errc::not_connected).message.empty());
}

TEST_CASE("tarry::error: a system_error with the diagnostics' code, context + message, the reply kept") {
    const diagnostics why{reply_code::not_found,
                          "queue.declare: the broker closed channel 1: 404 NOT_FOUND - no queue 'jobs'",
                          broker_reply{404, "NOT_FOUND - no queue 'jobs'", 50, 10}};
    const tarry::error e("tarry consumer: cannot subscribe to 'jobs'", why);
    CHECK(e.code() == reply_code::not_found);
    CHECK(std::string(e.what()) ==
          "tarry consumer: cannot subscribe to 'jobs': queue.declare: the broker closed channel 1: "
          "404 NOT_FOUND - no queue 'jobs'");
    CHECK(e.diagnostics().code == why.code);
    CHECK(e.diagnostics().message == why.message);
    REQUIRE(e.diagnostics().reply);
    CHECK(*e.diagnostics().reply == *why.reply);

    SUBCASE("without a context, what() is the message alone") {
        CHECK(std::string(tarry::error(why).what()) == why.message);
    }
    SUBCASE("without a message, what() falls back on the code's") {
        const tarry::error bare("connect", diagnostics::from(errc::authentication_failed));
        CHECK(std::string(bare.what()) == "connect: authentication failed");
    }
    SUBCASE("caught as std::system_error, compared with tarry's codes") {
        try {
            throw tarry::error("connect", diagnostics::from(errc::authentication_failed, "refused"));
        } catch (const std::system_error& caught) {
            CHECK(caught.code() == errc::authentication_failed);
            CHECK(caught.code() != reply_code::not_found);
            CHECK(std::string(caught.what()) == "connect: refused");
        }
    }
    SUBCASE("copies share the text and never throw") {
        static_assert(std::is_nothrow_copy_constructible_v<tarry::error>);
        static_assert(std::is_nothrow_copy_assignable_v<tarry::error>);
        const tarry::error copy = e;
        CHECK(copy.what() == e.what());  // the same text, not a copy of it
        CHECK(copy.code() == e.code());
        REQUIRE(copy.diagnostics().reply);
        CHECK(copy.diagnostics().reply->code == 404);
    }
}
