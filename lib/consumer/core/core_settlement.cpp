// Settlement: what a worker's outcome does (ack, retry, dead-letter, give
// back), and the acks and nacks themselves. A delivery that is no longer
// current is dropped: the broker redelivers it, so nothing is published for
// it and nothing is acknowledged.
#include "consumer_core.hpp"

#include "../failure_plan.hpp"
#include "../message_copies.hpp"
#include "../occurrence_successor.hpp"
#include "reason_labels.hpp"

#include "tarry/contract/occurrence_headers.hpp"
#include "tarry/contract/schedule_headers.hpp"

#include <type_traits>
#include <variant>

namespace tarry::detail {

namespace {
// An occurrence's message_id is `<schedule id>@<nominal>`: a job whose id
// has no '@' is not one, and its properties need not be decoded to say so.
bool may_be_occurrence(const held_job& j) {
    if (const auto* m = j.msg.kept()) return m->properties.message_id && m->properties.message_id->find('@') != std::string::npos;
    const auto id = j.msg.message_id();
    return id && id->find('@') != std::string::npos;
}
}  // namespace

void consumer_core::finished(finished_job f, moment now) {
    resume_if_drained();
    held_job& j = f.job;
    if (f.what == finished_job::result::not_current) {
        drop(j, "its channel was lost before it ran", now);
        return;
    }
    if (f.what == finished_job::result::cancelled) {
        if (!current(j)) drop(j, "its channel was lost before it ran", now);
        else cancel_one(j, now);
        return;
    }
    if (f.what == finished_job::result::deduplicated) {
        if (!current(j)) drop(j, "its channel was lost before it ran", now);
        else deduplicate_one(j, now);
        return;
    }
    if (f.what == finished_job::result::unclaimed) {
        if (!current(j)) drop(j, "its channel was lost before it ran", now);
        else await_claim(std::move(j), now);
        return;
    }
    if (f.what == finished_job::result::misfired) {
        // Not run, but the chain goes on: its successor first.
        if (!current(j)) {
            drop(j, "its channel was lost before it fell due", now);
            return;
        }
        if (auto next = successor_of(j.msg.unpack(), j.attempt, f.started, now.wall)) {
            copy_effect effect{job_event::kind::scheduled, {}, next->due};
            effect.started = f.started;
            replace(std::move(j), "", options_.queue, std::move(next->msg), std::move(effect), "successor", now);
            return;
        }
        skip_one(j, now);
        return;
    }
    if (f.what == finished_job::result::not_yet_due) {
        // The wall clock stepped back: hold it again, or park it when the
        // step pushed it beyond the hold horizon.
        if (j.due - now.wall > options_.hold_horizon) {
            park_or_hold(std::move(j), now);
        } else {
            push_held(std::move(j), now);
        }
        return;
    }
    if (f.outcome->what() == job_outcome::kind::failure) ++counters_.handler_failures;
    if (!current(j)) {
        const auto ran = now.steady - delivered_at(j, now.steady);
        std::string why = "its channel was lost while it ran";
        if (ran >= options_.broker_consumer_timeout)
            why += " (unacknowledged for longer than the broker's consumer_timeout: a handler that runs "
                   "that long is redelivered however it ends)";
        drop(j, std::move(why), now);
        return;
    }
    settle(std::move(j), *f.outcome, f.started, now);
}

void consumer_core::settle(held_job j, const job_outcome& outcome, wall_time started, moment now,
                           bool successor_published) {
    // A cancel read while it ran: a success stands; anything else ends it
    // (a retry, a dead letter or a requeue would only bring back a job its
    // owner no longer wants).
    const bool cancel_requested =
        cancels_ != nullptr && cancels_->any() &&
        covered(j.msg.properties(), now.wall);
    if (cancel_requested && outcome.what() != job_outcome::kind::success) {
        cancel_one(j, now, true);
        return;
    }
    // A periodic occurrence goes on with its successor, confirmed before the
    // occurrence is settled however it ended (a failure is retried as a job
    // of its own; its retries publish no successor). Not when its schedule
    // was removed or replaced meanwhile.
    if (!successor_published && !cancel_requested && j.attempt == 1 && may_be_occurrence(j)) {
        if (auto next = successor_of(j.msg.unpack(), j.attempt, started, now.wall)) {
            copy_effect effect{job_event::kind::scheduled, {}, next->due};
            effect.then = outcome;
            effect.started = started;
            replace(std::move(j), "", options_.queue, std::move(next->msg), std::move(effect), "successor", now);
            return;
        }
    }
    switch (outcome.what()) {
        case job_outcome::kind::success: {
            ack(j);
            ++counters_.succeeded;
            auto e = event_of(j, job_event::kind::succeeded, now.wall);
            e.cancel_requested = cancel_requested;
            emit(std::move(e));
            return;
        }
        case job_outcome::kind::failure:
            retry_or_dead_letter(std::move(j), outcome, started, now);
            return;
        case job_outcome::kind::reject:
            dead_letter(std::move(j), "rejected: " + outcome.error(), std::nullopt, now);
            return;
        case job_outcome::kind::requeue:
            give_back_one(std::move(j), "handler", now);
            return;
    }
}

void consumer_core::retry_or_dead_letter(held_job j, const job_outcome& failure, wall_time started, moment now) {
    const amqp::message original = j.msg.unpack();
    failure_note note{j.attempt, first_attempt_of(original, started), failure.error()};
    const auto elapsed = std::chrono::duration_cast<retry::duration>(now.wall - note.first_attempt);
    // What a custom backoff throws is caught there: the job is then dead-lettered.
    auto plan = plan_after_failure(options_.retry, j.attempt, failure.error(), failure.delay(), elapsed,
                                   last_delay_of(original), random_);
    if (!plan.retry) {
        auto letter = failed_dead_letter_copy(original, plan.reason, note);
        dead_letter(std::move(j), std::move(plan.reason), std::move(letter), now);
        return;
    }
    // To the microsecond, as perform_job_at carries it (rounded up: never early).
    const wall_time due = std::chrono::ceil<std::chrono::microseconds>(now.wall + plan.delay);
    auto copy = retry_copy(original, note, due, plan.delay, now.wall);
    replace(std::move(j), "", options_.queue, std::move(copy), {job_event::kind::retry, {}, due}, "retry copy", now);
}

void consumer_core::park(held_job j, const std::string& exchange, const std::string& routing_key, moment now) {
    auto copy = parked_copy(j.msg.unpack(), j.due, now.wall);
    const auto due = j.due;
    replace(std::move(j), exchange, routing_key, std::move(copy), {job_event::kind::parked, {}, due}, "parked copy",
            now);
}

void consumer_core::dead_letter(held_job j, std::string reason, std::optional<amqp::message> letter, moment now,
                                const char* copy_name) {
    auto copy = letter ? std::move(*letter) : dead_letter_copy(j.msg.unpack(), reason, j.attempt);
    const bool to_exchange = !options_.dead_letter_exchange.empty();
    replace(std::move(j), options_.dead_letter_exchange,
            to_exchange ? options_.queue : options_.dead_letter_queue_name(), std::move(copy),
            {job_event::kind::dead, bounded(reason), std::nullopt}, copy_name, now);
}

bool consumer_core::covered(const amqp::basic_properties& props, wall_time now) const {
    if (cancels_ == nullptr || !cancels_->any()) return false;
    const std::uint64_t generation = contract::read_generation(props);
    if (props.message_id && cancels_->cancelled(*props.message_id, generation, now)) return true;
    // An occurrence of a schedule upserted again or removed since.
    const auto* schedule = amqp::wire::text_header(props, contract::schedule_header);
    return schedule != nullptr && cancels_->schedule_superseded(*schedule, generation, now);
}

void consumer_core::skip_one(const held_job& j, moment now) {
    ack_unrun(j, job_event::kind::skipped, counters_.skipped,
              "misfired: found later than its misfire threshold, and its misfire policy does not run it", now);
}

void consumer_core::cancel_one(const held_job& j, moment now, bool after_run) {
    ack_unrun(j, job_event::kind::cancelled, counters_.cancelled,
              after_run ? "a cancel was read while it ran, and the run did not succeed: not retried"
                        : "a tombstone covers it: acknowledged without running",
              now, after_run);
}

void consumer_core::ack_unrun(const held_job& j, job_event::kind k, std::atomic<std::uint64_t>& counter,
                              const char* reason, moment now, bool cancel_requested) {
    if (!settling(j)) return;
    actions_.push_back(action::ack{j.lane, j.incarnation, j.delivery_tag});
    ++counter;
    auto e = event_of(j, k, now.wall);
    e.cancel_requested = cancel_requested;
    e.reason = reason;
    emit(std::move(e));
}

bool consumer_core::settling(const held_job& j) {
    if (!current(j)) return false;
    lanes_.settled(j.lane, j.delivery_tag, j.counted_holding);
    return true;
}

void consumer_core::ack(const held_job& j) {
    if (settling(j)) actions_.push_back(action::ack{j.lane, j.incarnation, j.delivery_tag});
}

void consumer_core::nack(const held_job& j, const char* reason, moment now, bool emit_event) {
    if (!settling(j)) return;
    ++counters_.requeued;
    ++counters_.requeued_by_reason[requeue_label(reason)];
    actions_.push_back(action::nack{j.lane, j.incarnation, j.delivery_tag});
    if (!emit_event) return;
    auto e = event_of(j, job_event::kind::requeued, now.wall);
    e.reason = reason;
    emit(std::move(e));
}

void consumer_core::give_back_one(held_job j, const char* reason, moment now, bool emit_event) {
    if (current(j) && near_delivery_limit(j)) {
        // One more return and the broker drops or dead-letters it: a copy
        // goes back instead, and the delivery is acked once it is confirmed.
        auto copy = requeue_copy(j.msg.unpack());
        replace(std::move(j), "", options_.queue, std::move(copy), {job_event::kind::requeued, reason, std::nullopt},
                "requeued copy", now);
        return;
    }
    nack(j, reason, now, emit_event);
}

namespace {
amqp::basic_properties properties_of(const held_job& j) {
    const auto* whole = j.msg.kept();
    return whole ? whole->properties : j.msg.properties();
}
}  // namespace

bool consumer_core::near_delivery_limit(const held_job& j) const {
    return delivery_limit_ && detail::near_delivery_limit(*delivery_limit_, returns_of(properties_of(j)));
}

void consumer_core::drop(const held_job& j, std::string why, moment now) {
    ++counters_.dropped;
    auto e = event_of(j, job_event::kind::dropped, now.wall);
    e.reason = std::move(why);
    emit(std::move(e));
}

steady_time consumer_core::deadline_of(const held_job& j, steady_time now) const noexcept {
    return delivered_at(j, now) + options_.broker_consumer_timeout - options_.backlog_margin();
}

void consumer_core::give_back(std::vector<held_item> items, moment now) {
    // Jobs one return from the delivery limit go back as copies; they stay
    // unsettled until confirmed, so no multiple nack covers them.
    std::erase_if(items, [&](held_item& it) {
        if (!current(it.value) || !near_delivery_limit(it.value)) return false;
        give_back_one(std::move(it.value), "shutdown", now);
        return true;
    });
    // Per lane: how many of the items are current there, and the highest tag.
    std::vector<std::size_t> count(lanes_.size(), 0);
    std::vector<std::uint64_t> highest(lanes_.size(), 0);
    for (const auto& it : items) {
        if (!current(it.value)) continue;
        ++count[it.value.lane];
        highest[it.value.lane] = std::max(highest[it.value.lane], it.value.delivery_tag);
    }
    std::vector<bool> at_once(lanes_.size(), false);
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
        const auto& lane = lanes_[i];
        // Only when nothing else of the lane is unsettled (no job running, no
        // copy awaiting its confirm) does one nack with `multiple` give back
        // exactly these: one broker operation instead of a walk per job.
        if (count[i] > 1 && count[i] == lane.unsettled) {
            at_once[i] = true;
            lanes_.settled_all(i);
            counters_.requeued += count[i];
            counters_.requeued_by_reason[requeue_label("shutdown")] += count[i];
            actions_.push_back(action::nack{i, lanes_.incarnations()->get(i), highest[i], true});
        }
    }
    for (auto& it : items) {
        if (current(it.value) && at_once[it.value.lane]) {
            auto e = event_of(it.value, job_event::kind::requeued, now.wall);
            e.reason = "shutdown";
            emit(std::move(e));
        } else {
            nack(it.value, "shutdown", now);
        }
    }
}

job_event consumer_core::event_of(const held_job& j, job_event::kind k, wall_time at) const {
    job_event e{k, {}, j.due, at, j.attempt, {}, {}, false};
    if (!events_wanted_) return e;
    if (const auto* whole = j.msg.kept()) {
        if (whole->properties.message_id) e.id = *whole->properties.message_id;
    } else if (auto p = j.msg.properties(); p.message_id) {
        e.id = std::move(*p.message_id);
    }
    return e;
}

void consumer_core::emit(job_event e) {
    if (events_wanted_) actions_.push_back(action::emit{std::move(e)});
}

// Stamps wrap instead of saturating: a saturated stamp would put every
// delivery after the 49.7th day at the same moment, long past, and give
// every due job back at once.
std::uint32_t consumer_core::delivered_ms(steady_time t) const noexcept {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - epoch_).count();
    return ms <= 0 ? 0 : static_cast<std::uint32_t>(static_cast<std::uint64_t>(ms));
}

steady_time consumer_core::delivered_at(const held_job& j, steady_time now) const noexcept {
    const std::uint32_t age = delivered_ms(now) - j.delivered_ms;  // modulo 2^32
    return now - std::chrono::milliseconds(age);
}

}  // namespace tarry::detail
