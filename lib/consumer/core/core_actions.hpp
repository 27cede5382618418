// What the consumer's core asks its driver to do. Each action names the
// lane and incarnation it is for; the driver executes it only while that
// incarnation is current (a stale ack or nack is never sent).
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/consumer/connection_event.hpp"
#include "tarry/consumer/consumer_metrics.hpp"
#include "tarry/consumer/job_event.hpp"
#include "tarry/control/schedule_entry.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

namespace tarry::detail::action {

/// basic.ack of `tag` (and, with multiple, every earlier one) on the lane.
struct ack {
    std::size_t lane;
    std::uint32_t incarnation;
    std::uint64_t tag;
    bool multiple = false;
};
/// basic.nack with requeue: the broker delivers it again.
struct nack {
    std::size_t lane;
    std::uint32_t incarnation;
    std::uint64_t tag;
    bool multiple = false;
};
/// Publish a copy on the copies connection (mandatory, confirmed); report
/// the result with copy_confirmed / copy_refused(publish_id).
struct publish {
    std::uint64_t publish_id;
    std::string exchange;
    std::string routing_key;
    amqp::message message;
};
/// Make `lane` consume: open its channel when it is down (then
/// lane_opened), basic.qos, basic.consume (then lane_consuming, or
/// lane_start_failed).
struct start_lane {
    std::size_t lane;
};
/// basic.cancel of the lane's consumer; it keeps its unsettled deliveries.
struct cancel_lane {
    std::size_t lane;
    std::uint32_t incarnation;
    std::string consumer_tag;
};
/// The lane's incarnation is lost: close its channel if it is still open.
struct close_lane {
    std::size_t lane;
};
/// Declare the topology again, then call subscribed() (or subscribe_failed()).
struct subscribe {};
/// Wake the workers for the jobs handed to them since the last wake.
struct wake_workers {};
/// Call sweep() once the handler that is running now has returned.
struct sweep {};
struct emit {
    job_event event;
};
/// A change of the subscription for the connection hooks.
struct report {
    connection_event event;
};
/// Append a run claim to the queue's control stream (docs/periodic.md,
/// "Run claims"). Best effort: its fate is not reported to the core; the
/// reader of the stream tells (claims_read) when claims arrive, and the
/// core makes a claim again while its occurrence waits for it.
struct claim {
    control::run_claim entry;
};
/// A dead letter was confirmed: for consumer_metrics::recent_dead_letters.
struct note_dead_letter {
    dead_letter_info letter;
};

}  // namespace tarry::detail::action

namespace tarry::detail {

using core_action =
    std::variant<action::ack, action::nack, action::publish, action::start_lane, action::cancel_lane,
                 action::close_lane, action::subscribe, action::wake_workers, action::sweep, action::emit,
                 action::report, action::note_dead_letter, action::claim>;

}  // namespace tarry::detail
