// The method codec: one encoder and one decoder that walk a method struct's
// fields(), and the catalog built from the same lists at compile time.
//
// Bits: consecutive bit arguments share one octet, the first in the least
// significant bit; a ninth bit, or any other argument, starts a new octet.
#include "tarry/amqp/wire/methods.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

namespace tarry::amqp::wire {
namespace {

// ---- catalog --------------------------------------------------------------

template <amqp_method M>
constexpr auto make_arguments() {
    return std::apply(
        [](auto... f) {
            return std::array<argument_info, sizeof...(f)>{argument_info{f.name, f.type}...};
        },
        M::fields());
}

template <amqp_method M>
constexpr auto arguments_of = make_arguments<M>();

template <class... Ms>
constexpr auto make_catalog(std::type_identity<std::variant<Ms...>>) {
    return std::array<method_info, sizeof...(Ms)>{method_info{
        Ms::class_id, Ms::method_id, Ms::name, Ms::has_content,
        std::span<const argument_info>(arguments_of<Ms>.data(), arguments_of<Ms>.size())}...};
}

constexpr auto catalog = make_catalog(std::type_identity<method>{});

constexpr bool key_less(const method_info& a, const method_info& b) noexcept {
    return a.class_id != b.class_id ? a.class_id < b.class_id : a.method_id < b.method_id;
}

constexpr bool strictly_ascending() {
    for (std::size_t i = 1; i < catalog.size(); ++i)
        if (!key_less(catalog[i - 1], catalog[i])) return false;
    return true;
}
static_assert(strictly_ascending(),
              "method alternatives must be ordered by (class_id, method_id), each once");

// ---- encoding -------------------------------------------------------------

class field_encoder {
public:
    field_encoder(byte_writer& w, std::string_view method) noexcept : w_(w), method_(method) {}

    template <wire_type T, class S>
    void operator()(const S& s, const method_field<T, S>& f) {
        const auto& v = s.*f.member;
        if constexpr (T == wire_type::bit) {
            if (used_bits_ == 8) flush_bits();
            if (v) bits_ = static_cast<std::uint8_t>(bits_ | (1u << used_bits_));
            ++used_bits_;
        } else {
            flush_bits();
            if constexpr (T == wire_type::octet) w_.u8(v);
            else if constexpr (T == wire_type::short_) w_.u16(v);
            else if constexpr (T == wire_type::long_) w_.u32(v);
            else if constexpr (T == wire_type::longlong || T == wire_type::timestamp) w_.u64(v);
            else if constexpr (T == wire_type::shortstr) shortstr(f.name, v);
            else if constexpr (T == wire_type::longstr) w_.longstr(v);
            else if constexpr (T == wire_type::table) encode_table(w_, v);
            else static_assert(T == wire_type::table, "a wire type without an encoder");
        }
    }

    void flush_bits() {
        if (used_bits_ == 0) return;
        w_.u8(bits_);
        bits_ = 0;
        used_bits_ = 0;
    }

private:
    // Checked here rather than left to the writer so that the detail names
    // the method and argument.
    void shortstr(std::string_view argument, const std::string& v) {
        if (v.size() > 255) {
            w_.fail(errc::string_too_long, std::string(method_) + " argument '" +
                                               std::string(argument) + "': shortstr of " +
                                               std::to_string(v.size()) + " bytes (at most 255)");
            return;
        }
        w_.shortstr(v);
    }

    byte_writer& w_;
    std::string_view method_;
    std::uint8_t bits_ = 0;
    unsigned used_bits_ = 0;
};

// ---- decoding -------------------------------------------------------------

class field_decoder {
public:
    field_decoder(byte_reader& r, const table_limits& limits) noexcept : r_(r), limits_(limits) {}

