// The publish gateway's JSON (see the header).
//
// Strict: every field is known, of its type, in its range; the first
// problem in document order is the 400, and its message names where it is
// ("messages[3].delay: ..."). Duplicate keys in one object: the last one
// counts (Boost.JSON's parser keeps the last).
#include "gateway_json.hpp"

#include "utf8_text.hpp"

#include "tarry/publisher/publish_error.hpp"

#include <boost/json/array.hpp>
#include <boost/json/error.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parser.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace tarry::http_detail {

namespace {

namespace json = boost::json;

// Nesting a request may have (the document counts as 1; a message's body
// sits at 4): deeper is a 400, and no recursion below goes deeper.
constexpr std::size_t max_depth = 64;
// Delays and TTLs up to 100 years, as the schedule contract's x-delay.
constexpr double max_seconds = 36'525.0 * 86'400;
constexpr std::size_t max_short_string = 255;  // AMQP shortstr: message_id, header names

http_error bad(const std::string& where, std::string_view what) {
    return http_error{400, where + ": " + std::string(what)};
}

// Where a field is: `at` names the message ("messages[3]" in a publish,
// "" for a reschedule's body, which is the message itself).
std::string where_of(const std::string& at, std::string_view field = {}) {
    if (field.empty()) return at.empty() ? "the body" : at;
    return at.empty() ? std::string(field) : at + "." + std::string(field);
}

// A JSON number as a double; nothing for any other kind.
std::optional<double> number_of(const json::value& v) {
    switch (v.kind()) {
        case json::kind::int64: return static_cast<double>(v.get_int64());
        case json::kind::uint64: return static_cast<double>(v.get_uint64());
        case json::kind::double_: return v.get_double();
        default: return std::nullopt;
    }
}

// x rounded up to a whole number, but for what is below 1e-3 of a unit
// above one: decimal fractions ("0.1") are not exact in binary, and their
// product with 1e6 or 1e3 may land just above the whole number meant.
std::int64_t whole_rounded_up(double x) {
    const double nearest = std::round(x);
    return static_cast<std::int64_t>(std::abs(x - nearest) < 1e-3 ? nearest : std::ceil(x));
}

// A document with a number JSON cannot write (1e400 parses as infinity).
bool has_non_finite(const json::value& v) {
    if (v.is_double()) return !std::isfinite(v.get_double());
    if (const auto* a = v.if_array())
        return std::any_of(a->begin(), a->end(), [](const json::value& x) { return has_non_finite(x); });
    if (const auto* o = v.if_object())
        return std::any_of(o->begin(), o->end(), [](const auto& kv) { return has_non_finite(kv.value()); });
    return false;
}

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = lower(c);
    return out;
}

// Header names the library owns. perform_job_at and x-delay are the
// schedule: the gateway writes it itself from "delay", so that max_delay
// holds and no header competes with it (perform_job_at wins over x-delay
// in the contract). x-tarry-* carry the library's own state (the attempt,
// why a message was dead-lettered), which a caller must not forge. Any
// case: a header that only differs in case would still confuse a reader.
bool reserved_header(std::string_view name) {
    const std::string n = lowered(name);
    return n == "perform_job_at" || n == "x-delay" || n.starts_with("x-tarry-");
}

std::optional<http_error> read_body(const json::value& v, const std::string& at, gateway_message& m) {
    if (const auto* s = v.if_string()) {
        m.body.assign(s->data(), s->size());
        return std::nullopt;
    }
    if (has_non_finite(v))
        return bad(where_of(at, "body"), "holds a number too large for JSON (no infinity)");
    m.body = json::serialize(v);
    m.body_is_json = true;
    return std::nullopt;
}

