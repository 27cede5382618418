// Shared by the HTTP layer's unit tests: a realistic metrics snapshot (its
// buckets static here, as the consumer's are), and checks that take the
// value or the error out of a parser's result.
#pragma once

#include "http_error.hpp"

#include "tarry/consumer/consumer_metrics.hpp"

#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <string_view>
#include <variant>

namespace http_test {

using namespace std::chrono_literals;

// Like the consumer's: 100 us to 60 s, and 1 ms to 10 min.
inline constexpr std::array<double, 18> lateness_bounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                           0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                                           1,      2.5,     5,      10,    30,     60};
inline constexpr std::array<double, 13> duration_bounds = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1,
                                                           5,     10,    30,   60,   300, 600};

/// 2026-01-01T00:00:00Z plus `d`.
inline tarry::wall_time at(std::chrono::nanoseconds d = {}) {
    return tarry::wall_time(std::chrono::duration_cast<tarry::wall_time::duration>(1'767'225'600s + d));
}

/// A consumer that has run for a while: every counter distinct.
inline tarry::consumer_metrics busy_consumer() {
    tarry::consumer_metrics m;
    auto& c = m.counters;
    c.received = 10'412;
    c.fast_path = 3'001;
    c.started = 10'105;
    c.succeeded = 9'876;
    c.handler_failures = 215;
    c.retried = 190;
    c.dead_lettered = 31;
    c.parked = 77;
    c.requeued = 14;
    c.dropped = 9;
    c.copy_failures = 4;
    c.late_confirms = 2;
    c.abandoned = 1;
    c.cancelled = 6;
    c.scheduled = 8;
    c.skipped = 11;
    c.deduplicated = 12;
    c.events_published = 20210;
    c.events_dropped = 13;
    c.hook_exceptions = 5;
    c.channel_losses = 3;
    c.held = 212;
    c.held_bytes = 1'048'576;
    c.running = 8;
    m.dead_lettered_by_reason = {5, 1, 2, 3, 17, 2, 1};
    m.requeued_by_reason = {6, 4, 3, 1};
    m.start_lateness.bounds = lateness_bounds;
    m.start_lateness.counts = {120, 4'000, 3'100, 1'500, 700, 300, 200, 90, 40, 30, 12, 6, 4, 2, 1, 0, 0, 0, 0};
    m.start_lateness.count = 10'105;
    m.start_lateness.sum_seconds = 19.75;
    m.handler_duration.bounds = duration_bounds;
    m.handler_duration.counts = {2'000, 5'000, 1'500, 900, 400, 150, 100, 20, 10, 6, 3, 1, 0, 1};
    m.handler_duration.count = 10'091;
    m.handler_duration.sum_seconds = 1'432.125;
    m.next_due = at(90s + 250ms);
    m.oldest_unacked_age = std::chrono::duration<double>(42.5);
    m.connected = true;
    m.recent_dead_letters = {
        {"order-17", "attempts-exhausted: timeout talking to the mail server", at(-5s)},
        {"", "invalid-schedule: perform_job_at is not a number", at(-65s)},
    };
    return m;
}

/// How many times `what` stands in `text` (overlapping ones too).
inline std::size_t count_of(std::string_view text, std::string_view what) {
    std::size_t n = 0;
    for (std::size_t p = text.find(what); p != std::string_view::npos; p = text.find(what, p + 1)) ++n;
    return n;
}

/// The value of a result that must hold one (a failed check otherwise).
template <class T>
T value_of(const std::variant<T, tarry::http_detail::http_error>& r) {
    if (const auto* e = std::get_if<tarry::http_detail::http_error>(&r)) {
        FAIL("refused: " << e->status << " " << e->message);
    }
    return std::get<T>(r);
}

/// The error of a result that must hold one (a failed check otherwise).
template <class T>
tarry::http_detail::http_error error_of(const std::variant<T, tarry::http_detail::http_error>& r) {
    if (!std::holds_alternative<tarry::http_detail::http_error>(r)) {
        FAIL("accepted, where an error was expected");
    }
    return std::get<tarry::http_detail::http_error>(r);
}

}  // namespace http_test
