// /jobs: its query and its JSON.
#pragma once

#include "http_error.hpp"

#include "tarry/consumer/consumer_metrics.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace tarry::http_detail {

struct jobs_query {
    std::size_t limit = 100;  ///< 1..1000
    std::string after;        ///< a cursor, percent-decoded ("" = from the start)
};
/// Reads `limit` and `after` from a query string ("limit=10&after=..."); an
/// unknown parameter, a limit that is not 1..1000 or a bad escape is a 400.
std::variant<jobs_query, http_error> parse_jobs_query(std::string_view query);

struct parked_count {
    std::string queue;
    std::optional<std::uint64_t> messages;  ///< empty: unknown (the broker did not answer)
};

/// {"jobs":[{"id":…,"due":EPOCH_S,"attempt":N,"lane":K},…],"next":CURSOR|null,
///  "held":N,"parked_by_queue":{"<queue>":N|null,…}}; due in seconds with
/// microseconds as fraction digits.
std::string jobs_json(const held_jobs_page& page, std::span<const parked_count> parked);

}  // namespace tarry::http_detail
