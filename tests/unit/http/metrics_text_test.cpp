// metrics_text: every metric with its value, one family at a time (HELP,
// TYPE, then its samples), reasons as labels, cumulative buckets with +Inf,
// _sum and _count, gauges without a value left out, label and HELP
// escaping, and float formatting Prometheus reads.
#include "http_test_support.hpp"
#include "metrics_text.hpp"

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <sstream>
#include <vector>

using namespace tarry::http_detail;
using http_test::busy_consumer;
using http_test::count_of;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The value of the sample whose name and labels are exactly `series`.
std::optional<std::string> value_of(const std::string& text, std::string_view series) {
    for (const auto& line : lines_of(text))
        if (line.size() > series.size() && line.starts_with(series) && line[series.size()] == ' ')
            return line.substr(series.size() + 1);
    return std::nullopt;
}

}  // namespace

TEST_CASE("metrics_text: every counter, labelled with the queue") {
    const std::string text = metrics_text(busy_consumer(), "jobs");
    const std::map<std::string, std::string> counters = {
        {"tarry_jobs_received_total", "10412"},     {"tarry_jobs_started_total", "10105"},
        {"tarry_jobs_succeeded_total", "9876"},     {"tarry_handler_failures_total", "215"},
        {"tarry_jobs_retried_total", "190"},        {"tarry_jobs_parked_total", "77"},
        {"tarry_jobs_dropped_total", "9"},          {"tarry_jobs_abandoned_total", "1"},
        {"tarry_copy_failures_total", "4"},         {"tarry_copies_late_confirmed_total", "2"},
        {"tarry_channel_losses_total", "3"},       {"tarry_jobs_cancelled_total", "6"},
        {"tarry_schedules_published_total", "8"}, {"tarry_jobs_skipped_total", "11"},
        {"tarry_jobs_deduplicated_total", "12"},
        {"tarry_events_published_total", "20210"}, {"tarry_events_dropped_total", "13"},
        {"tarry_hook_exceptions_total", "5"},
    };
    for (const auto& [name, value] : counters) {
        CAPTURE(name);
        CHECK(value_of(text, name + "{queue=\"jobs\"}") == value);
        CHECK(count_of(text, "# TYPE " + name + " counter\n") == 1);
        CHECK(count_of(text, "# HELP " + name + " ") == 1);
    }
}

TEST_CASE("metrics_text: dead letters and requeues once per reason") {
    const std::string text = metrics_text(busy_consumer(), "jobs");
    const std::vector<std::pair<std::string, std::string>> dead = {
        {"invalid-schedule", "5"}, {"unreadable", "1"}, {"delay-exceeds-max", "2"}, {"expired-before-due", "3"},
        {"attempts-exhausted", "17"}, {"rejected", "2"}, {"backoff-failed", "1"}};
    for (const auto& [reason, value] : dead)
        CHECK(value_of(text, "tarry_jobs_dead_lettered_total{queue=\"jobs\",reason=\"" + reason + "\"}") == value);
    CHECK(count_of(text, "\ntarry_jobs_dead_lettered_total{") == tarry::dead_letter_reasons.size());
    const std::vector<std::pair<std::string, std::string>> requeued = {
        {"handler", "6"}, {"shutdown", "4"}, {"backlog", "3"}, {"copy-failed", "1"}};
    for (const auto& [reason, value] : requeued)
        CHECK(value_of(text, "tarry_jobs_requeued_total{queue=\"jobs\",reason=\"" + reason + "\"}") == value);
    CHECK(count_of(text, "\ntarry_jobs_requeued_total{") == tarry::requeue_reasons.size());
}

TEST_CASE("metrics_text: gauges, those without a value left out") {
    tarry::consumer_metrics m = busy_consumer();
    std::string text = metrics_text(m, "jobs");
    CHECK(value_of(text, "tarry_jobs_held{queue=\"jobs\"}") == "212");
    CHECK(value_of(text, "tarry_jobs_held_bytes{queue=\"jobs\"}") == "1048576");
    CHECK(value_of(text, "tarry_jobs_running{queue=\"jobs\"}") == "8");
    CHECK(value_of(text, "tarry_next_due_timestamp_seconds{queue=\"jobs\"}") == "1767225690.250000");
    CHECK(value_of(text, "tarry_oldest_unacked_age_seconds{queue=\"jobs\"}") == "42.5");
    CHECK(value_of(text, "tarry_connected{queue=\"jobs\"}") == "1");
    CHECK(count_of(text, "# TYPE tarry_jobs_held gauge\n") == 1);

    m.next_due.reset();
    m.oldest_unacked_age.reset();
    m.connected = false;
    text = metrics_text(m, "jobs");
    CHECK(count_of(text, "tarry_next_due_timestamp_seconds") == 0);
    CHECK(count_of(text, "tarry_oldest_unacked_age_seconds") == 0);
    CHECK(value_of(text, "tarry_connected{queue=\"jobs\"}") == "0");
}

