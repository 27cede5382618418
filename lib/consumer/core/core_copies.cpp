// Copies that replace a delivery (retry, parked, dead letter): published,
// and the original acknowledged once the copy is confirmed. A copy refused
// or not confirmed in time leaves its original unacknowledged; it is
// published again after a pause that grows while refusals go on (the
// handler does not run again, so its attempt count holds), until the
// original would overstay the broker's consumer_timeout: then the original
// is given back, unless it is near the delivery limit. A copy confirmed after its original was settled otherwise
// is counted (late_confirms): a possible duplicate, never a loss.
#include "consumer_core.hpp"

#include "../message_copies.hpp"
#include "reason_labels.hpp"

#include "tarry/amqp/error.hpp"

namespace tarry::detail {

void consumer_core::replace(held_job j, std::string exchange, std::string routing_key, amqp::message copy,
                            copy_effect effect, const char* copy_name, moment now) {
    if (!current(j)) {
        // Its channel is gone and the broker redelivers it: a copy would be
        // a second message (found by the core's fuzz target: a lost job
        // taken out of a full store, handed back not yet due, or dead-
        // lettered again after a refusal, before the sweep).
        drop(j, "its channel was lost before its copy was published", now);
        return;
    }
    const std::uint64_t entry = ++last_id_;
    std::optional<amqp::message> kept;
    if (effect.kind != job_event::kind::parked) kept = copy;
    auto& p = copies_.emplace(entry, pending_copy{std::move(j), std::move(exchange), std::move(routing_key),
                                                  std::move(kept), std::move(effect), copy_name, 0, std::nullopt})
                  .first->second;
    publish(entry, p, std::move(copy), now);
}

void consumer_core::publish(std::uint64_t entry, pending_copy& p, amqp::message message, moment now) {
    p.publish_id = ++last_id_;
    set_timer(entry, p, now.steady + options_.copy_confirm_timeout);
    publishes_.emplace(p.publish_id, entry);
    actions_.push_back(action::publish{p.publish_id, p.exchange, p.routing_key, std::move(message)});
}

amqp::message consumer_core::copy_again(const pending_copy& p, moment now) const {
    if (p.copy) return *p.copy;
    return parked_copy(p.original.msg.unpack(), p.original.due, now.wall);
}

void consumer_core::set_timer(std::uint64_t entry, pending_copy& p, std::optional<steady_time> at) {
    if (p.timer) copy_timers_.erase({*p.timer, entry});
    p.timer = at;
    if (at) copy_timers_.emplace(*at, entry);
}

consumer_core::pending_copy consumer_core::take_copy(std::map<std::uint64_t, pending_copy>::iterator it) {
    set_timer(it->first, it->second, std::nullopt);
    pending_copy p = std::move(it->second);
    copies_.erase(it);
    return p;
}

void consumer_core::copy_confirmed(std::uint64_t publish_id, moment now) {
    const auto pub = publishes_.find(publish_id);
    if (pub == publishes_.end()) return;
    const auto it = copies_.find(pub->second);
    publishes_.erase(pub);
    if (it == copies_.end()) {
        // Its original was settled by another copy, or given back after this
        // one was overdue.
        ++counters_.late_confirms;
        return;
    }
    refused_in_a_row_ = 0;
    pending_copy p = take_copy(it);
    if (!current(p.original)) {  // the broker redelivers the original
        ++counters_.late_confirms;
        drop(p.original, "its channel was lost before its copy was confirmed", now);
        return;
    }
    if (p.effect.kind == job_event::kind::scheduled) {
        // A successor: the occurrence is settled now, as its handler said.
        ++counters_.scheduled;
        auto e = event_of(p.original, job_event::kind::scheduled, now.wall);
        e.next_due = p.effect.next_due;
        emit(std::move(e));
        if (p.effect.then) settle(std::move(p.original), *p.effect.then, p.effect.started, now, true);
        else skip_one(p.original, now);
        return;
    }
    ack(p.original);
    switch (p.effect.kind) {
        case job_event::kind::retry: ++counters_.retried; break;
        case job_event::kind::parked: ++counters_.parked; break;
        case job_event::kind::requeued:
            ++counters_.requeued;
            ++counters_.requeued_by_reason[requeue_label(p.effect.reason)];
            break;
        default:
            ++counters_.dead_lettered;
            ++counters_.dead_lettered_by_reason[dead_letter_label(p.effect.reason)];
            actions_.push_back(action::note_dead_letter{
                {p.original.msg.message_id().value_or(std::string()), p.effect.reason, now.wall}});
            break;
    }
    auto e = event_of(p.original, p.effect.kind, now.wall);
    e.reason = std::move(p.effect.reason);
    e.next_due = p.effect.next_due;
    emit(std::move(e));
}

void consumer_core::copy_refused(std::uint64_t publish_id, std::error_code why, std::uint32_t frame_max,
                                 moment now) {
    const auto pub = publishes_.find(publish_id);
    if (pub == publishes_.end()) return;
    const auto it = copies_.find(pub->second);
    publishes_.erase(pub);
    if (it == copies_.end() || it->second.publish_id != publish_id) return;  // settled, or published again
    if (why == amqp::errc::header_too_large && it->second.copy_name != nullptr) {
        // Refused before it was sent: its properties do not fit a frame, and
        // every copy of this message would be refused alike. The message's
        // problem, not a pause's: dead-lettered unreadable.
        pending_copy p = take_copy(it);
        auto letter = unfit_dead_letter(p.original.msg.unpack(), p.copy_name, frame_max, p.original.attempt);
        dead_letter(std::move(p.original), std::move(letter.reason), std::move(letter.copy), now, nullptr);
        return;
    }
    copy_failed(it->first, it->second, "refused: " + why.message(), now);
}

void consumer_core::copy_failed(std::uint64_t entry, pending_copy& p, const std::string& why, moment now) {
    ++counters_.copy_failures;
    const auto pause = retry::delay_after(options_.republish_backoff, ++refused_in_a_row_, last_pause_, random_);
    last_pause_ = pause;
    p.publish_id = 0;  // a late confirm of what was sent still settles the original
    set_timer(entry, p, now.steady + pause);
    auto e = event_of(p.original, job_event::kind::failed, now.wall);
    e.reason = "copy to '" + p.routing_key + "' " + why + "; published again in " + std::to_string(pause.count()) +
               " ms unless the original must be given back first";
    emit(std::move(e));
}

void consumer_core::copies_connected(moment now) {
    refused_in_a_row_ = 0;
    last_pause_ = retry::duration{0};
    for (auto& [entry, p] : copies_)
        if (p.publish_id == 0) set_timer(entry, p, now.steady);
    copy_timers(now);
}

void consumer_core::copy_timers(moment now) {
    while (!copy_timers_.empty() && copy_timers_.begin()->first <= now.steady) {
        const auto it = copies_.find(copy_timers_.begin()->second);
        auto& p = it->second;
        if (p.publish_id != 0) {  // awaiting: its confirm is overdue
            copy_failed(it->first, p,
                        "not confirmed within " + std::to_string(options_.copy_confirm_timeout.count()) + " ms", now);
            continue;
        }
        if (!current(p.original)) {  // the broker redelivers it: nothing to publish for it
            drop(take_copy(it).original, "its channel was lost while its copy was refused", now);
            continue;
        }
        const bool out_of_time =
            stopping_ || now.steady + last_pause_ + options_.copy_confirm_timeout > deadline_of(p.original, now.steady);
        if (out_of_time && !near_delivery_limit(p.original)) {
            // No time for another round before the broker's timeout: the
            // original goes back to the queue and runs again from there.
            nack(take_copy(it).original, stopping_ ? "shutdown" : "copy-failed", now);
            continue;
        }
        // (Near the delivery limit, a nack could be its last return: its
        // copy is published again until it is confirmed, or until stop()
        // closes the channel, which returns it with a count still under
        // the limit.)
        publish(it->first, p, copy_again(p, now), now);
    }
}

}  // namespace tarry::detail
