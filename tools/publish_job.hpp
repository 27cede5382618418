// Publishing one job and waiting for the broker's confirm, with the
// arguments that describe it: what `tarry publish` and the `publish` sample
// share.
#pragma once

#include "command_args.hpp"

#include "tarry/amqp/connection_config.hpp"
#include "tarry/amqp/message.hpp"
#include "tarry/schedule/clock.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace cli {

/// The due time asked for by --delay-ms N (`now` + N ms) or --at EPOCH_S
/// (a fraction allowed), whichever is given (the caller checks that one
/// is); a usage error when it is not a time the clock can hold.
tarry::wall_time due_time(args& a, tarry::wall_time now);

/// The connection settings of --url's value `url`; a usage error
/// (`bad --url: ...`) when it is not an AMQP URL.
tarry::amqp::connection_config broker_of(const args& a, const std::string& url);

/// The headers of the repeatable --header K=V (string values; K of 1 to
/// 255 bytes); a usage error otherwise.
tarry::amqp::field_table header_options(args& a);

/// One job: to the default exchange with routing key `queue`, persistent,
/// message_id `id`, perform_job_at `due` (to the microsecond).
struct job_to_publish {
    std::string queue;
    std::string id;
    std::string body;
    tarry::wall_time due;
    /// Parked by the publisher through the delay cascade declared under
    /// `cascade_prefix` when due beyond this (publisher_options::park_beyond).
    std::optional<std::chrono::milliseconds> park_beyond;
    std::string cascade_prefix = "tarry.delay";
};

/// Connects, publishes `job`, waits at most 30 s for the broker's confirm
/// and closes. Confirmed: prints `published ID due EPOCH_S to Q` on stdout
/// and returns 0. Otherwise returns 1 and says why on stderr, after
/// `program: `: cannot connect, no queue took the job (unroutable), refused
/// by the broker, or no confirm in time (it may or may not be queued).
int publish_job(const tarry::amqp::connection_config& broker, const job_to_publish& job, const char* program);

}  // namespace cli
