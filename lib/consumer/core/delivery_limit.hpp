// A quorum queue's delivery limit as the core meets it: which limit is in
// force (the one the options tell, or the broker's default by its version)
// and what a delivery's count of returns means against it. Pure functions.
//
// RabbitMQ counts a delivery's earlier returns in x-delivery-count (absent
// on a consumer's first delivery; 3.10's basic.get shows 0) and drops or dead-letters a
// message returned once more than its queue's limit. RabbitMQ 4.0 and later
// give every quorum queue a limit of 20 unless the queue says otherwise;
// classic queues send no count, so a limit never bites there.
#pragma once

#include "tarry/amqp/message.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace tarry::detail {

/// The limit RabbitMQ 4.0 and later give a quorum queue without x-delivery-limit.
inline constexpr std::uint32_t broker_default_delivery_limit = 20;

/// The limit in force. `told` (subscription_options::delivery_limit): 0 =
/// none, N = N; empty = derived from `broker_version` (connection.start's
/// `version`): none before RabbitMQ 4.0, broker_default_delivery_limit from
/// 4.0 on and for a version that does not read as MAJOR.MINOR... (the safe
/// side: a copy too many costs a publish, a return too many a job).
std::optional<std::uint32_t> delivery_limit_in_force(std::optional<std::uint32_t> told,
                                                     std::string_view broker_version);

/// The broker's count of a delivery's earlier returns: x-delivery-count of
/// any integer type; empty when the header is absent or not an integer.
std::optional<std::int64_t> returns_of(const amqp::basic_properties& props);

/// Close to the limit: one more return and the broker drops it (`returns`,
/// absent: 0, has reached limit - 1; limit 1: every delivery), or it has
/// reached renewal_threshold() (one fault may return it twice). Such a
/// delivery goes back by a confirmed copy and an ack, never by a nack.
bool near_delivery_limit(std::uint32_t limit, std::optional<std::int64_t> returns) noexcept;

/// The count of returns at which a delivery is renewed as it arrives:
/// limit - max(1, limit / 4), and at least 1 (15 of 20; 2 of 3; 1 of 1 and
/// 2). Below limit - 1 by a margin, because one fault may return a job more
/// than once: a killed worker's or a lost connection's deliveries went back
/// one or two times each (measured on RabbitMQ 3.10.8 and 4.0.5: the
/// returns of the lanes tarry had stopped consuming on are delivered to the
/// lane still consuming, itself dead but not yet noticed, and returned
/// again). At least 1, so that a fresh copy, which carries no count, is
/// never renewed again.
std::int64_t renewal_threshold(std::uint32_t limit) noexcept;

/// At admission: a delivery whose count has reached renewal_threshold() is
/// replaced by a confirmed copy at once, so that returns tarry does not
/// choose (a closed channel, a killed worker) cannot drop it.
bool renew_at_admission(std::uint32_t limit, std::optional<std::int64_t> returns) noexcept;

}  // namespace tarry::detail
