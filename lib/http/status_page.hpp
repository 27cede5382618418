// GET /: a small status page, HTML with inline SVG and no external assets.
// Its numbers are rendered by the server and carry data- attributes
// (data-held, data-parked, data-running, ...) so that a test can read
// them from the DOM.
#pragma once

#include "jobs_json.hpp"

#include "tarry/consumer/consumer_metrics.hpp"
#include "tarry/time/time_points.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tarry::http_detail {

/// Held and parked at one moment.
struct status_sample {
    wall_time at;
    std::size_t held = 0;
    std::optional<std::uint64_t> parked;  ///< all wait queues; empty: unknown
};

/// The last samples, oldest first, at most `capacity` of them.
class status_history {
public:
    explicit status_history(std::size_t capacity) : capacity_(capacity) {}
    void add(status_sample s);
    const std::deque<status_sample>& samples() const noexcept { return samples_; }

private:
    std::size_t capacity_;
    std::deque<status_sample> samples_;
};

/// The page: queue name; held, parked, running, received, succeeded,
/// retried, dead-lettered (data- attributes named as the counters, with -
/// for _); held and parked over the samples (an SVG line chart); the start
/// lateness histogram (SVG bars); the recent dead letters with reasons.
/// Every text from a message (ids, reasons) is HTML-escaped.
std::string status_page_html(std::string_view queue, const consumer_metrics& m,
                             std::span<const parked_count> parked, const status_history& history,
                             wall_time now);

}  // namespace tarry::http_detail
