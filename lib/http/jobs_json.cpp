// /jobs: the query and the page as JSON (see the header).
//
// The page is written by hand, as job events are, because "due" is a
// number with exactly six fraction digits, which Boost.JSON would write as
// a double ("1.7672256001234560E9").
#include "jobs_json.hpp"

#include "utf8_text.hpp"

#include "tarry/amqp/url.hpp"                  // percent_decode
#include "tarry/consumer/job_event_json.hpp"  // json_quoted
#include "tarry/time/epoch_text.hpp"

#include <charconv>

namespace tarry::http_detail {

namespace {

constexpr std::size_t max_limit = 1000;

http_error bad_query(std::string message) { return http_error{400, std::move(message)}; }

// 1..max_limit, digits only.
std::optional<std::size_t> read_limit(std::string_view text) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos)
        return std::nullopt;
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size() || n < 1 || n > max_limit)
        return std::nullopt;
    return n;
}

}  // namespace

std::variant<jobs_query, http_error> parse_jobs_query(std::string_view query) {
    jobs_query q;
    bool seen_limit = false;
    bool seen_after = false;
    while (!query.empty()) {
        const std::size_t amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        if (pair.empty()) continue;  // "a=1&&b=2", a trailing '&'
        const std::size_t eq = pair.find('=');
        const std::string_view raw_name = pair.substr(0, eq);
        const std::string_view raw_value =
            eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
        const auto name = amqp::percent_decode(raw_name);
        if (!name) return bad_query("query: bad percent-escape in '" + excerpt(raw_name) + "'");
        const auto value = amqp::percent_decode(raw_value);
        if (*name == "limit") {
            if (seen_limit) return bad_query("limit: given more than once");
            seen_limit = true;
            const auto n = value ? read_limit(*value) : std::nullopt;
            if (!n) return bad_query("limit: must be a whole number from 1 to 1000");
            q.limit = *n;
        } else if (*name == "after") {
            if (seen_after) return bad_query("after: given more than once");
            seen_after = true;
            if (!value) return bad_query("after: bad percent-escape");
            q.after = *value;
        } else {
            return bad_query("query: unknown parameter '" + excerpt(*name) + "' (known: limit, after)");
        }
    }
    return q;
}

std::string jobs_json(const held_jobs_page& page, std::span<const parked_count> parked) {
    std::string out = "{\"jobs\":[";
    out.reserve(out.size() + page.jobs.size() * 64 + parked.size() * 32 + 64);
    bool first = true;
    for (const auto& job : page.jobs) {
        if (!first) out += ',';
        first = false;
        out += "{\"id\":" + json_quoted(job.id) + ",\"due\":" + epoch_seconds_text(job.due) +
               ",\"attempt\":" + std::to_string(job.attempt) + ",\"lane\":" + std::to_string(job.lane) +
               '}';
    }
    out += "],\"next\":";
    out += page.next ? json_quoted(*page.next) : "null";
    out += ",\"held\":" + std::to_string(page.held) + ",\"parked_by_queue\":{";
    first = true;
    for (const auto& p : parked) {
        if (!first) out += ',';
        first = false;
        out += json_quoted(p.queue) + ':' + (p.messages ? std::to_string(*p.messages) : "null");
    }
    out += "}}";
    return out;
}

}  // namespace tarry::http_detail
