// gateway_response_of: 201 with every id when every message was confirmed;
// otherwise 207 with null in place of each id not sent, and an error per
// message not sent, by index.
#include "gateway_json.hpp"

#include "tarry/amqp/error.hpp"
#include "tarry/publisher/publish_error.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <doctest/doctest.h>

#include <vector>

using namespace tarry::http_detail;

TEST_CASE("gateway_response_of: 201 when every message was confirmed") {
    const std::vector<publish_result> results = {{"a", {}, ""}, {"b", {}, ""}};
    const gateway_response r = gateway_response_of(results);
    CHECK(r.status == 201);
    CHECK(r.body == R"({"ids":["a","b"]})");
}

TEST_CASE("gateway_response_of: 207 naming each message not sent") {
    const std::vector<publish_result> results = {
        {"a", {}, ""},
        {"b", std::make_error_code(std::errc::timed_out), "not confirmed within 10000 ms"},
        {"c", {}, ""},
        {"d", std::make_error_code(std::errc::connection_reset), ""},
    };
    const gateway_response r = gateway_response_of(results);
    CHECK(r.status == 207);
    CHECK(r.body == R"({"ids":["a",null,"c",null],"errors":[{"index":1,"error":"not confirmed within 10000 ms"},)"
                    R"({"index":3,"error":")" + std::make_error_code(std::errc::connection_reset).message() + R"("}]})");
}

TEST_CASE("gateway_response_of: 207 when none was sent") {
    const std::vector<publish_result> results = {{"a", std::make_error_code(std::errc::io_error), "nacked"}};
    const gateway_response r = gateway_response_of(results);
    CHECK(r.status == 207);
    CHECK(r.body == R"({"ids":[null],"errors":[{"index":0,"error":"nacked"}]})");
}

TEST_CASE("gateway_response_of: ids and errors are escaped, always JSON") {
    const std::vector<publish_result> results = {
        {"q\"\xff", {}, ""}, {"x", std::make_error_code(std::errc::io_error), "broker said \"no\"\n\xc3"}};
    const boost::json::value v = boost::json::parse(gateway_response_of(results).body);
    CHECK(v.at("ids").at(0).as_string() == "q\"\xEF\xBF\xBD");
    CHECK(v.at("errors").at(0).at("error").as_string() == "broker said \"no\"\n\xEF\xBF\xBD");
}

TEST_CASE("command_response_of: 200 with the id; 504, 400 and 502 with the reason") {
    gateway_response r = command_response_of({"job-1", {}, ""});
    CHECK(r.status == 200);
    CHECK(r.body == R"({"id":"job-1"})");
    r = command_response_of({"job-1", std::make_error_code(std::errc::timed_out), "not confirmed within 10000 ms"});
    CHECK(r.status == 504);
    CHECK(r.body == R"({"error":"not confirmed within 10000 ms"})");
    r = command_response_of({"job-1", tarry::amqp::make_error_code(tarry::amqp::errc::invalid_argument), "the job id is empty"});
    CHECK(r.status == 400);
    r = command_response_of({"job-1", tarry::make_error_code(tarry::publish_errc::delay_exceeds_max), "above"});
    CHECK(r.status == 400);
    r = command_response_of({"job-1", tarry::make_error_code(tarry::publish_errc::unroutable), "no queue took it"});
    CHECK(r.status == 502);
    CHECK(r.body == R"({"error":"no queue took it"})");
    r = command_response_of({"job-1", tarry::amqp::make_error_code(tarry::amqp::errc::publish_nacked), ""});
    CHECK(r.status == 502);
}
