// Settlement, on the I/O thread: ack, nack, and republish-then-ack (parked
// copies and dead letters). The original is acknowledged only once its
// replacement is confirmed.
#include "consumer_impl.hpp"
#include "failure_plan.hpp"
#include "message_copies.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/steady_timer.hpp>

namespace tarry {

namespace asio = boost::asio;

void consumer::impl::settle(job j, job_outcome outcome, wall_time started) {
    switch (outcome.what()) {
        case job_outcome::kind::success:
            ack(j);
            return;
        case job_outcome::kind::failure:
            retry_or_dead_letter(std::move(j), outcome, started);
            return;
        case job_outcome::kind::reject:
            dead_letter(std::move(j), "rejected: " + outcome.error());
            return;
        case job_outcome::kind::requeue:
            nack_requeue(j);
            emit(event_of(j, job_event::kind::requeued));
            return;
    }
}

void consumer::impl::retry_or_dead_letter(job j, const job_outcome& failure, wall_time started) {
    const wall_time now = std::chrono::system_clock::now();
    const amqp::message original = j.msg.unpack();
    detail::failure_note note{j.attempt, detail::first_attempt_of(original, started), failure.error()};
    const auto elapsed = std::chrono::duration_cast<retry::duration>(now - note.first_attempt);
    // What a custom backoff throws is caught there: the job is then dead-lettered.
    auto plan = detail::plan_after_failure(options_.retry, j.attempt, failure.error(), failure.delay(),
                                           elapsed, detail::last_delay_of(original), random_);
    if (!plan.retry) {
        auto letter = detail::failed_dead_letter_copy(original, plan.reason, note);
        dead_letter(std::move(j), std::move(plan.reason), std::move(letter));
        return;
    }
    const auto delay = plan.delay;
    // To the microsecond, as perform_job_at carries it (rounded up: never early).
    const wall_time due = std::chrono::ceil<std::chrono::microseconds>(now + delay);
    auto copy = detail::retry_copy(original, note, due, delay, now);
    replace(std::move(j), "", options_.queue, std::move(copy), [this, due](const job& retried) {
        ++counters_.retried;
        auto e = event_of(retried, job_event::kind::retry);
        e.next_due = due;
        emit(std::move(e));
    }, "retry copy");
}

amqp::channel* consumer::impl::settling_channel(const job& j) {
    auto& lane = lanes_[j.lane];
    // From an earlier incarnation, or the channel is closing: the broker redelivers it.
    if (!current(j) || !lane.channel.is_open()) return nullptr;
    if (lane.unsettled > 0) --lane.unsettled;
    if (j.counted_holding && lane.holding > 0) --lane.holding;
    return &lane.channel;
}

void consumer::impl::ack(const job& j) {
    if (auto* ch = settling_channel(j)) ch->async_ack(j.delivery_tag, {}, [](std::error_code) {});
}

void consumer::impl::nack_requeue(const job& j) {
    auto* ch = settling_channel(j);
    if (!ch) return;
    ++counters_.requeued;
    ch->async_nack(j.delivery_tag, {.requeue = true}, [](std::error_code) {});
}

void consumer::impl::park(job j, const parking::wait_queue& to, wall_time now) {
    auto copy = detail::parked_copy(j.msg.unpack(), j.due, now);
    replace(std::move(j), "", to.name, std::move(copy), [this](const job& parked) {
        ++counters_.parked;
        auto e = event_of(parked, job_event::kind::parked);
        e.next_due = parked.due;
        emit(std::move(e));
    }, "parked copy");
}

void consumer::impl::dead_letter(job j, std::string reason, std::optional<amqp::message> letter,
                                 const char* copy_name) {
    auto copy = letter ? std::move(*letter) : detail::dead_letter_copy(j.msg.unpack(), reason, j.attempt);
    const bool to_exchange = !options_.dead_letter_exchange.empty();
    replace(std::move(j), options_.dead_letter_exchange,
            to_exchange ? options_.queue : options_.dead_letter_queue_name(), std::move(copy),
            [this, reason = detail::bounded(reason)](const job& dead) {
                ++counters_.dead_lettered;
                auto e = event_of(dead, job_event::kind::dead);
                e.reason = reason;
                emit(std::move(e));
            }, copy_name);
}

void consumer::impl::dead_letter_unfit(job j, const char* copy_name) {
    const auto info = copies_conn_.info();
    auto letter = detail::unfit_dead_letter(j.msg.unpack(), copy_name, info ? info->frame_max : 0, j.attempt);
    // Its properties are within any frame_max: no fallback from this one.
    dead_letter(std::move(j), std::move(letter.reason), std::move(letter.copy), nullptr);
}

void consumer::impl::replace(job j, std::string exchange, std::string routing_key,
                             amqp::message copy, std::function<void(const job&)> done,
                             const char* copy_name) {
    ++in_flight_;
    auto original = std::make_shared<job>(std::move(j));
    publisher_.async_publish_as_is(
        std::move(exchange), routing_key, std::move(copy),
        asio::bind_executor(io_, [this, original, routing_key, done = std::move(done),
                                  copy_name](std::error_code ec) {
            if (!ec) {
                refused_in_a_row_ = 0;
                ack(*original);
                done(*original);
                --in_flight_;
                return;
            }
            if (ec == amqp::errc::header_too_large && copy_name != nullptr) {
                // Refused before it was sent: a header frame over frame_max
                // never goes on the wire (the broker would close the
                // connection). Every copy of this message would be refused
                // alike, so it is the message's problem, not a pause's.
                dead_letter_unfit(std::move(*original), copy_name);
                --in_flight_;
                return;
            }
            // Not confirmed: the original stays unacknowledged. Give it back
            // after a pause that grows while refusals go on (the cause may last).
            ++counters_.republish_failures;
            const auto pause = retry::delay_after(options_.republish_backoff, ++refused_in_a_row_,
                                                  last_refusal_pause_, random_);
            last_refusal_pause_ = pause;
            auto e = event_of(*original, job_event::kind::failed);
            e.reason = "republish to '" + routing_key + "' failed: " + ec.message() + "; given back in " +
                       std::to_string(pause.count()) + " ms";
            emit(std::move(e));
            auto timer = std::make_shared<asio::steady_timer>(io_, pause);
            timer->async_wait([this, timer, original](boost::system::error_code) {
                nack_requeue(*original);
                --in_flight_;
            });
        }));
}

job_event consumer::impl::event_of(const job& j, job_event::kind k) const {
    return event_of(j, k, j.msg.properties());
}

job_event consumer::impl::event_of(const job& j, job_event::kind k, const amqp::basic_properties& p) const {
    job_event e{k, {}, j.due, std::chrono::system_clock::now(), j.attempt, {}, {}};
    if (p.message_id) e.id = *p.message_id;
    return e;
}

void consumer::impl::emit(job_event e) const {
    if (!hooks_.on_event) return;
    try {
        hooks_.on_event(e);
    } catch (...) {
    }
}

}  // namespace tarry
