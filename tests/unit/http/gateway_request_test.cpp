// parse_gateway_request: a full message read into its parts, bodies of
// every JSON kind, delays and TTLs to the microsecond / millisecond
// (rounded up), header values, and every refusal with its message
// (malformed JSON, wrong types, negative / NaN-like / huge numbers, too many
// messages, reserved headers, oversized ids, deep nesting).
#include "gateway_json.hpp"
#include "http_test_support.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace tarry::http_detail;
using namespace std::chrono_literals;
using http_test::error_of;
using http_test::value_of;
namespace amqp = tarry::amqp;

namespace {

// One message `{"body":"x",<fields>}` at index `index` (those before it fine).
std::string request_with(std::string_view fields, std::size_t index = 0) {
    std::string r = R"({"messages":[)";
    for (std::size_t i = 0; i < index; ++i) r += R"({"body":"ok"},)";
    r += R"({"body":"x")";
    if (!fields.empty()) r += "," + std::string(fields);
    return r + "}]}";
}

gateway_message one(std::string_view fields, const gateway_limits& limits = {}) {
    const auto messages = value_of(parse_gateway_request(request_with(fields), limits));
    REQUIRE(messages.size() == 1);
    return messages[0];
}

std::string refusal(std::string_view body, const gateway_limits& limits = {}) {
    const http_error e = error_of(parse_gateway_request(body, limits));
    CHECK(e.status == 400);
    return e.message;
}

std::string many(std::size_t n) {
    std::string r = R"({"messages":[)";
    for (std::size_t i = 0; i < n; ++i) r += std::string(i ? "," : "") + R"({"body":"m"})";
    return r + "]}";
}

}  // namespace

TEST_CASE("parse_gateway_request: a message with every field") {
    const auto messages = value_of(parse_gateway_request(
        R"({"messages":[{"body":"send mail","delay":1.5,"ttl":60,"id":"m-1",)"
        R"("headers":{"tenant":"acme","n":42,"ratio":0.25,"urgent":true,"big":-9223372036854775808}},)"
        R"({"body":"second"}]})",
        {}));
    REQUIRE(messages.size() == 2);
    const gateway_message& m = messages[0];
    CHECK(m.body == "send mail");
    CHECK_FALSE(m.body_is_json);
    CHECK(m.delay == 1'500'000us);
    CHECK(m.ttl == 60'000ms);
    CHECK(m.id == "m-1");
    const auto& h = m.headers.entries();
    REQUIRE(h.size() == 5);
    CHECK(h[0].name == "tenant");
    CHECK(*h[0].value.get_if<std::string>() == "acme");
    CHECK(*h[1].value.get_if<std::int64_t>() == 42);
    CHECK(*h[2].value.get_if<double>() == 0.25);
    CHECK(*h[3].value.get_if<bool>() == true);
    CHECK(*h[4].value.get_if<std::int64_t>() == std::numeric_limits<std::int64_t>::min());
    const gateway_message& second = messages[1];
    CHECK(second.body == "second");
    CHECK_FALSE(second.delay);
    CHECK_FALSE(second.ttl);
    CHECK_FALSE(second.id);
    CHECK(second.headers.empty());
}

TEST_CASE("parse_gateway_request: a string body is its bytes; any other value is JSON") {
    CHECK(one("").body == "x");
    const auto unicode = value_of(parse_gateway_request(R"({"messages":[{"body":"caf\u00e9 \"q\""}]})", {}));
    CHECK(unicode[0].body == "caf\xC3\xA9 \"q\"");
    CHECK_FALSE(unicode[0].body_is_json);
    const std::vector<std::pair<std::string_view, std::string_view>> kinds = {
        {R"({"a":[1,2,{"b":null}]})", R"({"a":[1,2,{"b":null}]})"},
        {"[true,false]", "[true,false]"},
        {"42", "42"},
        {"null", "null"},
        {"{}", "{}"},
    };
    for (const auto& [given, serialized] : kinds) {
        CAPTURE(given);
        const auto m = value_of(
            parse_gateway_request(R"({"messages":[{"body":)" + std::string(given) + "}]}", {}));
        CHECK(m[0].body == serialized);
        CHECK(m[0].body_is_json);
    }
}

