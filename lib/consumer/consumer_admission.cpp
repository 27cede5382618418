// Admission, on the I/O thread: each delivery is dead-lettered (unreadable,
// bad schedule), run at once (fast path), held until due, or parked.
#include "consumer_impl.hpp"
#include "message_copies.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

namespace tarry {

namespace asio = boost::asio;

namespace {
// What a held job counts against max_held_bytes: its body and a flat
// allowance for properties and bookkeeping.
std::size_t cost_of(const detail::held_job& j) noexcept { return j.msg.size() + 128; }
}  // namespace

void consumer::impl::admit(std::size_t lane, std::uint32_t gen, amqp::delivery d) {
    ++counters_.received;
    const wall_time now = std::chrono::system_clock::now();
    job j;
    j.lane = static_cast<std::uint16_t>(lane);
    j.generation = gen;
    if (current(j)) ++lanes_[lane].unsettled;
    j.delivery_tag = d.delivery_tag;
    j.redelivered = d.redelivered;
    j.attempt = contract::read_attempt(d.msg.properties);
    if (stopping_) {  // crossed our basic.cancel: give it back
        nack_requeue(j);
        return;
    }
    if (d.unreadable) {  // its own problem: dead-lettered, and consuming goes on
        auto letter = detail::unreadable_dead_letter(d.msg, *d.unreadable, j.attempt);
        j.msg = detail::packed_message::keep(std::move(d.msg));
        dead_letter(std::move(j), std::move(letter.reason), std::move(letter.copy));
        return;
    }
    auto read = contract::read_schedule(d.msg.properties, now, rules_);
    // A job that will not wait (refused, or due already) is kept as decoded;
    // one that may wait is packed at once (packing a kept one later would
    // leave its freed decoded form scattered among the held jobs).
    const auto* accepted = std::get_if<contract::schedule>(&read);
    if (accepted && accepted->due > now) {
        j.msg = detail::packed_message::pack(d.msg);
    } else {
        j.msg = detail::packed_message::keep(std::move(d.msg));
    }
    if (auto* refused = std::get_if<contract::schedule_refusal>(&read)) {
        dead_letter(std::move(j), std::move(refused->reason));
        return;
    }
    j.due = accepted->due;
    if (j.due <= now) {
        ++counters_.fast_path;
        const auto bytes = cost_of(j);
        const auto due = to_steady(held_.clock(), j.due);
        held_.push_ready_quiet(std::move(j), due, bytes);
        // Workers are woken once for the deliveries of this read, after them.
        if (!wake_posted_) {
            wake_posted_ = true;
            asio::post(io_, [this] {
                wake_posted_ = false;
                held_.wake_ready();
            });
        }
        return;
    }
    if (j.due - now > options_.hold_horizon) {
        park_or_hold(std::move(j), now);
        return;
    }
    hold(std::move(j), now);
}

void consumer::impl::hold(job j, wall_time now) {
    const bool fits = held_.size() < options_.max_held &&
                      held_.bytes() + cost_of(j) <= options_.max_held_bytes;
    if (fits) {
        push_held(std::move(j));
        return;
    }
    // Full: the job due last leaves, so a job due sooner is never kept out.
    const auto latest = held_.latest_due();
    if (latest && to_steady(held_.clock(), j.due) < *latest) {
        if (auto out = held_.take_latest()) {
            push_held(std::move(j));
            park_or_hold(std::move(out->value), now);
            return;
        }
    }
    park_or_hold(std::move(j), now);
}

void consumer::impl::park_or_hold(job j, wall_time now) {
    const auto room =
        std::chrono::duration_cast<std::chrono::milliseconds>(j.due - now) - options_.park_margin;
    if (const auto* rung = ladder_.choose(room)) {
        park(std::move(j), *rung, now);
        return;
    }
    // Due too soon to come back from even the shortest wait queue in time:
    // held beyond the bounds (prefetch still bounds how many can be).
    push_held(std::move(j));
}

void consumer::impl::push_held(job j) {
    if (const auto* whole = j.msg.kept()) j.msg = detail::packed_message::pack(*whole);
    const auto bytes = cost_of(j);
    const auto due = j.due;
    const std::size_t lane = j.lane;
    if (!j.counted_holding && current(j)) {
        j.counted_holding = true;
        ++lanes_[lane].holding;
    }
    held_.push(std::move(j), due, bytes);  // unbounded queue: the consumer enforces its bounds
    // The consuming lane holds its share: hand over to the lane holding fewest.
    if (lane == intake_ && !rotating_ && !stopping_ && lanes_[lane].holding >= options_.lane_hold() &&
        lane_count_ > 1) {
        rotating_ = true;
        asio::co_spawn(io_, rotate(), asio::detached);
    }
}

}  // namespace tarry
