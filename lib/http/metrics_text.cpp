// /metrics in the Prometheus text format 0.0.4 (see the header).
//
// Each family is written whole (# HELP, # TYPE, its samples) before the
// next. Label values are escaped as the format says (\\, \", \n) after any
// byte that is not UTF-8 is replaced (label values must be UTF-8). Floats
// are written in their shortest form that reads back exactly (0.0001,
// 1e-05, 60), infinities as +Inf / -Inf: what Prometheus parses.
#include "metrics_text.hpp"

#include "utf8_text.hpp"

#include "tarry/time/epoch_text.hpp"

#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>

namespace tarry::http_detail {

namespace {

std::string escaped(std::string_view s, bool quotes) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '"' && quotes) out += "\\\"";
        else out += c;
    }
    return out;
}

// The shortest digits that read back exactly, in fixed notation (0.0001,
// 60, 1767225690.25) unless the exponent is below -4 or above 20 (1e-05,
// 1e+22), as Go's and JavaScript's shortest forms do.
std::string number(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char text[400];  // fixed notation of up to 1e+20 or down to 1e-4: far less
    auto r = std::to_chars(text, text + sizeof text, v, std::chars_format::scientific);
    const std::string_view scientific(text, static_cast<std::size_t>(r.ptr - text));
    const int exponent = std::stoi(std::string(scientific.substr(scientific.find('e') + 1)));
    if (exponent < -4 || exponent > 20) return std::string(scientific);
    r = std::to_chars(text, text + sizeof text, v, std::chars_format::fixed);
    return std::string(text, r.ptr);
}

std::string number(std::uint64_t v) { return std::to_string(v); }

class exposition {
public:
    explicit exposition(std::string_view queue)
        : queue_label_("queue=\"" + escaped(valid_utf8(queue), true) + '"') {}

    void family(std::string_view name, std::string_view type, std::string_view help) {
        out_ += "# HELP ";
        out_ += name;
        out_ += ' ';
        out_ += escaped(help, false);
        out_ += "\n# TYPE ";
        out_ += name;
        out_ += ' ';
        out_ += type;
        out_ += '\n';
    }

    // name{queue="...",<label>="<value>"} value; label "" for none. Every
    // extra label value here is ours (a reason, a bound): no escaping needed.
    void sample(std::string_view name, std::string_view label, std::string_view label_value,
                std::string_view value) {
        out_ += name;
        out_ += '{';
        out_ += queue_label_;
        if (!label.empty()) {
            out_ += ',';
            out_ += label;
            out_ += "=\"";
            out_ += label_value;
            out_ += '"';
        }
        out_ += "} ";
        out_ += value;
        out_ += '\n';
    }

    void single(std::string_view name, std::string_view type, std::string_view help, std::string_view value) {
        family(name, type, help);
        sample(name, "", "", value);
    }

    template <std::size_t N>
    void by_reason(std::string_view name, std::string_view help,
                   const std::array<std::string_view, N>& reasons,
                   const std::array<std::uint64_t, N>& counts) {
        family(name, "counter", help);
        for (std::size_t i = 0; i < N; ++i) sample(name, "reason", reasons[i], number(counts[i]));
    }

    // Cumulative buckets; _count is the +Inf bucket, so the two always agree
    // even when a snapshot's count and counts are a few jobs apart.
    void histogram(std::string_view name, std::string_view help, const duration_histogram& h) {
        family(name, "histogram", help);
        const std::string bucket = std::string(name) + "_bucket";
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < h.bounds.size(); ++i) {
            if (i < h.counts.size()) total += h.counts[i];
            sample(bucket, "le", number(h.bounds[i]), number(total));
        }
        for (std::size_t i = h.bounds.size(); i < h.counts.size(); ++i) total += h.counts[i];
        sample(bucket, "le", "+Inf", number(total));
        sample(std::string(name) + "_sum", "", "", number(h.sum_seconds));
        sample(std::string(name) + "_count", "", "", number(total));
    }

    std::string take() { return std::move(out_); }

private:
    std::string queue_label_;
    std::string out_;
};

struct counter {
    std::string_view name;
    std::string_view help;
    std::uint64_t consumer_stats::*value;
};

