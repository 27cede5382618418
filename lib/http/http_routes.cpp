// Routes and the bearer token (see the header).
//
// Paths match exactly: no trailing slash, no dot segments, no absolute form
// ("http://host/metrics") and no asterisk form. Anything else is not found
// rather than normalised, so that no spelling of a path can reach another
// route, and no spelling of a queue can reach another queue: the queue
// segment is percent-decoded once and compared whole with the endpoint's
// own queue (a decoded '/' stays part of the name).
#include "http_routes.hpp"

#include "tarry/amqp/url.hpp"  // percent_decode

#include <array>

namespace tarry::http_detail {

namespace {

constexpr const char* allow_get = "GET, HEAD";
constexpr const char* allow_post = "POST";
constexpr const char* allow_job = "PUT, DELETE";
constexpr std::size_t max_job_id = 255;  // a message_id is a shortstr

struct fixed_route {
    std::string_view path;
    route_kind kind;
};
constexpr std::array<fixed_route, 5> get_routes = {{
    {"/metrics", route_kind::metrics},
    {"/healthz", route_kind::healthz},
    {"/readyz", route_kind::readyz},
    {"/jobs", route_kind::jobs},
    {"/", route_kind::status_page},
}};

// "/v1/queues/{queue}/messages[/{id}]": the queue segment and the id
// segment (empty for the collection), still encoded.
struct message_path {
    std::string_view queue;
    std::string_view id;
    bool one = false;  // /messages/{id}
};
std::optional<message_path> message_segments(std::string_view path) {
    constexpr std::string_view prefix = "/v1/queues/";
    constexpr std::string_view middle = "/messages";
    if (!path.starts_with(prefix)) return std::nullopt;
    path.remove_prefix(prefix.size());
    const std::size_t slash = path.find('/');
    if (slash == 0 || slash == std::string_view::npos) return std::nullopt;
    message_path m;
    m.queue = path.substr(0, slash);
    path.remove_prefix(slash);
    if (!path.starts_with(middle)) return std::nullopt;
    path.remove_prefix(middle.size());
    if (path.empty()) return m;
    if (path[0] != '/' || path.size() == 1 || path.find('/', 1) != std::string_view::npos) return std::nullopt;
    m.id = path.substr(1);
    m.one = true;
    return m;
}

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equal_ignoring_case(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

// Equal, in time that depends on the length of `given` only. `expected`
// is not empty.
bool equal_in_constant_time(std::string_view given, std::string_view expected) noexcept {
    unsigned difference = given.size() == expected.size() ? 0u : 1u;
    for (std::size_t i = 0; i < given.size(); ++i)
        difference |= static_cast<unsigned char>(given[i]) ^
                      static_cast<unsigned char>(expected[i % expected.size()]);
    // volatile: the compiler may not stop the loop early at the first difference.
    volatile unsigned result = difference;
    return result == 0;
}

}  // namespace

route route_of(std::string_view method, std::string_view target, std::string_view queue) {
    route r;
    const std::size_t question = target.find('?');
    const std::string_view path = target.substr(0, question);
    if (question != std::string_view::npos) r.query = std::string(target.substr(question + 1));
    const bool get = method == "GET" || method == "HEAD";

    for (const auto& fixed : get_routes) {
        if (path != fixed.path) continue;
        if (get) {
            r.kind = fixed.kind;
        } else {
            r.kind = route_kind::method_not_allowed;
            r.allow = allow_get;
        }
        return r;
    }
    if (const auto m = message_segments(path)) {
        const auto decoded = amqp::percent_decode(m->queue);
        if (decoded && *decoded == queue && !m->one) {
            if (method == "POST") {
                r.kind = route_kind::publish;
            } else {
                r.kind = route_kind::method_not_allowed;
                r.allow = allow_post;
            }
            return r;
        }
        const auto id = m->one ? amqp::percent_decode(m->id) : std::nullopt;
        if (decoded && *decoded == queue && id && !id->empty() && id->size() <= max_job_id) {
            if (method == "DELETE" || method == "PUT") {
                r.kind = method == "PUT" ? route_kind::reschedule : route_kind::cancel;
                r.job_id = *id;
            } else {
                r.kind = route_kind::method_not_allowed;
                r.allow = allow_job;
            }
            return r;
        }
    }
    r.kind = route_kind::not_found;
    return r;
}

auth_result check_bearer(std::optional<std::string_view> authorization,
                         const std::optional<std::string>& token) {
    // An empty token would let "Bearer " through: treated as none.
    if (!token || token->empty()) return auth_result::not_configured;
    if (!authorization) return auth_result::missing;
    // RFC 6750, 2.1: "Bearer" 1*SP token; the scheme in any case (RFC 9110, 11.1).
    const std::string_view value = *authorization;
    const std::size_t space = value.find(' ');
    if (space == std::string_view::npos || !equal_ignoring_case(value.substr(0, space), "Bearer"))
        return auth_result::missing;
    const std::size_t start = value.find_first_not_of(' ', space);
    if (start == std::string_view::npos) return auth_result::missing;
    const std::string_view given = value.substr(start);
    if (given.find_first_of(" \t") != std::string_view::npos) return auth_result::missing;
    return equal_in_constant_time(given, *token) ? auth_result::ok : auth_result::wrong;
}

}  // namespace tarry::http_detail
