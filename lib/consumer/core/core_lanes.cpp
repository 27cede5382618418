// The lanes' life: which lanes consume, hand-overs once a lane holds its
// share (the old lane goes on consuming), pauses, losses (the lost incarnation's jobs are dropped: the broker
// redelivers them) and resubscribing.
#include "consumer_core.hpp"

#include <algorithm>
#include <utility>

namespace tarry::detail {

namespace {
constexpr std::chrono::milliseconds resubscribe_after_loss{200};
constexpr std::chrono::milliseconds resubscribe_after_failure{1000};
// After a broker's basic.cancel: doubling while cancels follow each other
// with no delivery between them (a queue deleted again and again, a
// handler that keeps overstaying 4.3's consumer timeout), at most this.
constexpr std::chrono::milliseconds resubscribe_after_cancel_max{30000};
}  // namespace

void consumer_core::subscribed() {
    if (stopping_ || starting_ || paused_ || intake_ != lane_table::none) return;
    // A lane whose consumer the broker cancelled keeps its jobs; another
    // lane consumes when there is one.
    std::size_t lane = lanes_.next(cancelled_lane_);
    if (lane == lane_table::none) lane = lanes_.next(lane_table::none);
    cancelled_lane_ = lane_table::none;
    start_lane(lane);
}

void consumer_core::subscribe_failed(const std::string& why, moment now) {
    if (stopping_) return;
    report(connection_event::kind::subscribe_failed, why, resubscribe_after_failure);
    resubscribe_in(resubscribe_after_failure, now);
}

void consumer_core::start_lane(std::size_t lane) {
    if (lane == lane_table::none) return;
    starting_ = true;
    lanes_[lane].state = lane_state::intake::starting;
    actions_.push_back(action::start_lane{lane});
}

std::uint32_t consumer_core::lane_opened(std::size_t lane) { return lanes_.open(lane); }

void consumer_core::lane_consuming(std::size_t lane, std::uint32_t gen, std::string tag) {
    starting_ = false;
    const bool rearmed = std::exchange(rearming_, false);
    if (!lanes_.current(lane, gen)) return;  // lost meanwhile: its consumer went with the channel
    auto& l = lanes_[lane];
    if (early_cancel_ && early_cancel_->lane == lane && early_cancel_->incarnation == gen) {
        // The broker cancelled it before its consume-ok was handled here.
        const auto at = early_cancel_->resubscribe_at;
        early_cancel_.reset();
        actions_.push_back(action::cancel_lane{lane, gen, tag});  // see consumer_cancelled()
        l.state = lane_state::intake::idle;
        rotating_from_ = lane_table::none;
        if (!stopping_ && intake_ == lane_table::none && !paused_) resubscribe_by(at);
        return;
    }
    l.state = lane_state::intake::consuming;
    l.consumer_tag = std::move(tag);
    if (stopping_ || paused_) {  // stop() or a pause came while it started: cancel it too
        cancel(lane);
        return;
    }
    const std::size_t from = rotating_from_;
    rotating_from_ = lane_table::none;
    if (from == lane_table::none) report(connection_event::kind::consuming, {});  // not a hand-over
    intake_ = lane;
    // A hand-over leaves the old lane consuming: its prefetch ends its
    // intake, and it settles what it holds job by job. It is not cancelled:
    // a quorum queue keeps a cancelled consumer's deliveries checked out when
    // the consumer's node loses the queue's leader, and never gives them back
    // (docs/consumer.md, "Lanes").
    if (from != lane_table::none && from != lane && lanes_.up(from) && !rearmed) ++counters_.lane_changes;
    consume_on_holders();
}

void consumer_core::consume_on_holders() {
    if (starting_ || stopping_ || paused_) return;
    // A lane cancelled by a pause and still holding jobs consumes again, one
    // lane after the other (each consume-ok brings the next).
    for (std::size_t i = 0; i < lanes_.size(); ++i)
        if (lanes_.up(i) && lanes_[i].state == lane_state::intake::cancelling && lanes_[i].unsettled > 0) {
            rotating_from_ = intake_;  // not reported as consuming again, not counted as a hand-over
            rearming_ = true;
            start_lane(i);
            return;
        }
}

void consumer_core::lane_start_failed(std::size_t lane, std::uint32_t gen, const std::string& why, moment now) {
    starting_ = false;
    rearming_ = false;
    if (lanes_.current(lane, gen) && lanes_[lane].state == lane_state::intake::starting)
        lanes_[lane].state = lane_state::intake::idle;
    if (rotating_from_ != lane_table::none) {  // the old lane goes on consuming
        rotating_from_ = lane_table::none;
        report(connection_event::kind::lane_change_failed, why);
        return;
    }
    subscribe_failed(why, now);
}

void consumer_core::cancel(std::size_t lane) {
    auto& l = lanes_[lane];
    if (l.state != lane_state::intake::consuming) return;
    l.state = lane_state::intake::cancelling;
    actions_.push_back(action::cancel_lane{lane, lanes_.incarnations()->get(lane), l.consumer_tag});
    if (intake_ == lane) intake_ = lane_table::none;
}

void consumer_core::maybe_rotate() {
    if (starting_ || stopping_ || lanes_.size() < 2) return;
    const std::size_t from = intake_;
    if (lanes_[from].holding < options_.lane_hold()) return;
    const std::size_t to = lanes_.next(from);
    // Nowhere better to go: every other lane holds as much.
    if (to == lane_table::none || (lanes_.up(to) && lanes_[to].holding >= lanes_[from].holding)) return;
    rotating_from_ = from;
    start_lane(to);
}

void consumer_core::pause_if_full() {
    if (paused_ || intake_ == lane_table::none) return;
    if (store_.ready_waiting() < options_.effective_max_due_waiting()) return;
    paused_ = true;
    rotating_from_ = lane_table::none;
    // Every lane consuming: hand-overs leave the old ones consuming. Each is
    // consumed on again once the pause ends (consume_on_holders).
    for (std::size_t i = 0; i < lanes_.size(); ++i) cancel(i);
}

void consumer_core::resume_if_drained() {
    if (!paused_ || store_.ready_waiting() > options_.effective_max_due_waiting() / 2) return;
    paused_ = false;
    if (!stopping_ && !starting_ && intake_ == lane_table::none) start_lane(lanes_.next(lane_table::none));
}

void consumer_core::consumer_cancelled(std::size_t lane, std::uint32_t gen, const std::string& why, moment now) {
    if (!lanes_.current(lane, gen)) return;
    auto& l = lanes_[lane];
    const auto was = l.state;
    // Our own basic.cancel crossed it (a hand-over, a pause, stop()), or it
    // is reported twice: nothing more to do.
    if (was == lane_state::intake::cancelling || stopping_) {
        l.state = lane_state::intake::idle;
        return;
    }
    if (was == lane_state::intake::idle && !starting_) return;
    const unsigned doublings = std::min(cancels_in_a_row_++, 8u);
    const auto delay = std::min(resubscribe_after_loss * (1u << doublings), resubscribe_after_cancel_max);
    report(connection_event::kind::consumer_cancelled, why, delay);
    cancelled_lane_ = lane;
    if (was != lane_state::intake::consuming) {
        // Before its consume-ok was handled here: lane_consuming() finds it
        // cancelled and schedules the next subscription.
        early_cancel_ = early_cancel{lane, gen, now.steady + delay};
        return;
    }
    // RabbitMQ 4.3 puts a consumer it cancelled for a timeout back in
    // service once its deliveries are settled: cancel it ourselves, so that
    // nothing is delivered under its tag again (answered with cancel-ok
    // where the consumer is gone already).
    actions_.push_back(action::cancel_lane{lane, gen, l.consumer_tag});
    l.state = lane_state::intake::idle;
    l.consumer_tag.clear();
    if (rotating_from_ == lane) rotating_from_ = lane_table::none;
    if (intake_ == lane) intake_ = lane_table::none;
    // What 4.3 returned with the cancel can only be a job still running (a
    // held job never outlives the timeout: due jobs not started are given
    // back before it): its ack then settles nothing, and the broker runs it
    // again, as when 3.10 closes the channel of a handler that overstays.
    if (intake_ == lane_table::none && !paused_) resubscribe_in(delay, now);
}

void consumer_core::connection_lost(const std::string& why, moment now) {
    for (std::size_t i = 0; i < lanes_.size(); ++i) lane_lost(i, lanes_.incarnations()->get(i), why, now);
}

void consumer_core::lane_lost(std::size_t lane, std::uint32_t gen, const std::string& why, moment now) {
    // Only the current incarnation's loss counts (a close and a cancel may both report it).
    if (!lanes_.close(lane, gen)) return;
    if (!stopping_) ++counters_.channel_losses;  // closing at stop() is no loss
    lost_incarnations_.emplace_back(gen, why);
    if (!sweep_asked_) {
        sweep_asked_ = true;
        actions_.push_back(action::sweep{});
    }
    actions_.push_back(action::close_lane{lane});
    if (intake_ == lane) intake_ = lane_table::none;
    if (rotating_from_ == lane) rotating_from_ = lane_table::none;
    if (!stopping_) resubscribe_in(resubscribe_after_loss, now);
}

void consumer_core::sweep(moment now) {
    sweep_asked_ = false;
    if (lost_incarnations_.empty()) return;
    auto gens = std::move(lost_incarnations_);
    lost_incarnations_.clear();
    // One pass over the held jobs for every lane lost since the last sweep.
    const auto why = [&gens](std::uint32_t incarnation) {
        return std::find_if(gens.begin(), gens.end(), [&](const auto& g) { return g.first == incarnation; });
    };
    auto gone = store_.take_if([&](const held_job& j) { return why(j.incarnation) != gens.end(); });
    for (auto& it : gone) drop(it.value, why(it.value.incarnation)->second, now);
    std::erase_if(unclaimed_, [&](const held_job& j) {
        const auto g = why(j.incarnation);
        if (g == gens.end()) return false;
        drop(j, g->second, now);
        return true;
    });
}

void consumer_core::resubscribe_in(std::chrono::milliseconds delay, moment now) { resubscribe_by(now.steady + delay); }

void consumer_core::resubscribe_by(steady_time at) {
    if (!resubscribe_at_ || at < *resubscribe_at_) resubscribe_at_ = at;
}

}  // namespace tarry::detail