    template <wire_type T, class S>
    void operator()(S& s, const method_field<T, S>& f) {
        if (!r_.ok()) return;
        auto& v = s.*f.member;
        if constexpr (T == wire_type::bit) {
            if (next_bit_ == 8) {
                bits_ = r_.u8();
                next_bit_ = 0;
            }
            v = ((bits_ >> next_bit_) & 1u) != 0;
            ++next_bit_;
        } else {
            next_bit_ = 8;
            if constexpr (T == wire_type::octet) v = r_.u8();
            else if constexpr (T == wire_type::short_) v = r_.u16();
            else if constexpr (T == wire_type::long_) v = r_.u32();
            else if constexpr (T == wire_type::longlong || T == wire_type::timestamp) v = r_.u64();
            else if constexpr (T == wire_type::shortstr) v = r_.shortstr();
            else if constexpr (T == wire_type::longstr) v = r_.longstr();
            else if constexpr (T == wire_type::table) v = decode_table(r_, limits_);
            else static_assert(T == wire_type::table, "a wire type without a decoder");
        }
        if (!r_.ok()) failed_argument_ = f.name;
    }

    /// The argument being read when the reader failed (empty if none).
    std::string_view failed_argument() const noexcept { return failed_argument_; }

private:
    byte_reader& r_;
    const table_limits& limits_;
    std::uint8_t bits_ = 0;
    unsigned next_bit_ = 8;  // 8: the next bit needs a fresh octet
    std::string_view failed_argument_;
};

// Decodes the arguments of alternative I into `out`; returns the argument
// that failed, if any.
template <std::size_t I>
std::string_view decode_alternative(byte_reader& r, method& out, const table_limits& limits) {
    auto& m = out.emplace<I>();
    field_decoder d(r, limits);
    std::apply([&](const auto&... f) { (d(m, f), ...); }, m.fields());
    return d.failed_argument();
}

using decode_fn = std::string_view (*)(byte_reader&, method&, const table_limits&);

constexpr auto decoders = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<decode_fn, sizeof...(I)>{&decode_alternative<I>...};
}(std::make_index_sequence<std::variant_size_v<method>>{});

std::error_code report(std::error_code ec, std::string* detail, std::string text) {
    if (detail) *detail = std::move(text);
    return ec;
}

}  // namespace

// ---- public API -----------------------------------------------------------

std::span<const method_info> method_catalog() noexcept { return catalog; }

const method_info* find_method(std::uint16_t class_id, std::uint16_t method_id) noexcept {
    const method_info key{class_id, method_id, {}, false, {}};
    const auto* it = std::lower_bound(catalog.begin(), catalog.end(), key, key_less);
    if (it == catalog.end() || it->class_id != class_id || it->method_id != method_id)
        return nullptr;
    return it;
}

const method_info& info_of(const method& m) noexcept { return catalog[m.index()]; }

std::string_view method_name(const method& m) noexcept { return info_of(m).name; }

void encode_method(byte_writer& w, const method& m) {
    std::visit(
        [&w](const auto& value) {
            using M = std::remove_cvref_t<decltype(value)>;
            w.u16(M::class_id);
            w.u16(M::method_id);
            field_encoder e(w, M::name);
            std::apply([&](const auto&... f) { (e(value, f), ...); }, M::fields());
            e.flush_bits();
        },
        m);
}

std::error_code decode_method(std::span<const std::uint8_t> payload, method& out,
                              std::string* detail, const table_limits& limits) {
    byte_reader r(payload);
    const std::uint16_t class_id = r.u16();
    const std::uint16_t method_id = r.u16();
    if (!r.ok())
        return report(errc::truncated, detail,
                      "method payload of " + std::to_string(payload.size()) +
                          " bytes, need 4 for class-id and method-id");

    const method_info* info = find_method(class_id, method_id);
    if (!info)
        return report(errc::unknown_method, detail,
                      "class " + std::to_string(class_id) + " method " +
                          std::to_string(method_id));

    const auto index = static_cast<std::size_t>(info - catalog.data());
    const std::string_view failed = decoders[index](r, out, limits);
    if (!r.ok())
        return report(r.error(), detail,
                      std::string(info->name) + " argument '" + std::string(failed) +
                          "': " + r.detail());
    if (!r.at_end())
        return report(errc::trailing_bytes, detail,
                      std::string(info->name) + ": " + std::to_string(r.remaining()) +
                          (r.remaining() == 1 ? " byte" : " bytes") + " after the last argument");
    return {};
}

}  // namespace tarry::amqp::wire
