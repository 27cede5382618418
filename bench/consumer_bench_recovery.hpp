// Scenario M's recovery figures (consumer_bench_recovery.cpp): how long a
// consumer holding every job takes to consume again after the broker closes
// its connection, and the longest stall of jobs falling due meanwhile; and
// how long a fresh consumer takes to hold every job already waiting.
#pragma once

#include "consumer_bench_support.hpp"

#include <string>

namespace cbench {

struct recovery_result {
    std::string skipped;            ///< why it was not measured; empty when it was
    std::size_t held_before = 0;    ///< jobs held when the probes were published
    std::size_t connections_closed = 0;
    double close_s = 0;             ///< rabbitmqctl close_connection itself
    double consuming_again_s = 0;   ///< cut → the first delivery taken again
    double all_held_again_s = 0;    ///< cut → held (plus probes run) back to what it was
    bool recovered = false;
    std::uint64_t channel_losses = 0;
    std::uint64_t dropped = 0;      ///< deliveries settled after their channel was gone
    std::size_t probes_run = 0;
    summary probe_lateness;         ///< ms, handler start − due
};

/// Publishes the probes (ids Q<n>), waits until they are held, closes the
/// consuming connection named `connection_name`, and measures. `probes`
/// must be the consumer's run log for prefix "Q".
recovery_result measure_recovery(const context& cx, tarry::consumer& c, endpoint& admin, const std::string& queue,
                                 const std::string& connection_name, run_log& probes);
void print_recovery(const recovery_result& r);

struct start_result {
    double requeued_s = 0;     ///< before the start: until the broker counts `expected` ready again
    bool all_held = false;
    double first_taken_s = 0;  ///< start() → the first delivery taken
    double all_held_s = 0;     ///< start() → `expected` held
    double stop_s = 0;         ///< stop(), giving them back
};

/// A fresh consumer started on a queue where `expected` jobs wait, all due
/// later than its run, once the broker counts them all ready (after a
/// stop() gave them back, it requeues them for a while): how long until it
/// takes the first and holds them all, and how long its stop() takes.
start_result measure_start(endpoint& admin, const amqp::connection_config& config,
                           const tarry::subscription_options& opts, std::size_t expected);
void print_start(const start_result& r, std::size_t expected);

}  // namespace cbench
