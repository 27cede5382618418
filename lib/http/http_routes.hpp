// Which route a request takes, and whether its bearer token is the right
// one: pure functions over the request line and headers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tarry::http_detail {

enum class route_kind {
    metrics,             ///< GET /metrics
    healthz,             ///< GET /healthz
    readyz,              ///< GET /readyz
    jobs,                ///< GET /jobs[?query]
    publish,             ///< POST /v1/queues/{own queue}/messages
    cancel,              ///< DELETE /v1/queues/{own queue}/messages/{id}
    reschedule,          ///< PUT /v1/queues/{own queue}/messages/{id}
    status_page,         ///< GET /
    not_found,           ///< no such path, or another queue's messages (404)
    method_not_allowed,  ///< a known path with another method (405; `allow` says which)
};

struct route {
    route_kind kind = route_kind::not_found;
    std::string query;   ///< after '?', undecoded ("" when none)
    std::string job_id;  ///< cancel, reschedule: the {id} segment, percent-decoded (1..255 bytes)
    const char* allow = "";  ///< method_not_allowed: the Allow header's value
};

/// The route of `method` ("GET", "POST", ...; HEAD counts as GET) and
/// `target` (origin form: path[?query]) for an endpoint serving `queue`. The
/// queue in a publish path is percent-decoded before it is compared; so is a
/// job id, which must then be 1 to 255 bytes (else not found).
route route_of(std::string_view method, std::string_view target, std::string_view queue);

enum class auth_result {
    ok,
    missing,        ///< no Authorization header, or not "Bearer ..." (401)
    wrong,          ///< another token (403)
    not_configured, ///< the endpoint has no token: every publish is refused (403)
};
/// Checks an Authorization header's value against `token`, in time that
/// does not depend on where they differ.
auth_result check_bearer(std::optional<std::string_view> authorization,
                         const std::optional<std::string>& token);

}  // namespace tarry::http_detail