// The counters without a reason label, in the order of docs/http.md.
constexpr std::array<counter, 10> job_counters = {{
    {"tarry_jobs_received_total", "Deliveries taken from the queue.", &consumer_stats::received},
    {"tarry_jobs_started_total", "Handler calls: jobs started.", &consumer_stats::started},
    {"tarry_jobs_succeeded_total", "Jobs whose handler succeeded (the ack was sent).",
     &consumer_stats::succeeded},
    {"tarry_handler_failures_total", "Handler failures (an exception or failure()).",
     &consumer_stats::handler_failures},
    {"tarry_jobs_retried_total", "Failed jobs retried: the retry copy confirmed, the original acked.",
     &consumer_stats::retried},
    {"tarry_jobs_parked_total", "Jobs parked in a wait queue: the copy confirmed, the original acked.",
     &consumer_stats::parked},
    {"tarry_jobs_cancelled_total", "Jobs acked without running (or not retried) because a tombstone covers them.",
     &consumer_stats::cancelled},
    {"tarry_schedules_published_total", "Successors of periodic occurrences published and confirmed.",
     &consumer_stats::scheduled},
    {"tarry_jobs_skipped_total", "Misfired periodic occurrences acked without running (their policy skips them).",
     &consumer_stats::skipped},
    {"tarry_jobs_deduplicated_total",
     "Copies of periodic occurrences acked without running: another copy won the run claim.",
     &consumer_stats::deduplicated},
}};
constexpr std::array<counter, 5> delivery_counters = {{
    {"tarry_jobs_dropped_total",
     "Deliveries no longer current when settled (their channel was lost): the broker redelivers them.",
     &consumer_stats::dropped},
    {"tarry_jobs_abandoned_total",
     "Handlers stop() left running after the grace period: the broker redelivers their jobs.",
     &consumer_stats::abandoned},
    {"tarry_copy_failures_total",
     "Copies (retry, parked, dead letter) refused or not confirmed in time; the original stays unacked.",
     &consumer_stats::copy_failures},
    {"tarry_copies_late_confirmed_total",
     "Copies confirmed after their original was settled otherwise: possible duplicates, never losses.",
     &consumer_stats::late_confirms},
    {"tarry_channel_losses_total", "Consuming channels lost (closed by the broker, or the connection lost).",
     &consumer_stats::channel_losses},
}};
// Lifecycle events (subscription_options::publish_events): 0 while off.
constexpr std::array<counter, 2> event_counters = {{
    {"tarry_events_published_total", "Lifecycle events handed to the copies connection (no confirms).",
     &consumer_stats::events_published},
    {"tarry_events_dropped_total",
     "Lifecycle events not published: too many waiting, the copies connection blocked, or the events channel down.",
     &consumer_stats::events_dropped},
}};
// The caller's hooks.
constexpr std::array<counter, 1> hook_counters = {{
    {"tarry_hook_exceptions_total",
     "Exceptions thrown by a hook (on_event, on_connection_event, on_connection, is_permanent); the consumer went on.",
     &consumer_stats::hook_exceptions},
}};

}  // namespace

std::string metrics_text(const consumer_metrics& m, std::string_view queue) {
    exposition x(queue);
    const consumer_stats& c = m.counters;
    for (const auto& k : job_counters) x.single(k.name, "counter", k.help, number(c.*k.value));
    x.by_reason("tarry_jobs_dead_lettered_total",
                "Jobs dead-lettered: the copy confirmed, the original acked; by reason.",
                dead_letter_reasons, m.dead_lettered_by_reason);
    x.by_reason("tarry_jobs_requeued_total", "Jobs given back to the queue (nack with requeue), by reason.",
                requeue_reasons, m.requeued_by_reason);
    for (const auto& k : delivery_counters) x.single(k.name, "counter", k.help, number(c.*k.value));
    for (const auto& k : event_counters) x.single(k.name, "counter", k.help, number(c.*k.value));
    for (const auto& k : hook_counters) x.single(k.name, "counter", k.help, number(c.*k.value));

    x.single("tarry_jobs_held", "gauge", "Jobs held now (the delay queue and the ready path).",
             number(static_cast<std::uint64_t>(c.held)));
    x.single("tarry_jobs_held_bytes", "gauge", "Bytes of the jobs held now.",
             number(static_cast<std::uint64_t>(c.held_bytes)));
    x.single("tarry_jobs_running", "gauge", "Handlers running now.",
             number(static_cast<std::uint64_t>(c.running)));
    if (m.next_due)
        x.single("tarry_next_due_timestamp_seconds", "gauge",
                 "The earliest due time among the held jobs, in seconds since the Unix epoch.",
                 epoch_seconds_text(*m.next_due));
    if (m.oldest_unacked_age)
        x.single("tarry_oldest_unacked_age_seconds", "gauge",
                 "How long the oldest delivery not yet settled has been unacknowledged.",
                 number(m.oldest_unacked_age->count()));
    x.single("tarry_connected", "gauge", "1 while the consuming connection is open and a channel consumes.",
             m.connected ? "1" : "0");

    x.histogram("tarry_start_lateness_seconds", "Start time minus due time of each job run.",
                m.start_lateness);
    x.histogram("tarry_handler_duration_seconds", "How long handlers ran, from start to outcome.",
                m.handler_duration);
    return x.take();
}

}  // namespace tarry::http_detail
