// Admission: each delivery is given back (stopping), dead-lettered
// (unreadable, bad schedule), handed to the workers at once (due), held
// until due, or parked (due beyond the hold horizon, or the bounds are full);
// one that came back close to the queue's delivery limit is renewed first
// (a fresh copy, then an ack).
#include "consumer_core.hpp"

#include "../message_copies.hpp"

namespace tarry::detail {

namespace {
constexpr std::chrono::milliseconds displace_margin{1};
}  // namespace

void consumer_core::delivery(std::size_t lane, std::uint32_t gen, amqp::delivery d, moment now) {
    ++counters_.received;
    held_job j;
    j.lane = static_cast<std::uint16_t>(lane);
    j.incarnation = gen;
    j.delivery_tag = d.delivery_tag;
    j.redelivered = d.redelivered;
    j.delivered_ms = delivered_ms(now.steady);
    j.attempt = contract::read_attempt(d.msg.properties);
    if (!current(j)) return;  // its channel is gone: the broker redelivers it
    lanes_.delivered(lane, d.delivery_tag, now.steady.time_since_epoch().count());
    cancels_in_a_row_ = 0;  // consuming works again
    if (stopping_) {  // crossed our basic.cancel: give it back
        j.msg = packed_message::keep(std::move(d.msg));
        give_back_one(std::move(j), "shutdown", now, false);
        return;
    }
    if (d.unreadable) {  // its own problem: dead-lettered, and consuming goes on
        auto letter = unreadable_dead_letter(d.msg, *d.unreadable, j.attempt);
        j.msg = packed_message::keep(std::move(d.msg));
        dead_letter(std::move(j), std::move(letter.reason), std::move(letter.copy), now);
        return;
    }
    admit(std::move(j), std::move(d.msg), now);
}

void consumer_core::admit(held_job j, amqp::message msg, moment now) {
    if (covered(msg.properties, now.wall)) {  // cancelled: whatever its schedule, it will not run
        j.msg = packed_message::keep(std::move(msg));
        cancel_one(j, now);
        return;
    }
    // A copy of an occurrence that lost its run claim never runs.
    auto claim = claim_check(msg.properties, j.attempt, now);
    if (claim && claim->second == claim_verdict::lost) {
        j.msg = packed_message::keep(std::move(msg));
        deduplicate_one(j, now);
        return;
    }
    const bool renewing = delivery_limit_ && renew_at_admission(*delivery_limit_, returns_of(msg.properties));
    auto read = contract::read_schedule(msg.properties, now.wall, rules_);
    // A job that will not wait (refused, or due already) is kept as decoded;
    // one that may wait is packed at once (packing a kept one later would
    // leave its freed decoded form scattered among the held jobs).
    const auto* accepted = std::get_if<contract::schedule>(&read);
    j.msg = accepted && accepted->due > now.wall ? packed_message::pack(msg) : packed_message::keep(std::move(msg));
    if (auto* refused = std::get_if<contract::schedule_refusal>(&read)) {
        dead_letter(std::move(j), std::move(refused->reason), std::nullopt, now);
        return;
    }
    j.due = accepted->due;
    if (renewing) {
        renew(std::move(j), now);
        return;
    }
    // Claimed when it is to be held (or run now), so that its claim is read
    // back long before it falls due; a parked copy claims when it returns.
    if (claim && claim->second == claim_verdict::unknown && j.due - now.wall <= options_.hold_horizon)
        actions_.push_back(action::claim{std::move(claim->first)});
    if (!backlog_check_at_) backlog_check_at_ = deadline_of(j, now.steady);
    if (j.due <= now.wall) {
        fast_path(std::move(j), now);
        return;
    }
    if (j.due - now.wall > options_.hold_horizon) {
        park_or_hold(std::move(j), now);
        return;
    }
    hold(std::move(j), now);
}

void consumer_core::renew(held_job j, moment now) {
    auto copy = renewed_copy(j.msg.unpack(), j.due, now.wall);
    replace(std::move(j), "", options_.queue, std::move(copy), {job_event::kind::requeued, "delivery-limit"},
            "renewed copy", now);
}

void consumer_core::fast_path(held_job j, moment now) {
    ++counters_.fast_path;
    to_workers(std::move(j), now);
    pause_if_full();
}

void consumer_core::to_workers(held_job j, moment now) {
    const auto bytes = cost_of(j);
    const auto due = shift(now.steady, j.due, now.wall);
    if (!store_.ready(std::move(j), due, bytes)) {
        give_back_one(std::move(j), "shutdown", now);
        return;
    }
    // Workers are woken once for the deliveries of this read, after them.
    if (!wake_asked_) {
        wake_asked_ = true;
        actions_.push_back(action::wake_workers{});
    }
}

void consumer_core::hold(held_job j, moment now) {
    const bool fits = store_.size() < options_.max_held && store_.bytes() + cost_of(j) <= options_.max_held_bytes;
    if (fits) {
        push_held(std::move(j), now);
        return;
    }
    // Full: the job due last leaves, so a job due sooner is never kept out.
    // Sooner by a margin: each conversion to the steady clock reads both
    // clocks, so one wall time converts a little differently each time, and
    // jobs due at the same time would displace each other (each one parked
    // in another's place, and a lane change for each).
    const auto latest = store_.latest_due();
    if (latest && shift(now.steady, j.due, now.wall) + displace_margin < *latest) {
        if (auto out = store_.take_latest()) {
            push_held(std::move(j), now);
            park_or_hold(std::move(out->value), now);
            return;
        }
    }
    park_or_hold(std::move(j), now);
}

void consumer_core::park_or_hold(held_job j, moment now) {
    const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(j.due - now.wall) - options_.park_margin;
    if (cascade_) {
        // Through the cascade back to the work queue, rounded down (it must
        // come back before it is due); at most its longest delay (then it
        // is parked again when it comes back).
        const auto wait = std::min(room, cascade_->max_delay());
        const auto route = wait >= options_.effective_min_park_ttl()
                               ? cascade_->route({"", options_.queue}, wait, parking::unit_rounding::down)
                               : std::nullopt;
        if (route && route->units > 0) {
            park(std::move(j), cascade_->entry_exchange(), route->routing_key, now);
            return;
        }
    } else if (const auto* rung = ladder_.choose(room)) {
        park(std::move(j), "", rung->name, now);
        return;
    }
    // Due too soon to come back from even the shortest wait queue in time:
    // held beyond the bounds (prefetch still bounds how many can be).
    push_held(std::move(j), now);
}

void consumer_core::push_held(held_job j, moment now) {
    if (const auto* whole = j.msg.kept()) j.msg = packed_message::pack(*whole);
    const auto bytes = cost_of(j);
    const auto due = shift(now.steady, j.due, now.wall);
    const std::size_t lane = j.lane;
    const bool count = !j.counted_holding && current(j);
    j.counted_holding = j.counted_holding || count;
    if (!store_.hold(std::move(j), due, bytes)) {
        give_back_one(std::move(j), "shutdown", now);
        return;
    }
    if (count) ++lanes_[lane].holding;
    if (lane == intake_) maybe_rotate();
}

std::size_t consumer_core::cost_of(const held_job& j) const noexcept {
    // Its body and a flat allowance for properties and bookkeeping.
    return j.msg.size() + 128;
}

}  // namespace tarry::detail