std::optional<http_error> read_delay(const json::value& v, const std::string& at, const gateway_limits& limits,
                                     gateway_message& m) {
    const std::string where = where_of(at, "delay");
    const auto s = number_of(v);
    if (!s || !std::isfinite(*s) || *s < 0) return bad(where, "must be a number of seconds >= 0");
    if (*s > max_seconds) return bad(where, "must be at most 100 years (3155760000 s)");
    const std::chrono::microseconds delay(whole_rounded_up(*s * 1e6));
    if (limits.max_delay && delay > *limits.max_delay) {
        char max[32];
        const auto end = std::to_chars(max, max + sizeof max,
                                       std::chrono::duration<double>(*limits.max_delay).count()).ptr;
        return bad(where, "is above the queue's max_delay of " + std::string(max, end) + " s");
    }
    m.delay = delay;
    return std::nullopt;
}

std::optional<http_error> read_ttl(const json::value& v, const std::string& at, gateway_message& m) {
    const std::string where = where_of(at, "ttl");
    const auto s = number_of(v);
    if (!s || !std::isfinite(*s) || *s <= 0) return bad(where, "must be a number of seconds > 0");
    if (*s > max_seconds) return bad(where, "must be at most 100 years (3155760000 s)");
    m.ttl = std::chrono::milliseconds(std::max<std::int64_t>(whole_rounded_up(*s * 1e3), 1));
    return std::nullopt;
}

std::optional<http_error> read_headers(const json::value& v, const std::string& at, gateway_message& m) {
    const auto* headers = v.if_object();
    if (!headers) return bad(where_of(at, "headers"), "must be an object");
    for (const auto& kv : *headers) {
        const std::string_view name(kv.key().data(), kv.key().size());
        if (name.empty() || name.size() > max_short_string)
            return bad(where_of(at, "headers"), "a header name must be 1 to 255 bytes");
        const std::string where = where_of(at, "headers.") + excerpt(name);
        if (reserved_header(name))
            return bad(where, "reserved: the gateway sets the schedule, and x-tarry-* are tarry's own");
        const json::value& x = kv.value();
        amqp::field_value value;
        switch (x.kind()) {
            case json::kind::string: value = std::string(x.get_string().data(), x.get_string().size()); break;
            case json::kind::int64: value = x.get_int64(); break;
            case json::kind::bool_: value = x.get_bool(); break;
            case json::kind::double_:
                if (!std::isfinite(x.get_double())) return bad(where, "must be a finite number");
                value = x.get_double();
                break;
            case json::kind::uint64: return bad(where, "must fit a signed 64-bit integer");
            default: return bad(where, "must be a string, a number or a boolean");
        }
        m.headers.entries().push_back({std::string(name), std::move(value)});
    }
    return std::nullopt;
}

std::optional<http_error> read_id(const json::value& v, const std::string& at, gateway_message& m) {
    const auto* id = v.if_string();
    if (!id || id->empty() || id->size() > max_short_string)
        return bad(where_of(at, "id"), "must be a string of 1 to 255 bytes");
    m.id = std::string(id->data(), id->size());
    return std::nullopt;
}

std::variant<gateway_message, http_error> read_message(const json::value& v, const std::string& at,
                                                       const gateway_limits& limits) {
    const auto* fields = v.if_object();
    if (!fields) return bad(where_of(at), "must be an object");
    gateway_message m;
    bool has_body = false;
    for (const auto& kv : *fields) {
        const std::string_view name(kv.key().data(), kv.key().size());
        std::optional<http_error> e;
        if (name == "body") {
            has_body = true;
            e = read_body(kv.value(), at, m);
        } else if (name == "delay") {
            e = read_delay(kv.value(), at, limits, m);
        } else if (name == "ttl") {
            e = read_ttl(kv.value(), at, m);
        } else if (name == "headers") {
            e = read_headers(kv.value(), at, m);
        } else if (name == "id") {
            e = read_id(kv.value(), at, m);
        } else {
            e = bad(where_of(at, excerpt(name)), "unknown field (body, delay, ttl, headers, id)");
        }
        if (e) return *e;
    }
    if (!has_body) return bad(where_of(at, "body"), "missing");
    return m;
}

