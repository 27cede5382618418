// Ids in 20 bytes: the forms of a packed text and the pool of long parts.
#include "tarry/control/packed_text.hpp"

#include <cstring>
#include <stdexcept>

namespace tarry::control::detail {

namespace {

// The form of a tail, in head's low 5 bits: 0 to 16 are a raw tail of that
// many bytes; then 16 bytes read from hex digits, or from a UUID.
constexpr std::uint32_t form_bits = 5;
constexpr std::uint32_t form_mask = (1u << form_bits) - 1;
constexpr std::uint32_t max_raw = 16;
constexpr std::uint32_t form_hex = 17;
constexpr std::uint32_t form_uuid = 18;
constexpr std::uint32_t max_pool_id = (1u << (32 - form_bits)) - 1;
constexpr std::size_t uuid_length = 36;
constexpr char digits[] = "0123456789abcdef";

// The value of each byte as a lower-case hex digit, -1 for any other
// (upper case too: its text would not come back the same).
constexpr std::array<std::int8_t, 256> digit_values = [] {
    std::array<std::int8_t, 256> v{};
    for (auto& d : v) d = -1;
    for (int c = '0'; c <= '9'; ++c) v[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) v[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - 'a' + 10);
    return v;
}();

int digit_value(char c) noexcept { return digit_values[static_cast<unsigned char>(c)]; }

bool is_dash_at(std::size_t i) noexcept { return i == 8 || i == 13 || i == 18 || i == 23; }

// Reads 32 lower-case hex digits of `s` (the dashes of a UUID skipped) into
// `out`; false when one is not.
bool read_hex(std::string_view s, bool uuid, std::array<std::uint8_t, 16>& out) noexcept {
    if (uuid && (s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-')) return false;
    std::size_t i = 0;
    for (auto& byte : out) {
        if (uuid && is_dash_at(i)) ++i;
        const int high = digit_value(s[i]);  // a UUID's dashes fall between pairs
        const int low = digit_value(s[i + 1]);
        if ((high | low) < 0) return false;
        byte = static_cast<std::uint8_t>(high << 4 | low);
        i += 2;
    }
    return true;
}

// A text split into its pooled part (empty: none) and its tail.
struct split_text {
    std::string_view pooled;
    std::uint32_t form = 0;
    std::array<std::uint8_t, 16> tail{};
};

split_text split(std::string_view s) noexcept {
    split_text out;
    if (s.size() == 32 && read_hex(s, false, out.tail)) {
        out.form = form_hex;
        return out;
    }
    if (s.size() == uuid_length && read_hex(s, true, out.tail)) {
        out.form = form_uuid;
        return out;
    }
    out.tail = {};
    std::string_view rest = s;
    if (s.size() > max_raw) {
        const auto at = s.rfind('@');
        const bool short_tail = at != std::string_view::npos && s.size() - at - 1 <= max_raw;
        out.pooled = short_tail ? s.substr(0, at + 1) : s;
        rest = short_tail ? s.substr(at + 1) : std::string_view();
    }
    out.form = static_cast<std::uint32_t>(rest.size());
    if (!rest.empty()) std::memcpy(out.tail.data(), rest.data(), rest.size());
    return out;
}

packed_text packed(std::uint32_t pool_id, const split_text& s) noexcept {
    return packed_text{(pool_id << form_bits) | s.form, s.tail};
}

std::uint64_t mix(std::uint64_t x) noexcept {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

}  // namespace

std::uint32_t text_pool::acquire(std::string_view s) {
    if (const auto it = ids_.find(s); it != ids_.end()) {
        ++entries_[it->second - 1].references;
        return it->second;
    }
    std::uint32_t id = 0;
    if (!free_.empty()) {
        id = free_.back();
        free_.pop_back();
    } else {
        if (entries_.size() >= max_pool_id) throw std::length_error("text_pool: too many long texts");
        entries_.emplace_back();
        id = static_cast<std::uint32_t>(entries_.size());
    }
    auto& e = entries_[id - 1];
    e.text.assign(s);
    e.references = 1;
    ids_.emplace(e.text, id);
    return id;
}

std::uint32_t text_pool::find(std::string_view s) const {
    const auto it = ids_.find(s);
    return it == ids_.end() ? 0 : it->second;
}

void text_pool::release(std::uint32_t id) noexcept {
    auto& e = entries_[id - 1];
    if (--e.references > 0) return;
    ids_.erase(std::string_view(e.text));
    std::string().swap(e.text);
    free_.push_back(id);
}

packed_text pack(std::string_view s, text_pool& pool) {
    const auto parts = split(s);
    return packed(parts.pooled.empty() ? 0 : pool.acquire(parts.pooled), parts);
}

std::optional<packed_text> find_packed(std::string_view s, const text_pool& pool) {
    const auto parts = split(s);
    if (parts.pooled.empty()) return packed(0, parts);
    const auto id = pool.find(parts.pooled);
    if (id == 0) return std::nullopt;
    return packed(id, parts);
}

void unpack(const packed_text& p, const text_pool& pool, std::string& out) {
    const auto id = p.head >> form_bits;
    const auto form = p.head & form_mask;
    out.clear();
    if (id != 0) out.assign(pool.text(id));
    if (form <= max_raw) {
        out.append(reinterpret_cast<const char*>(p.tail.data()), form);
        return;
    }
    for (std::size_t i = 0, n = 0; n < 32; ++i) {
        if (form == form_uuid && is_dash_at(i)) {
            out.push_back('-');
            continue;
        }
        const auto byte = p.tail[n / 2];
        out.push_back(digits[n % 2 == 0 ? byte >> 4 : byte & 0xf]);
        ++n;
    }
}

void retain(const packed_text& p, text_pool& pool) noexcept {
    if (const auto id = p.head >> form_bits; id != 0) pool.retain(id);
}

void release(const packed_text& p, text_pool& pool) noexcept {
    if (const auto id = p.head >> form_bits; id != 0) pool.release(id);
}

std::uint64_t hash(const packed_text& p) noexcept {
    std::uint64_t a = 0, b = 0;
    std::memcpy(&a, p.tail.data(), 8);
    std::memcpy(&b, p.tail.data() + 8, 8);
    return mix(a ^ mix(b ^ mix(p.head)));
}

}  // namespace tarry::control::detail
