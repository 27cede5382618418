// Fuzz target: the HTTP endpoint's request path up to the broker. The input
// is the bytes of a request as they come off a socket: Beast's
// request_parser reads them with the endpoint's header and body limits,
// and what parsed goes through route_of, check_bearer, parse_jobs_query and
// parse_gateway_request (lib/http; the endpoint serves the queue "jobs",
// with the token "s3cret", max_messages 100 and max_delay 1 h). Every
// query and every body is read whatever the route, so that the parsers are
// reached by any input that parses as HTTP.
//
// Properties, each one the headers promise:
// - nothing throws and nothing recurses without bound (deep JSON nesting is
//   a 400, not a stack overflow);
// - a route is publish only for POST to /v1/queues/<q>/messages, and a
//   target that publishes to "jobs" is not found for other queue names; 405
//   only with an Allow value, others without; the query is what follows the
//   first '?', undecoded;
// - HEAD routes as GET does;
// - a bearer check passes only for "<Bearer in any case> s3cret", and
//   nothing passes without a token configured;
// - a /jobs query read has a limit of 1..1000; a refusal is a 400 with a
//   message;
// - a gateway request read has 1..100 messages, each delay 0..1 h, each ttl
//   at least 1 ms, each id 1..255 bytes, header names 1..255 bytes and none
//   reserved, a JSON body that is JSON; a refusal is a 400 with a message;
// - error_json and gateway_response_of always write JSON (valid UTF-8 too).
#include "fuzz_support.hpp"

#include "gateway_json.hpp"
#include "http_error.hpp"
#include "http_routes.hpp"
#include "jobs_json.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace {

using namespace tarry_fuzz;
using namespace std::chrono_literals;
namespace http = boost::beast::http;
namespace h = tarry::http_detail;

constexpr std::string_view queue = "jobs";
constexpr std::string_view token = "s3cret";
constexpr std::size_t max_header_bytes = 8 * 1024;
constexpr std::size_t max_body_bytes = 1024 * 1024;

// TARRY_FUZZ_TRACE=1 prints what each input came to (to read a crash, or
// to see which seeds reach which parser).
void trace(const std::string& line) {
    static const bool on = std::getenv("TARRY_FUZZ_TRACE") != nullptr;
    if (on) std::fprintf(stderr, "  %s\n", line.c_str());
}

bool is_json(const std::string& text) {
    boost::system::error_code ec;
    boost::json::parse(text, ec);
    return !ec;
}

