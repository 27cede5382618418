// route_of: every route, HEAD as GET, the query, the publish path's
// percent-decoded queue, 405 with Allow, and targets that must not be
// normalised into a route. check_bearer: every outcome.
#include "http_routes.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using namespace tarry::http_detail;

namespace {

route_kind kind_of(std::string_view method, std::string_view target, std::string_view queue = "jobs") {
    return route_of(method, target, queue).kind;
}

}  // namespace

TEST_CASE("route_of: every GET route, HEAD as GET") {
    const std::vector<std::pair<std::string_view, route_kind>> routes = {
        {"/metrics", route_kind::metrics}, {"/healthz", route_kind::healthz}, {"/readyz", route_kind::readyz},
        {"/jobs", route_kind::jobs},       {"/", route_kind::status_page},
    };
    for (const auto& [target, kind] : routes) {
        CAPTURE(target);
        CHECK(kind_of("GET", target) == kind);
        CHECK(kind_of("HEAD", target) == kind);
        CHECK(route_of("GET", target, "jobs").query.empty());
    }
}

TEST_CASE("route_of: the query is kept, undecoded") {
    const route r = route_of("GET", "/jobs?limit=5&after=a%2Fb", "jobs");
    CHECK(r.kind == route_kind::jobs);
    CHECK(r.query == "limit=5&after=a%2Fb");
    CHECK(route_of("GET", "/jobs?", "jobs").kind == route_kind::jobs);
    CHECK(route_of("GET", "/jobs?", "jobs").query.empty());
    CHECK(route_of("GET", "/metrics?x=1", "jobs").kind == route_kind::metrics);
    CHECK(route_of("GET", "/?a=b?c", "jobs").query == "a=b?c");
}

TEST_CASE("route_of: publish to the endpoint's own queue, percent-decoded") {
    CHECK(kind_of("POST", "/v1/queues/jobs/messages") == route_kind::publish);
    CHECK(kind_of("POST", "/v1/queues/%6aobs/messages") == route_kind::publish);
    CHECK(kind_of("POST", "/v1/queues/%6Aobs/messages") == route_kind::publish);
    CHECK(kind_of("POST", "/v1/queues/a%20b%2Fc/messages", "a b/c") == route_kind::publish);
    CHECK(kind_of("POST", "/v1/queues/a%20b%2fc/messages", "a b/c") == route_kind::publish);
    CHECK(kind_of("POST", "/v1/queues/a+b/messages", "a+b") == route_kind::publish);
    const route r = route_of("POST", "/v1/queues/jobs/messages?x=1", "jobs");
    CHECK(r.kind == route_kind::publish);
    CHECK(r.query == "x=1");
}

TEST_CASE("route_of: another queue, or a queue that cannot be read, is not found") {
    CHECK(kind_of("POST", "/v1/queues/other/messages") == route_kind::not_found);
    CHECK(kind_of("GET", "/v1/queues/other/messages") == route_kind::not_found);
    CHECK(kind_of("POST", "/v1/queues/jobs2/messages") == route_kind::not_found);
    CHECK(kind_of("POST", "/v1/queues/job/messages") == route_kind::not_found);
    CHECK(kind_of("POST", "/v1/queues/JOBS/messages") == route_kind::not_found);
    CHECK(kind_of("POST", "/v1/queues/jo%zzs/messages") == route_kind::not_found);
    CHECK(kind_of("POST", "/v1/queues/jobs%/messages") == route_kind::not_found);
    CHECK(kind_of("POST", "/v1/queues/jobs%2/messages") == route_kind::not_found);
    CHECK(kind_of("POST", "/v1/queues//messages", "") == route_kind::not_found);
    CHECK(kind_of("POST", "/v1/queues/messages") == route_kind::not_found);
    // A raw '/' splits the path: only an encoded one is part of the name.
    CHECK(kind_of("POST", "/v1/queues/a b/c/messages", "a b/c") == route_kind::not_found);
    CHECK(kind_of("POST", "/v1/queues/a/b/messages", "a/b") == route_kind::not_found);
}

TEST_CASE("route_of: a known path with another method is 405 with Allow") {
    for (const std::string_view target : {"/metrics", "/healthz", "/readyz", "/jobs", "/", "/jobs?limit=1"}) {
        for (const std::string_view method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get", "head"}) {
            CAPTURE(target);
            CAPTURE(method);
            const route r = route_of(method, target, "jobs");
            CHECK(r.kind == route_kind::method_not_allowed);
            CHECK(std::string_view(r.allow) == "GET, HEAD");
        }
    }
    for (const std::string_view method : {"GET", "HEAD", "PUT", "DELETE", "post"}) {
        CAPTURE(method);
        const route r = route_of(method, "/v1/queues/jobs/messages", "jobs");
        CHECK(r.kind == route_kind::method_not_allowed);
        CHECK(std::string_view(r.allow) == "POST");
    }
    CHECK(std::string_view(route_of("GET", "/nothing", "jobs").allow).empty());
    CHECK(std::string_view(route_of("GET", "/metrics", "jobs").allow).empty());
}

