#include "unsettled_window.hpp"

#include <bit>

namespace tarry::detail {

void unsettled_window::delivered(std::uint64_t tag, std::int64_t at) {
    const std::uint64_t c = tag / width;
    if (chunks_.empty()) first_ = c;
    for (; c < first_; --first_) chunks_.push_front(nullptr);  // out of order: kept all the same
    while (c >= first_ + chunks_.size()) chunks_.push_back(nullptr);
    auto& slot = chunks_[c - first_];
    if (!slot) slot = spare_ ? std::move(spare_) : std::make_unique<chunk>();
    slot->pending |= std::uint64_t{1} << (tag % width);
    slot->at[tag % width] = at;
    trim();  // the front may be an emptied chunk that was the newest until now
}

void unsettled_window::settled(std::uint64_t tag) noexcept {
    const std::uint64_t c = tag / width;
    if (c < first_ || c - first_ >= chunks_.size()) return;
    auto& slot = chunks_[c - first_];
    if (!slot) return;
    slot->pending &= ~(std::uint64_t{1} << (tag % width));
    // The newest chunk stays for the deliveries still to come in it.
    if (slot->pending == 0 && c - first_ + 1 < chunks_.size()) release(slot);
    trim();
}

void unsettled_window::clear() noexcept {
    while (!chunks_.empty()) {
        release(chunks_.back());
        chunks_.pop_back();
    }
}

std::optional<std::int64_t> unsettled_window::oldest() const noexcept {
    if (chunks_.empty() || chunks_.front()->pending == 0) return std::nullopt;
    const auto& c = *chunks_.front();
    return c.at[static_cast<std::size_t>(std::countr_zero(c.pending))];
}

void unsettled_window::release(std::unique_ptr<chunk>& c) noexcept {
    if (c && !spare_) {
        c->pending = 0;
        spare_ = std::move(c);
    }
    c.reset();
}

void unsettled_window::trim() noexcept {
    // The front is the oldest pending chunk, or the newest one (maybe empty).
    while (!chunks_.empty() && (!chunks_.front() || (chunks_.front()->pending == 0 && chunks_.size() > 1))) {
        release(chunks_.front());
        chunks_.pop_front();
        ++first_;
    }
}

}  // namespace tarry::detail
