// Packed keys with an open-addressed index: linear probing, and deletion by
// shifting the probe run back (no tombstones of its own in the index).
#include "tarry/control/packed_keys.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace tarry::control::detail {

namespace {
constexpr std::size_t min_slots = 16;
}  // namespace

std::size_t packed_keys::home(const packed_text& k) const noexcept {
    return static_cast<std::size_t>(hash(k)) & (index_.size() - 1);
}

std::optional<std::size_t> packed_keys::slot_of(const packed_text& k) const noexcept {
    if (index_.empty()) return std::nullopt;
    const auto mask = index_.size() - 1;
    for (auto i = home(k); index_[i] != 0; i = (i + 1) & mask)
        if (keys_[index_[i] - 1] == k) return i;
    return std::nullopt;
}

void packed_keys::place(std::uint32_t position_plus_one) noexcept {
    const auto mask = index_.size() - 1;
    auto i = home(keys_[position_plus_one - 1]);
    while (index_[i] != 0) i = (i + 1) & mask;
    index_[i] = position_plus_one;
}

void packed_keys::resize_index(std::size_t slots) {
    index_.assign(slots, 0);
    index_.shrink_to_fit();
    for (std::size_t p = 0; p < keys_.size(); ++p) place(static_cast<std::uint32_t>(p + 1));
}

std::optional<std::size_t> packed_keys::find(std::string_view key) const {
    const auto k = find_packed(key, pool_);
    if (!k) return std::nullopt;
    const auto slot = slot_of(*k);
    if (!slot) return std::nullopt;
    return index_[*slot] - 1;
}

void packed_keys::push(const packed_text& k) {
    if (keys_.size() >= std::numeric_limits<std::uint32_t>::max() - 1)
        throw std::length_error("packed_keys: too many keys");
    if ((keys_.size() + 1) * 4 > index_.size() * 3) resize_index(std::max(min_slots, index_.size() * 2));
    keys_.push_back(k);
    place(static_cast<std::uint32_t>(keys_.size()));
}

std::pair<std::size_t, bool> packed_keys::find_or_insert(std::string_view key) {
    auto k = find_packed(key, pool_);
    if (k) {
        if (const auto slot = slot_of(*k)) return {index_[*slot] - 1, false};
        retain(*k, pool_);
    } else {
        k = pack(key, pool_);  // its long part is new to the pool
    }
    try {
        push(*k);
    } catch (...) {
        release(*k, pool_);
        throw;
    }
    return {keys_.size() - 1, true};
}

void packed_keys::erase_swap(std::size_t position) noexcept {
    const auto mask = index_.size() - 1;
    // Free the key's slot, shifting back each later slot of the probe run
    // that may move closer to its home.
    auto hole = *slot_of(keys_[position]);
    for (auto j = (hole + 1) & mask; index_[j] != 0; j = (j + 1) & mask) {
        const auto k = home(keys_[index_[j] - 1]);
        const bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
        if (stays) continue;
        index_[hole] = index_[j];
        hole = j;
    }
    index_[hole] = 0;
    release(keys_[position], pool_);
    const auto last = keys_.size() - 1;
    if (position != last) {
        index_[*slot_of(keys_[last])] = static_cast<std::uint32_t>(position + 1);
        keys_[position] = keys_[last];
    }
    keys_.pop_back();
    if (index_.size() > min_slots && keys_.size() * 8 < index_.size()) {
        try {
            resize_index(index_.size() / 2);
        } catch (const std::bad_alloc&) {
            // Keeping the larger index is as good.
        }
    }
}

}  // namespace tarry::control::detail