void check_error(const h::http_error& e, const char* what) {
    check(e.status == 400, what, "status " + std::to_string(e.status));
    check(!e.message.empty(), what, "an empty message");
    check(is_json(h::error_json(e)), "error_json wrote other than JSON", e.message);
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

void check_route(std::string_view method, std::string_view target) {
    const h::route r = h::route_of(method, target, queue);
    trace("route " + std::to_string(static_cast<int>(r.kind)) + " of " + std::string(method) + " " +
          std::string(target.substr(0, 80)));
    const std::size_t question = target.find('?');
    const std::string_view path = target.substr(0, question);
    check(r.query == (question == std::string_view::npos ? std::string_view{} : target.substr(question + 1)),
          "route query is not what follows the first '?'");
    check((r.kind == h::route_kind::method_not_allowed) == (std::string_view(r.allow) != ""),
          "Allow given other than with 405");
    if (r.kind == h::route_kind::publish) {
        constexpr std::string_view prefix = "/v1/queues/", suffix = "/messages";
        check(method == "POST", "publish by another method");
        check(path.starts_with(prefix) && path.ends_with(suffix) && path.size() > prefix.size() + suffix.size(),
              "publish on another path", std::string(path));
        // One queue name at most: the same target never publishes to a near miss.
        for (const std::string_view other : {"jobs2", "job", "JOBS", "", "jobs/", "%6aobs"})
            check(h::route_of(method, target, other).kind == h::route_kind::not_found,
                  "one target publishes to two queues", std::string(path) + " and " + std::string(other));
    }
    if (method == "HEAD")
        check(h::route_of("GET", target, queue).kind == r.kind, "HEAD routes other than GET");
}

void check_auth(const http::request<http::string_body>& req) {
    const auto field = req.find(http::field::authorization);
    const std::optional<std::string_view> header =
        field == req.end() ? std::nullopt : std::optional<std::string_view>(field->value());
    const std::optional<std::string> configured = std::string(token);
    const auto result = h::check_bearer(header, configured);
    trace("bearer check " + std::to_string(static_cast<int>(result)));
    if (result == h::auth_result::ok) {
        const std::string_view v = *header;
        const std::size_t space = v.find(' ');
        check(space != std::string_view::npos && equal_ignoring_case(v.substr(0, space), "Bearer") &&
                  v.substr(v.find_first_not_of(' ', space)) == token,
              "a bearer check passed for another header", std::string(v));
    }
    check(h::check_bearer(header, std::nullopt) == h::auth_result::not_configured,
          "a bearer check without a token did not refuse");
    check(h::check_bearer("Bearer " + std::string(token), configured) == h::auth_result::ok,
          "the right token was refused");
}

void check_query(std::string_view query) {
    const auto q = h::parse_jobs_query(query);
    if (const auto* e = std::get_if<h::http_error>(&q)) {
        trace("query refused: " + e->message);
        check_error(*e, "a /jobs query refused other than as a 400 with a message");
        return;
    }
    const auto& read = std::get<h::jobs_query>(q);
    check(read.limit >= 1 && read.limit <= 1000, "a /jobs limit outside 1..1000");
}

bool reserved(std::string name) {
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return name == "perform_job_at" || name == "x-delay" || name.starts_with("x-tarry-");
}

void check_gateway(std::string_view body) {
    h::gateway_limits limits;
    limits.max_messages = 100;
    limits.max_delay = 3'600'000ms;
    const auto r = h::parse_gateway_request(body, limits);
    if (const auto* e = std::get_if<h::http_error>(&r)) {
        trace("gateway request refused: " + e->message.substr(0, 120));
        check_error(*e, "a gateway request refused other than as a 400 with a message");
        return;
    }
    const auto& messages = std::get<std::vector<h::gateway_message>>(r);
    trace("gateway request of " + std::to_string(messages.size()) + " messages");
    check(!messages.empty() && messages.size() <= limits.max_messages, "a gateway request of 0 or too many messages");
    std::vector<h::publish_result> results;
    for (const auto& m : messages) {
        check(!m.delay || (*m.delay >= 0us && *m.delay <= *limits.max_delay), "a delay outside 0..max_delay");
        check(!m.ttl || *m.ttl >= 1ms, "a ttl below 1 ms");
        check(!m.id || (!m.id->empty() && m.id->size() <= 255), "an id outside 1..255 bytes");
        check(!m.body_is_json || is_json(m.body), "a JSON body that is not JSON", m.body);
        for (const auto& e : m.headers.entries()) {
            check(!e.name.empty() && e.name.size() <= 255, "a header name outside 1..255 bytes");
            check(!reserved(e.name), "a reserved header accepted", e.name);
        }
        results.push_back({m.id.value_or("generated"), {}, ""});
    }
    const auto all = h::gateway_response_of(results);
    check(all.status == 201 && is_json(all.body), "gateway_response_of: not 201 with JSON", all.body);
    results.back().error = std::make_error_code(std::errc::timed_out);
    const auto some = h::gateway_response_of(results);
    check(some.status == 207 && is_json(some.body), "gateway_response_of: not 207 with JSON", some.body);
}

void run(std::string_view bytes) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(max_header_bytes));
    parser.body_limit(max_body_bytes);
    parser.eager(true);
    boost::system::error_code ec;
    std::size_t at = 0;
    while (at < bytes.size() && !parser.is_done()) {
        const std::size_t used = parser.put(boost::asio::buffer(bytes.data() + at, bytes.size() - at), ec);
        if (ec == http::error::need_more) ec = {};
        if (ec || used == 0) break;
        at += used;
    }
    if (!ec && !parser.is_done() && parser.got_some()) parser.put_eof(ec);
    if (ec || !parser.is_done()) {
        trace("not a whole request: " + (ec ? ec.message() : std::string("more bytes needed")));
        return;
    }

    const auto& req = parser.get();
    const std::string_view method = req.method_string();
    const std::string_view target = req.target();
    check_route(method, target);
    check_auth(req);
    const std::size_t question = target.find('?');
    check_query(question == std::string_view::npos ? std::string_view{} : target.substr(question + 1));
    check_gateway(req.body());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        run(std::string_view(reinterpret_cast<const char*>(data), size));
    } catch (const std::exception& e) {
        fail("the request path threw", e.what());
    } catch (...) {
        fail("the request path threw");
    }
    return 0;
}