TEST_CASE("parse_gateway_request: delay in seconds, rounded up to the microsecond") {
    CHECK(one(R"("delay":0)").delay == 0us);
    CHECK(one(R"("delay":-0)").delay == 0us);
    CHECK(one(R"("delay":0.000001)").delay == 1us);
    CHECK(one(R"("delay":0.1)").delay == 100'000us);
    CHECK(one(R"("delay":1.1)").delay == 1'100'000us);
    CHECK(one(R"("delay":0.0000001)").delay == 1us);
    CHECK(one(R"("delay":0.0000015)").delay == 2us);
    CHECK(one(R"("delay":86400)").delay == 86'400'000'000us);
    CHECK(one(R"("delay":3155760000)").delay == 3'155'760'000'000'000us);  // 100 years
}

TEST_CASE("parse_gateway_request: max_delay: equal is accepted, above is a 400") {
    gateway_limits limits;
    limits.max_delay = 3'600'000ms;
    CHECK(one(R"("delay":3600)", limits).delay == 3'600'000'000us);
    CHECK(refusal(request_with(R"("delay":3600.000001)"), limits) ==
          "messages[0].delay: is above the queue's max_delay of 3600 s");
    limits.max_delay = 1500ms;
    CHECK(refusal(request_with(R"("delay":2)", 2), limits) ==
          "messages[2].delay: is above the queue's max_delay of 1.5 s");
}

TEST_CASE("parse_gateway_request: ttl in seconds, rounded up to the millisecond") {
    CHECK(one(R"("ttl":1)").ttl == 1000ms);
    CHECK(one(R"("ttl":0.001)").ttl == 1ms);
    CHECK(one(R"("ttl":0.0001)").ttl == 1ms);
    CHECK(one(R"("ttl":1e-300)").ttl == 1ms);
    CHECK(one(R"("ttl":1.0005)").ttl == 1001ms);
    CHECK(one(R"("ttl":0.3)").ttl == 300ms);
}

TEST_CASE("parse_gateway_request: every wrong delay, ttl, header, id names its message and field") {
    const std::string delay = "must be a number of seconds >= 0";
    const std::string ttl = "must be a number of seconds > 0";
    const std::string id = "must be a string of 1 to 255 bytes";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"("delay":-1)", "delay: " + delay},
        {R"("delay":-0.5)", "delay: " + delay},
        {R"("delay":-1e-9)", "delay: " + delay},
        {R"("delay":"10")", "delay: " + delay},
        {R"("delay":true)", "delay: " + delay},
        {R"("delay":null)", "delay: " + delay},
        {R"("delay":[1])", "delay: " + delay},
        {R"("delay":1e400)", "delay: " + delay},
        {R"("delay":-1e400)", "delay: " + delay},
        {R"("delay":1e300)", "delay: must be at most 100 years (3155760000 s)"},
        {R"("delay":18446744073709551615)", "delay: must be at most 100 years (3155760000 s)"},
        {R"("ttl":0)", "ttl: " + ttl},
        {R"("ttl":-0.0)", "ttl: " + ttl},
        {R"("ttl":-5)", "ttl: " + ttl},
        {R"("ttl":"60")", "ttl: " + ttl},
        {R"("ttl":1e400)", "ttl: " + ttl},
        {R"("ttl":1e12)", "ttl: must be at most 100 years (3155760000 s)"},
        {R"("headers":[])", "headers: must be an object"},
        {R"("headers":"a=b")", "headers: must be an object"},
        {R"("headers":{"a":{"b":1}})", "headers.a: must be a string, a number or a boolean"},
        {R"("headers":{"a":[1]})", "headers.a: must be a string, a number or a boolean"},
        {R"("headers":{"a":null})", "headers.a: must be a string, a number or a boolean"},
        {R"("headers":{"a":9223372036854775808})", "headers.a: must fit a signed 64-bit integer"},
        {R"("headers":{"a":1e400})", "headers.a: must be a finite number"},
        {R"("headers":{"":1})", "headers: a header name must be 1 to 255 bytes"},
        {R"("headers":{")" + std::string(256, 'h') + R"(":1})", "headers: a header name must be 1 to 255 bytes"},
        {R"("id":"")", "id: " + id},
        {R"("id":")" + std::string(256, 'i') + R"(")", "id: " + id},
        {R"("id":5)", "id: " + id},
        {R"("id":null)", "id: " + id},
        {R"("dely":1)", "dely: unknown field (body, delay, ttl, headers, id)"},
        {R"("Body":"y")", "Body: unknown field (body, delay, ttl, headers, id)"},
        {R"("body":1e400)", "body: holds a number too large for JSON (no infinity)"},
        {R"("body":{"a":[1,2,-1e999]})", "body: holds a number too large for JSON (no infinity)"},
    };
    for (const auto& [fields, message] : cases) {
        CAPTURE(fields);
        CHECK(refusal(request_with(fields, 3)) == "messages[3]." + message);
    }
}

TEST_CASE("parse_gateway_request: headers the library owns are refused, in any case") {
    for (const std::string_view name : {"perform_job_at", "x-delay", "X-Delay", "PERFORM_JOB_AT", "x-tarry-attempt",
                                        "x-tarry-reason", "X-Tarry-Anything", "x-tarry-"}) {
        CAPTURE(name);
        CHECK(refusal(request_with(R"("headers":{")" + std::string(name) + R"(":1})")) ==
              "messages[0].headers." + std::string(name) +
                  ": reserved: the gateway sets the schedule, and x-tarry-* are tarry's own");
    }
    // Near misses are ordinary headers.
    const auto m = one(R"("headers":{"x-delayed":1,"perform_job":2,"x-tarr":3,"my-x-tarry-id":4})");
    CHECK(m.headers.size() == 4);
}

TEST_CASE("parse_gateway_request: the longest id and header name pass") {
    const std::string longest(255, 'a');
    CHECK(one(R"("id":")" + longest + R"(")").id == longest);
    CHECK(one(R"("headers":{")" + longest + R"(":"v"})").headers.entries()[0].name == longest);
    const std::string two_byte_chars = std::string(127, 'a') + "\xC3\xA9";  // 129 bytes
    CHECK(one(R"("id":")" + two_byte_chars + R"(")").id == two_byte_chars);
}

TEST_CASE("parse_gateway_request: the document's shape") {
    CHECK(refusal(R"({"messages":[]})") == "messages: must hold at least 1 message");
    CHECK(refusal(R"({})") == "messages: missing");
    CHECK(refusal(R"({"messages":{}})") == "messages: must be an array");
    CHECK(refusal(R"({"messages":null})") == "messages: must be an array");
    CHECK(refusal(R"({"messages":[{"body":"a"}],"extra":1})") == "extra: unknown field (messages)");
    CHECK(refusal(R"({"messages":[1]})") == "messages[0]: must be an object");
    CHECK(refusal(R"({"messages":[{"body":"a"},"b"]})") == "messages[1]: must be an object");
    CHECK(refusal(R"({"messages":[{}]})") == "messages[0].body: missing");
    CHECK(refusal(R"({"messages":[{"delay":1}]})") == "messages[0].body: missing");
    for (const std::string_view top : {"[]", "1", "\"messages\"", "null", "true"}) {
        CAPTURE(top);
        CHECK(refusal(top) == R"(the body must be a JSON object: {"messages":[...]})");
    }
}

TEST_CASE("parse_gateway_request: at most max_messages") {
    CHECK(value_of(parse_gateway_request(many(100), {})).size() == 100);
    CHECK(refusal(many(101)) == "messages: at most 100 messages");
    gateway_limits limits;
    limits.max_messages = 2;
    CHECK(value_of(parse_gateway_request(many(2), limits)).size() == 2);
    CHECK(refusal(many(3), limits) == "messages: at most 2 messages");
}

TEST_CASE("parse_gateway_request: malformed JSON is a 400 saying where") {
    const std::vector<std::string_view> malformed = {
        " ", "{", R"({"messages":[{"body":"x"}]} x)", R"({"messages":[{"body":"x"},]})",
        R"({"messages":[{"body":'x'}]})", R"({"messages":[{"body":"x"}]}/* c */)", "{\"messages\":[{\"body\":\"\xff\"}]}",
        R"({"messages":[{"body":"\ud800"}]})", R"({"messages":[{"body":"\q"}]})", "\xEF\xBB\xBF{}", "NaN",
        R"({"messages":[{"body":NaN}]})", R"({"messages":[{"body":"x","delay":Infinity}]})", R"({"messages":[{"body":01}]})",
    };
    for (const std::string_view body : malformed) {
        CAPTURE(body);
        const std::string message = refusal(body);
        CHECK(message.starts_with("the body is not valid JSON: "));
        CHECK(message.find(" at byte ") != std::string::npos);
    }
    CHECK(refusal(R"({"messages":[{"body":"x"}]} x)").ends_with(" at byte 28"));
    CHECK(refusal("") == R"(the body is empty: expected {"messages":[...]})");
}

TEST_CASE("parse_gateway_request: deep nesting is refused, not recursed into") {
    std::string deep = R"({"messages":[{"body":)";
    deep += std::string(100'000, '[') + std::string(100'000, ']') + "}]}";
    CHECK(refusal(deep) == "the body is nested deeper than 64 levels");
    std::string ok = R"({"messages":[{"body":)";
    ok += std::string(60, '[') + std::string(60, ']') + "}]}";
    const auto m = value_of(parse_gateway_request(ok, {}));
    CHECK(m[0].body == std::string(60, '[') + std::string(60, ']'));
}

TEST_CASE("parse_gateway_request: duplicate keys: the last counts") {
    const auto m = one(R"("delay":1,"delay":2)");
    CHECK(m.delay == 2'000'000us);
}

TEST_CASE("parse_reschedule_request: the body is one message; its id is the path's") {
    gateway_limits limits;
    limits.max_delay = 60s;
    auto m = value_of(parse_reschedule_request(R"({"body":"again","delay":1.5,"ttl":30,"headers":{"k":"v"}})", "job-1",
                                               limits));
    CHECK(m.body == "again");
    CHECK(m.delay == std::chrono::microseconds(1'500'000));
    CHECK(m.ttl == 30s);
    CHECK(m.id == std::optional<std::string>("job-1"));
    REQUIRE(m.headers.find("k") != nullptr);
    m = value_of(parse_reschedule_request(R"({"body":"x","id":"job-1"})", "job-1", limits));
    CHECK(m.id == std::optional<std::string>("job-1"));
}

TEST_CASE("parse_reschedule_request: every refusal names the field") {
    gateway_limits limits;
    limits.max_delay = 60s;
    const auto refused = [&](std::string_view body) {
        const http_error e = error_of(parse_reschedule_request(body, "job-1", limits));
        CHECK(e.status == 400);
        return e.message;
    };
    CHECK(refused("") == R"(the body is empty: expected {"body":...})");
    CHECK(refused(R"({"body":"x","id":"job-2"})") == "id: must be the path's job id, or left out");
    CHECK(refused(R"({"delay":1})") == "body: missing");
    CHECK(refused(R"({"body":"x","delay":61})").rfind("delay: is above the queue's max_delay", 0) == 0);
    CHECK(refused(R"({"body":"x","delay":-1})") == "delay: must be a number of seconds >= 0");
    CHECK(refused(R"({"body":"x","headers":{"x-tarry-generation":1}})").rfind("headers.", 0) == 0);
    CHECK(refused(R"({"body":"x","when":1})").find("unknown field") != std::string::npos);
    CHECK(refused(R"(["body"])") == "the body: must be an object");
    CHECK(refused("{").rfind("the body is not valid JSON", 0) == 0);
}
