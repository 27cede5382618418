// The control layer's compact form of the ids its tables keep: job ids,
// occurrence ids and copy ids, each in 20 bytes instead of a string. A 32-
// hex-digit id (the publisher's job ids, every copy id) and a canonical
// UUID take 16 bytes of their own; a text of up to 16 bytes is kept as it
// is; a longer one keeps up to 16 bytes after its last '@' (an occurrence's
// nominal time) and shares the rest, interned once in a text_pool (a
// schedule id with its '@'); any other text is interned whole.
//
// Promises: pack() is a function of the text and the pool's contents, one
// form per text, so two packed texts are equal exactly when their texts
// are; unpack() gives the text back. Every pack() takes a reference to
// the pool's entry that release() gives back; an entry lives while it has
// one. Not thread-safe: the table that holds them guards them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tarry::control::detail {

/// Interned texts with reference counts: the long parts of packed texts.
/// Not thread-safe; a value.
class text_pool {
public:
    /// The id (1 or more) of `s`'s entry, made when there is none, with one
    /// reference more. Throws std::length_error past 2^27 - 1 entries.
    std::uint32_t acquire(std::string_view s);
    /// The id of `s`'s entry, without taking a reference; 0 when none.
    std::uint32_t find(std::string_view s) const;
    /// Takes one more reference to entry `id`, which is kept.
    void retain(std::uint32_t id) noexcept { ++entries_[id - 1].references; }
    /// Gives back one reference to entry `id`; the last one frees it.
    void release(std::uint32_t id) noexcept;
    /// The text of entry `id`, valid until it is freed.
    std::string_view text(std::uint32_t id) const noexcept { return entries_[id - 1].text; }
    /// Entries kept.
    std::size_t size() const noexcept { return ids_.size(); }

private:
    struct entry {
        std::string text;
        std::uint32_t references = 0;
    };
    std::deque<entry> entries_;  // by id - 1; a deque, so that ids_' views stay valid
    std::vector<std::uint32_t> free_;
    std::unordered_map<std::string_view, std::uint32_t> ids_;
};

/// A text in 20 bytes (see this header's opening comment); a value whose
/// meaning needs the text_pool it was packed with.
struct packed_text {
    std::uint32_t head = 0;                ///< pool id (27 bits) and the form of the tail (5 bits)
    std::array<std::uint8_t, 16> tail{};   ///< the tail, its unused bytes 0
    /// Equal when the texts are (packed with the same pool).
    friend bool operator==(const packed_text&, const packed_text&) = default;
};

/// Packs `s`, taking a reference to its long part's pool entry, if any.
packed_text pack(std::string_view s, text_pool& pool);
/// The packed form of `s` when its long part (if any) is in `pool`, taking
/// no reference; nothing when it is not (so no table of `pool` holds `s`).
std::optional<packed_text> find_packed(std::string_view s, const text_pool& pool);
/// Writes the text of `p` into `out` (replacing what it held).
void unpack(const packed_text& p, const text_pool& pool, std::string& out);
/// Takes one more reference to the pool entry of `p` (from find_packed()),
/// as pack() would have.
void retain(const packed_text& p, text_pool& pool) noexcept;
/// Gives back the pool reference pack() took.
void release(const packed_text& p, text_pool& pool) noexcept;
/// A hash of `p`, the same for equal packed texts.
std::uint64_t hash(const packed_text& p) noexcept;

}  // namespace tarry::control::detail
