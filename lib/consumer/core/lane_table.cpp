#include "lane_table.hpp"

namespace tarry::detail {

lane_table::lane_table(std::size_t lanes)
    : lanes_(lanes), generations_(std::make_shared<lane_generations>(lanes)) {}

std::uint32_t lane_table::open(std::size_t lane) {
    if (++last_generation_ == 0) ++last_generation_;
    auto& l = lanes_[lane];
    l = lane_state{};
    generations_->set(lane, last_generation_);
    return last_generation_;
}

bool lane_table::close(std::size_t lane, std::uint32_t generation) {
    if (!current(lane, generation)) return false;
    generations_->set(lane, 0);
    lanes_[lane] = lane_state{};
    return true;
}

std::size_t lane_table::next(std::size_t besides) const noexcept {
    std::size_t best = none;
    const auto load = [&](std::size_t i) { return up(i) ? lanes_[i].holding : 0; };
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
        if (i == besides) continue;
        if (best == none || load(i) < load(best) || (load(i) == load(best) && up(i) && !up(best)))
            best = i;
    }
    return best;
}

}  // namespace tarry::detail