TEST_CASE("route_of: targets are matched exactly, never normalised") {
    const std::vector<std::string_view> targets = {
         "/metrics/", "//metrics", "/./metrics", "/jobs/../metrics", "/x/../metrics", "/%6detrics", "/METRICS",
          "/metrics#x", "http://localhost/metrics", "https://localhost:8080/jobs", "*", "", "metrics", "/jobs/",
          "/v1/queues/jobs/messages/", "/v1/queues/jobs/../jobs/messages", "/v1/queues/./jobs/messages",
          "/v1/queues/jobs/messages/../../../metrics", "/../metrics", "/v1/queues/jobs/messages%2F",
          "/V1/queues/jobs/messages", std::string_view("/metrics\0", 9)};
    for (const std::string_view target : targets) {
        CAPTURE(target);
        CHECK(kind_of("GET", target) == route_kind::not_found);
        CHECK(kind_of("POST", target) == route_kind::not_found);
    }
}

TEST_CASE("route_of: a queue named as a dot segment is matched only as that name") {
    CHECK(kind_of("POST", "/v1/queues/../messages", "..") == route_kind::publish);
    CHECK(kind_of("POST", "/v1/queues/%2e%2e/messages", "..") == route_kind::publish);
    CHECK(kind_of("POST", "/v1/queues/../messages", "jobs") == route_kind::not_found);
}

TEST_CASE("check_bearer: the right token, in any case of the scheme") {
    const std::optional<std::string> token = "s3cret-token";
    CHECK(check_bearer("Bearer s3cret-token", token) == auth_result::ok);
    CHECK(check_bearer("bearer s3cret-token", token) == auth_result::ok);
    CHECK(check_bearer("BEARER s3cret-token", token) == auth_result::ok);
    CHECK(check_bearer("bEaReR s3cret-token", token) == auth_result::ok);
    CHECK(check_bearer("Bearer  s3cret-token", token) == auth_result::ok);  // 1*SP
}

TEST_CASE("check_bearer: another token is wrong") {
    const std::optional<std::string> token = "s3cret-token";
    for (const std::string_view given : {"s3cret-toke", "s3cret-token2", "S3cret-token", "x", "s3cret-tokens3cret-token",
                                         "t3cret-token", "s3cret-tokem"}) {
        CAPTURE(given);
        CHECK(check_bearer("Bearer " + std::string(given), token) == auth_result::wrong);
    }
}

TEST_CASE("check_bearer: no header, or not one bearer token, is missing") {
    const std::optional<std::string> token = "s3cret-token";
    CHECK(check_bearer(std::nullopt, token) == auth_result::missing);
    for (const std::string_view header :
         {"", "s3cret-token", "Basic czNjcmV0LXRva2Vu", "Bearer", "Bearer ", "Bearer   ", "Bearers3cret-token",
          "Bearer s3cret-token extra", "Bearer s3cret-token ", "Bearer\ts3cret-token", "Bearer s3cret\t-token",
          " Bearer s3cret-token", "Token s3cret-token", "Bearer: s3cret-token"}) {
        CAPTURE(header);
        CHECK(check_bearer(header, token) == auth_result::missing);
    }
}

TEST_CASE("check_bearer: no token configured refuses everything") {
    CHECK(check_bearer("Bearer anything", std::nullopt) == auth_result::not_configured);
    CHECK(check_bearer(std::nullopt, std::nullopt) == auth_result::not_configured);
    CHECK(check_bearer("Bearer ", std::string()) == auth_result::not_configured);
    CHECK(check_bearer("Bearer x", std::string()) == auth_result::not_configured);
}

TEST_CASE("route_of: DELETE and PUT of one job of the endpoint's queue, its id percent-decoded") {
    route r = route_of("DELETE", "/v1/queues/jobs/messages/order-42", "jobs");
    CHECK(r.kind == route_kind::cancel);
    CHECK(r.job_id == "order-42");
    r = route_of("PUT", "/v1/queues/jobs/messages/a%2Fb%20c", "jobs");
    CHECK(r.kind == route_kind::reschedule);
    CHECK(r.job_id == "a/b c");
    CHECK(route_of("DELETE", "/v1/queues/%6aobs/messages/x", "jobs").kind == route_kind::cancel);
    CHECK(route_of("DELETE", "/v1/queues/jobs/messages/" + std::string(255, 'i'), "jobs").kind == route_kind::cancel);
    for (const std::string_view method : {"GET", "HEAD", "POST", "PATCH", "delete"}) {
        CAPTURE(method);
        r = route_of(method, "/v1/queues/jobs/messages/x", "jobs");
        CHECK(r.kind == route_kind::method_not_allowed);
        CHECK(std::string_view(r.allow) == "PUT, DELETE");
    }
}

TEST_CASE("route_of: a job path of another queue, or an id that cannot be one, is not found") {
    for (const std::string& target :
         {std::string("/v1/queues/other/messages/x"), std::string("/v1/queues/jobs/messages/"),
          std::string("/v1/queues/jobs/messages/a/b"), std::string("/v1/queues/jobs/messages/%zz"),
          std::string("/v1/queues/jobs/messages/" + std::string(256, 'i')),
          std::string("/v1/queues/jobs/messages/%" + std::string("2")), std::string("/v1/queues/jobs/messagesx/x"),
          std::string("/v1/queues/jobs/message/x"), std::string("/v1/queues/jobs/x")}) {
        CAPTURE(target);
        CHECK(kind_of("DELETE", target) == route_kind::not_found);
        CHECK(kind_of("PUT", target) == route_kind::not_found);
    }
}
