// The keys of the control layer's expiring table: packed texts at dense
// positions 0 .. size()-1, found by an open-addressed index of 4 bytes a
// slot (kept at most 3/4 full, and shrunk when an eighth full), with the
// text_pool their long parts share. About 28 bytes a key with its index.
//
// Promises: find() gives the position of a key kept and not erased;
// erase_swap(p) moves the last key to p (the owner moves its parallel
// values the same way), so positions stay dense. Not thread-safe.
#pragma once

#include "tarry/control/packed_text.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tarry::control::detail {

/// Packed keys at dense positions with their index (see this header's
/// opening comment). Not thread-safe; a value.
class packed_keys {
public:
    /// The position of `key`, when it is kept.
    std::optional<std::size_t> find(std::string_view key) const;
    /// The position of `key`, kept first (at size() - 1) when it was not;
    /// whether it was inserted. One look at the text either way.
    std::pair<std::size_t, bool> find_or_insert(std::string_view key);
    /// Lets go of the key at `position` (< size()): the last key moves there.
    void erase_swap(std::size_t position) noexcept;
    /// Writes the key at `position` into `out`.
    void key_at(std::size_t position, std::string& out) const { unpack(keys_[position], pool_, out); }
    /// Keys kept.
    std::size_t size() const noexcept { return keys_.size(); }
    /// The pool the keys' long parts are in; the owner may pack values in it.
    text_pool& pool() noexcept { return pool_; }
    /// The same, to read.
    const text_pool& pool() const noexcept { return pool_; }

private:
    std::size_t home(const packed_text& k) const noexcept;
    std::optional<std::size_t> slot_of(const packed_text& k) const noexcept;
    void place(std::uint32_t position_plus_one) noexcept;
    void push(const packed_text& k);
    void resize_index(std::size_t slots);

    text_pool pool_;
    std::deque<packed_text> keys_;
    std::vector<std::uint32_t> index_;  // position + 1; 0 is a free slot
};

}  // namespace tarry::control::detail
