// Several AMQP URLs, the nodes of one cluster, into one config: the first
// URL's address, then the others' as failover; they must agree on the rest.
#include "tarry/amqp/error.hpp"
#include "tarry/amqp/url.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <ostream>  // doctest prints std::error_code with it
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace tarry::amqp;

namespace {

url_parse_result parse(std::vector<std::string_view> urls, const connection_config& base = {}) {
    return parse_urls(urls, base);
}

}  // namespace

TEST_CASE("agreeing URLs: the first address, then the others as failover, in order") {
    connection_config base;
    base.reconnect = false;
    base.failover = {{"stale", 1}};  // replaced
    auto r = parse({"amqps://u:p@a:5001/v?heartbeat=5", "amqps://u:p@b/v?heartbeat=5",
                    "amqps://u:p@[::1]:5003/v?heartbeat=5"},
                   base);
    REQUIRE_MESSAGE(!r.error, r.detail);
    CHECK(r.config.host == "a");
    CHECK(r.config.port == 5001);
    REQUIRE(r.config.failover.size() == 2);
    CHECK(r.config.failover[0].host == "b");
    CHECK(r.config.failover[0].port == 0);
    CHECK(r.config.failover[1].host == "::1");
    CHECK(r.config.failover[1].port == 5003);
    CHECK(r.config.tls);
    CHECK(r.config.username == "u");
    CHECK(r.config.password == "p");
    CHECK(r.config.vhost == "v");
    CHECK(r.config.heartbeat == 5);
    CHECK_FALSE(r.config.reconnect);  // from the base

    const auto all = r.config.addresses();
    REQUIRE(all.size() == 3);
    CHECK(all[1].port == 5671);
}

TEST_CASE("one URL: as parse_url, no failover") {
    connection_config base;
    base.failover = {{"stale", 1}};
    auto r = parse({"amqp://h:1234/x"}, base);
    REQUIRE_FALSE(r.error);
    CHECK(r.config.host == "h");
    CHECK(r.config.port == 1234);
    CHECK(r.config.vhost == "x");
    CHECK(r.config.failover.empty());
}

TEST_CASE("an empty list is an error") {
    auto r = parse({});
    CHECK(r.error == errc::invalid_url);
    CHECK(r.detail == "no URL given");
}

TEST_CASE("a bad URL in the list: its number and what is wrong with it") {
    auto r = parse({"amqp://a", "amqp://b:99999", "amqp://c"});
    CHECK(r.error == errc::invalid_url);
    CHECK(r.detail == "URL 2 of 3: port '99999' is not a number in 1..65535");
    auto first = parse({"http://a", "amqp://b"});
    CHECK(first.error == errc::invalid_url);
    CHECK(first.detail == "URL 1 of 2: scheme must be amqp:// or amqps://");
}

TEST_CASE("disagreeing URLs: which URL differs, and in what") {
    struct bad {
        const char* second;
        const char* says;
    };
    for (const bad& b : {
             bad{"amqps://u:p@b/v", "URL 2 of 2 differs from URL 1 in its scheme (amqps, URL 1 has amqp)"},
             bad{"amqp://w:p@b/v", "URL 2 of 2 differs from URL 1 in its user name ('w', URL 1 has 'u')"},
             bad{"amqp://u@b/v", "URL 2 of 2 differs from URL 1 in its password"},
             bad{"amqp://u:q@b/v", "URL 2 of 2 differs from URL 1 in its password"},
             bad{"amqp://u:p@b/", "URL 2 of 2 differs from URL 1 in its vhost ('/', URL 1 has 'v')"},
             bad{"amqp://u:p@b/v?heartbeat=5",
                 "URL 2 of 2 differs from URL 1 in option heartbeat ('5', URL 1 has '60')"},
             bad{"amqp://u:p@b/v?connection_name=x",
                 "URL 2 of 2 differs from URL 1 in option connection_name ('x', URL 1 has '')"},
             bad{"amqp://u:p@b/v?verify=verify_none",
                 "URL 2 of 2 differs from URL 1 in option verify ('verify_none', URL 1 has "
                 "'verify_peer')"},
         }) {
        CAPTURE(b.second);
        auto r = parse({"amqp://u:p@a/v", b.second});
        CHECK(r.error == errc::invalid_url);
        CHECK(r.detail == b.says);
        CHECK(r.detail.find(":q@") == std::string::npos);
    }
    SUBCASE("the password's text is never shown") {
        auto r = parse({"amqp://u:secret1@a/v", "amqp://u:secret2@b/v", "amqp://u:secret1@c/v"});
        CHECK(r.detail == "URL 2 of 3 differs from URL 1 in its password");
        CHECK(r.detail.find("secret") == std::string::npos);
    }
    SUBCASE("a later URL is named") {
        auto r = parse({"amqp://a/v", "amqp://b/v", "amqp://c/w"});
        CHECK(r.detail == "URL 3 of 3 differs from URL 1 in its vhost ('w', URL 1 has 'v')");
    }
}

TEST_CASE("robustness: any input parses or gives an error, never a crash") {
    // Valid lists mutated byte by byte, and random bytes, in lists of 0..4.
    const std::array<std::string, 4> seeds{"amqp://u:p@a:5672/v?heartbeat=5",
                                           "amqps://u:p@[::1]:5671/%2F?verify=verify_none",
                                           "amqp://b", "amqp://u:p@c/v#x"};
    std::mt19937 rng(12345);
    const auto pick = [&rng](std::size_t n) {
        return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
    };
    for (int round = 0; round < 4000; ++round) {
        std::vector<std::string> urls(pick(5));
        for (auto& u : urls) {
            if (pick(4) == 0) {
                u.resize(pick(40));
                for (auto& c : u) c = static_cast<char>(pick(256));
            } else {
                u = seeds[pick(seeds.size())];
                for (std::size_t m = pick(4); m > 0; --m) {
                    const std::size_t at = pick(u.size() + 1);
                    switch (pick(3)) {
                    case 0: u.insert(at, 1, "%[]:@/?&=#,\0"[pick(12)]); break;
                    case 1: if (at < u.size()) u.erase(at, 1); break;
                    default: if (at < u.size()) u[at] = static_cast<char>(pick(256)); break;
                    }
                }
            }
        }
        const std::vector<std::string_view> views(urls.begin(), urls.end());
        const auto r = parse_urls(views);
        if (r.error) {
            CHECK(r.error == errc::invalid_url);
            CHECK_FALSE(r.detail.empty());
        } else {
            CHECK(r.config.addresses().size() == urls.size());
        }
    }
}
