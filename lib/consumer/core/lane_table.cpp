#include "lane_table.hpp"

#include <algorithm>

namespace tarry::detail {

lane_table::lane_table(std::size_t lanes)
    : lanes_(lanes),
      incarnations_(std::make_shared<lane_incarnations>(lanes)),
      oldest_(std::make_unique<std::atomic<std::int64_t>[]>(lanes)) {
    for (std::size_t i = 0; i < lanes; ++i) oldest_[i].store(lane_state::no_oldest, std::memory_order_relaxed);
}

std::uint32_t lane_table::open(std::size_t lane) {
    if (++last_incarnation_ == 0) ++last_incarnation_;
    auto& l = lanes_[lane];
    l = lane_state{};
    oldest_[lane].store(lane_state::no_oldest, std::memory_order_relaxed);
    incarnations_->set(lane, last_incarnation_);
    return last_incarnation_;
}

bool lane_table::close(std::size_t lane, std::uint32_t incarnation) {
    if (!current(lane, incarnation)) return false;
    incarnations_->set(lane, 0);
    lanes_[lane] = lane_state{};  // its deliveries are the broker's again: none is outstanding here
    oldest_[lane].store(lane_state::no_oldest, std::memory_order_relaxed);
    return true;
}

void lane_table::delivered(std::size_t lane, std::uint64_t tag, std::int64_t at) {
    auto& l = lanes_[lane];
    ++l.unsettled;
    l.window.delivered(tag, at);
    if (l.published_oldest == lane_state::no_oldest) publish_oldest(lane);
}

void lane_table::settled(std::size_t lane, std::uint64_t tag, bool counted_holding) noexcept {
    auto& l = lanes_[lane];
    if (l.unsettled > 0) --l.unsettled;
    if (counted_holding && l.holding > 0) --l.holding;
    l.window.settled(tag);
    publish_oldest(lane);
}

void lane_table::settled_all(std::size_t lane) noexcept {
    auto& l = lanes_[lane];
    l.unsettled = 0;
    l.holding = 0;
    l.window.clear();
    publish_oldest(lane);
}

void lane_table::publish_oldest(std::size_t lane) noexcept {
    auto& l = lanes_[lane];
    const std::int64_t now = l.window.oldest().value_or(lane_state::no_oldest);
    if (now == l.published_oldest) return;
    l.published_oldest = now;
    oldest_[lane].store(now, std::memory_order_relaxed);
}

std::optional<std::int64_t> lane_table::oldest_unsettled() const noexcept {
    std::int64_t oldest = lane_state::no_oldest;
    for (std::size_t i = 0; i < lanes_.size(); ++i) oldest = std::min(oldest, oldest_[i].load(std::memory_order_relaxed));
    if (oldest == lane_state::no_oldest) return std::nullopt;
    return oldest;
}

std::size_t lane_table::next(std::size_t besides) const noexcept {
    std::size_t best = none;
    const auto load = [&](std::size_t i) { return up(i) ? lanes_[i].holding : 0; };
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
        if (i == besides || lanes_[i].state == lane_state::intake::consuming ||
            lanes_[i].state == lane_state::intake::starting)
            continue;
        if (best == none || load(i) < load(best) || (load(i) == load(best) && up(i) && !up(best)))
            best = i;
    }
    return best;
}

}  // namespace tarry::detail
