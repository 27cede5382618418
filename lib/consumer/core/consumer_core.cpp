// The core's construction, its timers and stop.
#include "consumer_core.hpp"

#include <algorithm>

namespace tarry::detail {

namespace {
// How often the due backlog is looked at while jobs are held.
std::chrono::milliseconds backlog_check_interval(const subscription_options& o) {
    return std::clamp<std::chrono::milliseconds>(o.backlog_margin() / 4, std::chrono::milliseconds(10),
                                                 std::chrono::seconds(1));
}
}  // namespace

consumer_core::consumer_core(const subscription_options& options, job_store& store, core_counters& counters,
                             retry::random_source random, steady_time epoch, bool events_wanted,
                             const cancel_oracle* cancels, const claim_oracle* claims)
    : options_(options),
      rules_{options.default_delay, options.max_delay},
      ladder_(options.queue, options.effective_min_park_ttl(), options.hold_horizon),
      cascade_(options.parking_strategy ? std::optional<parking::delay_cascade>(*options.parking_strategy)
                                        : std::nullopt),
      store_(store),
      counters_(counters),
      random_(std::move(random)),
      epoch_(epoch),
      events_wanted_(events_wanted),
      cancels_(cancels),
      claims_(claims),
      delivery_limit_(delivery_limit_in_force(options.delivery_limit, {})),
      lanes_(options.effective_channels()) {}

void consumer_core::broker_identified(std::string_view version) {
    delivery_limit_ = delivery_limit_in_force(options_.delivery_limit, version);
}

std::optional<steady_time> consumer_core::oldest_unsettled() const noexcept {
    const auto ticks = lanes_.oldest_unsettled();
    if (!ticks) return std::nullopt;
    return steady_time(steady_time::duration(*ticks));
}

void consumer_core::take_actions(std::vector<core_action>& out) {
    out.clear();
    out.swap(actions_);
    wake_asked_ = false;
}

std::optional<steady_time> consumer_core::next_wake() const {
    std::optional<steady_time> at = resubscribe_at_;
    const auto sooner = [&at](std::optional<steady_time> t) {
        if (t && (!at || *t < *at)) at = t;
    };
    sooner(backlog_check_at_);
    sooner(claim_remake_at_);
    if (!copy_timers_.empty()) sooner(copy_timers_.begin()->first);
    return at;
}

void consumer_core::tick(moment now) {
    if (resubscribe_at_ && *resubscribe_at_ <= now.steady) {
        resubscribe_at_.reset();
        if (!stopping_ && !starting_ && intake_ == lane_table::none) actions_.push_back(action::subscribe{});
    }
    if (backlog_check_at_ && *backlog_check_at_ <= now.steady) check_backlog(now);
    if (claim_remake_at_ && *claim_remake_at_ <= now.steady) recheck_claims(now, true);
    copy_timers(now);
    resume_if_drained();
}

void consumer_core::check_backlog(moment now) {
    backlog_check_at_.reset();
    const auto earliest = store_.earliest_due();
    if (!earliest) return;  // nothing held: the next admission arms the check again
    backlog_check_at_ = now.steady + backlog_check_interval(options_);
    if (*earliest > now.steady) return;  // nothing due waits for a worker
    // Due, not started, and about to overstay the broker's consumer_timeout:
    // given back before the broker times the channel out.
    auto late = store_.take_if([&](const held_job& j) { return j.due <= now.wall && deadline_of(j, now.steady) <= now.steady; });
    for (auto& it : late) give_back_one(std::move(it.value), "backlog", now);
}

void consumer_core::stop(moment now) {
    if (stopping_) return;
    stopping_ = true;
    resubscribe_at_.reset();
    for (std::size_t i = 0; i < lanes_.size(); ++i)
        if (lanes_.up(i)) cancel(i);
    // Occurrences waiting for their run claim go back now.
    auto waiting = std::move(unclaimed_);
    unclaimed_.clear();
    claim_remake_at_.reset();
    for (auto& j : waiting) give_back_one(std::move(j), "shutdown", now);
    // Copies waiting to be published again are not: their originals go back
    // now (one return from the delivery limit, their copies go out again).
    for (auto& [entry, p] : copies_)
        if (p.publish_id == 0) set_timer(entry, p, now.steady);
    copy_timers(now);
}

}  // namespace tarry::detail