// `expected` says what the body should be, for an empty one.
std::variant<json::value, http_error> parse_document(std::string_view body, json::monotonic_resource& memory,
                                                     const char* expected) {
    if (body.empty()) return http_error{400, std::string("the body is empty: expected ") + expected};
    json::parse_options options;
    options.max_depth = max_depth;
    json::parser parser(json::storage_ptr(), options);
    parser.reset(&memory);
    json::error_code ec;
    const std::size_t at = parser.write(body.data(), body.size(), ec);
    if (ec == json::error::too_deep)
        return http_error{400, "the body is nested deeper than " + std::to_string(max_depth) + " levels"};
    if (ec)
        return http_error{400, "the body is not valid JSON: " + ec.message() + " at byte " + std::to_string(at)};
    return parser.release();
}

}  // namespace

std::variant<std::vector<gateway_message>, http_error> parse_gateway_request(std::string_view body,
                                                                             const gateway_limits& limits) {
    json::monotonic_resource memory;
    auto parsed = parse_document(body, memory, "{\"messages\":[...]}");
    if (auto* e = std::get_if<http_error>(&parsed)) return std::move(*e);
    const auto* document = std::get<json::value>(parsed).if_object();
    if (!document) return http_error{400, "the body must be a JSON object: {\"messages\":[...]}"};
    const json::array* messages = nullptr;
    for (const auto& kv : *document) {
        const std::string_view name(kv.key().data(), kv.key().size());
        if (name != "messages") return bad(excerpt(name), "unknown field (messages)");
        messages = kv.value().if_array();
        if (!messages) return bad("messages", "must be an array");
    }
    if (!messages) return bad("messages", "missing");
    if (messages->empty()) return bad("messages", "must hold at least 1 message");
    if (messages->size() > limits.max_messages)
        return bad("messages", "at most " + std::to_string(limits.max_messages) + " messages");

    std::vector<gateway_message> out;
    out.reserve(messages->size());
    for (std::size_t i = 0; i < messages->size(); ++i) {
        auto m = read_message((*messages)[i], "messages[" + std::to_string(i) + "]", limits);
        if (auto* e = std::get_if<http_error>(&m)) return std::move(*e);
        out.push_back(std::move(std::get<gateway_message>(m)));
    }
    return out;
}

std::variant<gateway_message, http_error> parse_reschedule_request(std::string_view body, std::string_view job_id,
                                                                   const gateway_limits& limits) {
    json::monotonic_resource memory;
    auto parsed = parse_document(body, memory, "{\"body\":...}");
    if (auto* e = std::get_if<http_error>(&parsed)) return std::move(*e);
    auto m = read_message(std::get<json::value>(parsed), "", limits);
    if (auto* e = std::get_if<http_error>(&m)) return std::move(*e);
    auto& message = std::get<gateway_message>(m);
    if (message.id && *message.id != job_id) return bad("id", "must be the path's job id, or left out");
    message.id = std::string(job_id);
    return m;
}

gateway_response command_response_of(const publish_result& r) {
    if (!r.error) {
        json::object body;
        body["id"] = valid_utf8(r.id);
        return {200, json::serialize(body)};
    }
    const std::string why = r.message.empty() ? r.error.message() : r.message;
    unsigned status = 502;
    if (r.error == std::errc::timed_out) status = 504;
    else if (r.error == amqp::errc::invalid_argument || r.error.category() == publish_category()) status = 400;
    if (r.error == publish_errc::unroutable) status = 502;
    return {status, error_json({status, why})};
}

gateway_response gateway_response_of(std::span<const publish_result> results) {
    json::array ids;
    json::array errors;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const publish_result& r = results[i];
        if (!r.error) {
            ids.emplace_back(valid_utf8(r.id));
            continue;
        }
        ids.emplace_back(nullptr);
        json::object e;
        e["index"] = i;
        e["error"] = valid_utf8(r.message.empty() ? r.error.message() : r.message);
        errors.emplace_back(std::move(e));
    }
    json::object body;
    body["ids"] = std::move(ids);
    if (errors.empty()) return {201, json::serialize(body)};
    body["errors"] = std::move(errors);
    return {207, json::serialize(body)};
}

}  // namespace tarry::http_detail
