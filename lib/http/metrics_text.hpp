// /metrics: a consumer's metrics in the Prometheus text format (0.0.4).
#pragma once

#include "tarry/consumer/consumer_metrics.hpp"

#include <string>
#include <string_view>

namespace tarry::http_detail {

inline constexpr const char* metrics_content_type = "text/plain; version=0.0.4; charset=utf-8";

/// Every metric of docs/design.md ("One vocabulary") with # HELP and
/// # TYPE, each series labelled queue="<queue>" (escaped as the format
/// says); dead_lettered and requeued once per reason, histograms with
/// cumulative buckets, _sum and _count. Gauges without a value (no job
/// held, nothing unacked) are left out rather than invented.
std::string metrics_text(const consumer_metrics& m, std::string_view queue);

}  // namespace tarry::http_detail
