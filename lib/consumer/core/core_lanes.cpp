// The lanes' life: which lane consumes, hand-overs once a lane holds its
// share, losses (the lost incarnation's jobs are dropped: the broker
// redelivers them) and resubscribing.
#include "consumer_core.hpp"

#include <algorithm>

namespace tarry::detail {

namespace {
constexpr std::chrono::milliseconds resubscribe_after_loss{200};
constexpr std::chrono::milliseconds resubscribe_after_failure{1000};
}  // namespace

void consumer_core::subscribed() {
    if (stopping_ || starting_ || paused_ || intake_ != lane_table::none) return;
    start_lane(lanes_.next(lane_table::none));
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
    if (!lanes_.current(lane, gen)) return;  // lost meanwhile: its consumer went with the channel
    auto& l = lanes_[lane];
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
    // A hand-over: the old lane stops taking deliveries and keeps what it
    // holds until each job is settled.
    if (from != lane_table::none && from != lane && lanes_.up(from)) {
        cancel(from);
        ++counters_.lane_changes;
    }
}

void consumer_core::lane_start_failed(std::size_t lane, std::uint32_t gen, const std::string& why, moment now) {
    starting_ = false;
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
    actions_.push_back(action::cancel_lane{lane, lanes_.generations()->get(lane), l.consumer_tag});
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
    cancel(intake_);
}

void consumer_core::resume_if_drained() {
    if (!paused_ || store_.ready_waiting() > options_.effective_max_due_waiting() / 2) return;
    paused_ = false;
    if (!stopping_ && !starting_ && intake_ == lane_table::none) start_lane(lanes_.next(lane_table::none));
}

void consumer_core::connection_lost(const std::string& why, moment now) {
    for (std::size_t i = 0; i < lanes_.size(); ++i) lane_lost(i, lanes_.generations()->get(i), why, now);
}

void consumer_core::lane_lost(std::size_t lane, std::uint32_t gen, const std::string& why, moment now) {
    // Only the current incarnation's loss counts (a close and a cancel may both report it).
    if (!lanes_.close(lane, gen)) return;
    if (!stopping_) ++counters_.channel_losses;  // closing at stop() is no loss
    lost_generations_.emplace_back(gen, why);
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
    if (lost_generations_.empty()) return;
    auto gens = std::move(lost_generations_);
    lost_generations_.clear();
    // One pass over the held jobs for every lane lost since the last sweep.
    const auto why = [&gens](std::uint32_t generation) {
        return std::find_if(gens.begin(), gens.end(), [&](const auto& g) { return g.first == generation; });
    };
    auto gone = store_.take_if([&](const held_job& j) { return why(j.generation) != gens.end(); });
    for (auto& it : gone) drop(it.value, why(it.value.generation)->second, now);
    std::erase_if(unclaimed_, [&](const held_job& j) {
        const auto g = why(j.generation);
        if (g == gens.end()) return false;
        drop(j, g->second, now);
        return true;
    });
}

void consumer_core::resubscribe_in(std::chrono::milliseconds delay, moment now) {
    const auto at = now.steady + delay;
    if (!resubscribe_at_ || at < *resubscribe_at_) resubscribe_at_ = at;
}

}  // namespace tarry::detail