TEST_CASE("metrics_text: a histogram's buckets are cumulative, with +Inf, _sum and _count") {
    static constexpr std::array<double, 3> bounds = {0.0001, 0.5, 60};
    tarry::consumer_metrics m;
    m.start_lateness.bounds = bounds;
    m.start_lateness.counts = {1, 2, 3, 4};
    m.start_lateness.sum_seconds = 123.5;
    m.start_lateness.count = 10;
    const std::string text = metrics_text(m, "q");
    CHECK(text.find("# HELP tarry_start_lateness_seconds Start time minus due time of each job run.\n"
                    "# TYPE tarry_start_lateness_seconds histogram\n"
                    "tarry_start_lateness_seconds_bucket{queue=\"q\",le=\"0.0001\"} 1\n"
                    "tarry_start_lateness_seconds_bucket{queue=\"q\",le=\"0.5\"} 3\n"
                    "tarry_start_lateness_seconds_bucket{queue=\"q\",le=\"60\"} 6\n"
                    "tarry_start_lateness_seconds_bucket{queue=\"q\",le=\"+Inf\"} 10\n"
                    "tarry_start_lateness_seconds_sum{queue=\"q\"} 123.5\n"
                    "tarry_start_lateness_seconds_count{queue=\"q\"} 10\n") != std::string::npos);
    // No observations, no buckets: +Inf alone.
    CHECK(text.find("tarry_handler_duration_seconds_bucket{queue=\"q\",le=\"+Inf\"} 0\n"
                    "tarry_handler_duration_seconds_sum{queue=\"q\"} 0\n"
                    "tarry_handler_duration_seconds_count{queue=\"q\"} 0\n") != std::string::npos);
}

TEST_CASE("metrics_text: _count is the +Inf bucket, whatever the snapshot's count says") {
    static constexpr std::array<double, 2> bounds = {1, 2};
    tarry::consumer_metrics m;
    m.handler_duration.bounds = bounds;
    m.handler_duration.counts = {5};  // shorter than bounds + 1: the rest are 0
    m.handler_duration.count = 9;     // a few jobs apart
    std::string text = metrics_text(m, "q");
    CHECK(value_of(text, "tarry_handler_duration_seconds_bucket{queue=\"q\",le=\"2\"}") == "5");
    CHECK(value_of(text, "tarry_handler_duration_seconds_bucket{queue=\"q\",le=\"+Inf\"}") == "5");
    CHECK(value_of(text, "tarry_handler_duration_seconds_count{queue=\"q\"}") == "5");
    m.handler_duration.counts = {1, 1, 1, 7};  // longer: the extra counts go above every bound
    text = metrics_text(m, "q");
    CHECK(value_of(text, "tarry_handler_duration_seconds_bucket{queue=\"q\",le=\"2\"}") == "2");
    CHECK(value_of(text, "tarry_handler_duration_seconds_bucket{queue=\"q\",le=\"+Inf\"}") == "10");
    CHECK(value_of(text, "tarry_handler_duration_seconds_count{queue=\"q\"}") == "10");
}

TEST_CASE("metrics_text: bounds and values in forms Prometheus reads") {
    static constexpr std::array<double, 7> bounds = {0.00001, 0.0001, 0.00025, 2.5, 60, 600, 1e22};
    tarry::consumer_metrics m;
    m.start_lateness.bounds = bounds;
    m.start_lateness.sum_seconds = 0.1 + 0.2;
    const std::string text = metrics_text(m, "q");
    for (const std::string_view le : {"1e-05", "0.0001", "0.00025", "2.5", "60", "600", "1e+22", "+Inf"}) {
        CAPTURE(le);
        CHECK(count_of(text, "tarry_start_lateness_seconds_bucket{queue=\"q\",le=\"" + std::string(le) + "\"}") == 1);
    }
    CHECK(value_of(text, "tarry_start_lateness_seconds_sum{queue=\"q\"}") == "0.30000000000000004");
}

TEST_CASE("metrics_text: the queue label is escaped as the format says") {
    const std::string text = metrics_text(tarry::consumer_metrics{}, "a\"b\\c\nd");
    CHECK(value_of(text, "tarry_jobs_received_total{queue=\"a\\\"b\\\\c\\nd\"}") == "0");
    CHECK(count_of(text, "\nd\"") == 0);  // no raw newline inside a label
    const std::string bad = metrics_text(tarry::consumer_metrics{}, "x\xff");
    CHECK(value_of(bad, "tarry_jobs_received_total{queue=\"x\xEF\xBF\xBD\"}") == "0");
}

TEST_CASE("metrics_text: each family whole: HELP, TYPE, then only its samples") {
    const std::string text = metrics_text(busy_consumer(), "jobs");
    std::set<std::string> families;
    std::string current, type;
    std::size_t samples = 0;
    for (const auto& line : lines_of(text)) {
        CAPTURE(line);
        if (line.starts_with("# HELP ")) {
            current = line.substr(7, line.find(' ', 7) - 7);
            CHECK(families.insert(current).second);  // never seen before
            type.clear();
            continue;
        }
        if (line.starts_with("# TYPE ")) {
            CHECK(line.starts_with("# TYPE " + current + " "));
            type = line.substr(line.rfind(' ') + 1);
            continue;
        }
        REQUIRE_FALSE(type.empty());
        const std::string name = line.substr(0, line.find('{'));
        if (type == "histogram")
            CHECK((name == current + "_bucket" || name == current + "_sum" || name == current + "_count"));
        else
            CHECK(name == current);
        ++samples;
    }
    CHECK(families.size() == 28);
    // One series per reason of each bounded set (the sets may grow).
    CHECK(samples == 18 + tarry::dead_letter_reasons.size() + tarry::requeue_reasons.size() + 6 + (18 + 1 + 2) +
                         (13 + 1 + 2));
    CHECK(text.back() == '\n');
}

TEST_CASE("metrics_text: the content type is the text format's") {
    CHECK(std::string_view(metrics_content_type) == "text/plain; version=0.0.4; charset=utf-8");
}
