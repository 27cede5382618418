// One round of T (jobs due now, published before consuming, consumed and
// acknowledged as fast as the consumer can) for each contender that runs
// in or beside this process: the tarry consumer (lifecycle events off or
// on), the raw consume-and-ack loop on tarry's AMQP client, and external
// consume-and-ack programs (rabbitmq-c, pika). Shared by consumer_bench's
// T and compare_bench's T.
#pragma once

#include "consumer_bench_support.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace cbench {

/// T's queue size unless a caller asks for fewer (compare_bench --smoke).
inline constexpr std::size_t throughput_jobs = 20000;

/// Publishes `n` jobs due now (no schedule header), message ids T0..T(n-1),
/// and waits for their confirms.
void prepublish(endpoint& admin, const std::string& queue, std::size_t n);

/// What becomes of the lifecycle events in a round of T.
enum class events_mode {
    off,      ///< publish_events off
    unbound,  ///< on, no queue bound: the broker routes each event and discards it
    sunk,     ///< on, a queue bound with #.<queue> takes every event
    batched,  ///< as sunk, with up to batch_events events of a kind in one message
};

/// events_per_message in the batched rounds.
inline constexpr std::size_t batch_events = 100;

/// jobs/s of the consumer on a fresh queue of `n` jobs, first run event to
/// last succeeded event; `st`: its counters at the end.
double tarry_round(const context& cx, endpoint& admin, tarry::consumer_stats& st,
                   events_mode events = events_mode::off, std::size_t n = throughput_jobs);

/// jobs/s of a bare consume-and-ack loop on tarry's AMQP client.
double raw_round(const context& cx, endpoint& admin, std::uint16_t prefetch, std::size_t n = throughput_jobs);

/// jobs/s of another client's consume-and-ack program, run as `command URL
/// QUEUE MESSAGES PREFETCH` on a fresh queue of `n` jobs, which prints
/// {"consume_ack_per_s": ...}.
double program_round(const context& cx, endpoint& admin, const std::string& what, const std::string& command,
                     std::uint16_t prefetch, std::size_t n = throughput_jobs);

/// jobs/s of pika's basic_consume with manual acks (bench/pika_consume.py).
double pika_round(const context& cx, endpoint& admin, std::uint16_t prefetch, std::size_t n = throughput_jobs);

/// jobs/s of rabbitmq-c, the C client, consuming and acking as fast as it
/// can (bench/rabbitmq_c_consume.c, built beside the running program).
double rabbitmq_c_round(const context& cx, endpoint& admin, std::uint16_t prefetch,
                        std::size_t n = throughput_jobs);

}  // namespace cbench
