// Field tables and arrays: the members of field_table and the codec.
//
// Decoding reads each table or array through a child byte_reader bounded by
// the table's own byte length, so a value can never run past its table.
// Every allocation follows bytes that are already known to be present: a
// string or byte array is copied from a view the reader has bounds-checked,
// and containers grow one decoded element at a time (no reserve from a
// length field). Recursion depth is capped by table_limits::max_depth.
#include "tarry/amqp/wire/field_table.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>

namespace tarry::amqp::wire {

// ---- field_table members --------------------------------------------------

field_table::field_table(std::initializer_list<field_entry> entries) : entries_(entries) {}

const field_value* field_table::find(std::string_view name) const noexcept {
    for (const auto& e : entries_)
        if (e.name == name) return &e.value;
    return nullptr;
}

field_value* field_table::find(std::string_view name) noexcept {
    for (auto& e : entries_)
        if (e.name == name) return &e.value;
    return nullptr;
}

void field_table::set(std::string name, field_value value) {
    if (field_value* existing = find(name)) {
        *existing = std::move(value);
        return;
    }
    entries_.push_back(field_entry{std::move(name), std::move(value)});
}

std::size_t field_table::erase(std::string_view name) {
    return std::erase_if(entries_, [name](const field_entry& e) { return e.name == name; });
}

bool operator==(const field_table& a, const field_table& b) { return a.entries_ == b.entries_; }

// ---- tags -----------------------------------------------------------------

namespace {

// Indexed by the variant alternative; must follow field_value::variant_type.
constexpr char tags[] = {'V', 't', 'b', 'B', 's', 'u', 'I', 'i', 'l',
                         'f', 'd', 'D', 'S', 'T', 'A', 'F', 'x'};
static_assert(sizeof tags == std::variant_size_v<field_value::variant_type>,
              "one tag per field_value alternative");

// A tag as a person reads it: 'Z' (0x5a), or just (0x00) when not printable.
std::string describe_tag(std::uint8_t tag) {
    char buf[24];
    if (tag >= 0x20 && tag < 0x7f)
        std::snprintf(buf, sizeof buf, "'%c' (0x%02x)", static_cast<char>(tag), tag);
    else
        std::snprintf(buf, sizeof buf, "0x%02x", tag);
    return buf;
}

}  // namespace

char field_tag(const field_value& v) noexcept { return tags[v.value.index()]; }

std::optional<std::int64_t> integer_of(const field_value& v) noexcept {
    return std::visit(
        [](const auto& x) -> std::optional<std::int64_t> {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
                static_assert(sizeof(T) < sizeof(std::int64_t) || std::is_signed_v<T>, "every integer fits");
                return static_cast<std::int64_t>(x);
            } else {
                return std::nullopt;
            }
        },
        v.value);
}

// ---- encoding -------------------------------------------------------------

namespace {

// Patches the u32 length slot at `at` with the bytes written since, or fails
// the writer when they do not fit in 32 bits.
void finish_length(byte_writer& w, std::size_t at, const char* what) {
    const std::size_t n = w.size() - at - 4;
    if (n > std::numeric_limits<std::uint32_t>::max()) {
        w.fail(errc::table_too_large, std::string(what) + " over 4 GiB");
        return;
    }
    w.patch_u32(at, static_cast<std::uint32_t>(n));
}

struct value_encoder {
    byte_writer& w;

    void operator()(const void_value&) const {}
    void operator()(bool v) const { w.u8(v ? 1 : 0); }
    void operator()(std::int8_t v) const { w.i8(v); }
    void operator()(std::uint8_t v) const { w.u8(v); }
    void operator()(std::int16_t v) const { w.i16(v); }
    void operator()(std::uint16_t v) const { w.u16(v); }
    void operator()(std::int32_t v) const { w.i32(v); }
    void operator()(std::uint32_t v) const { w.u32(v); }
    void operator()(std::int64_t v) const { w.i64(v); }
    void operator()(float v) const { w.f32(v); }
    void operator()(double v) const { w.f64(v); }
    void operator()(const decimal_value& v) const {
        w.u8(v.scale);
        w.u32(v.value);
    }
    void operator()(const std::string& v) const { w.longstr(v); }
    void operator()(const timestamp_value& v) const { w.u64(v.seconds); }
    void operator()(const field_array& v) const { encode_array(w, v); }
    void operator()(const field_table& v) const { encode_table(w, v); }
    void operator()(const byte_array& v) const {
        if (v.bytes.size() > std::numeric_limits<std::uint32_t>::max()) {
            w.fail(errc::string_too_long, "byte array over 4 GiB");
            return;
        }
        w.u32(static_cast<std::uint32_t>(v.bytes.size()));
        w.bytes(std::span<const std::uint8_t>(v.bytes));
    }
};

}  // namespace

void encode_field_value(byte_writer& w, const field_value& v) {
    w.u8(static_cast<std::uint8_t>(field_tag(v)));
    std::visit(value_encoder{w}, v.value);
}

void encode_table(byte_writer& w, const field_table& t) {
    const std::size_t at = w.reserve_u32();
    for (const auto& e : t.entries()) {
        if (e.name.size() > 255) {
            w.fail(errc::string_too_long, "field name of " + std::to_string(e.name.size()) +
                                              " bytes (at most 255)");
            return;
        }
        w.shortstr(e.name);
        encode_field_value(w, e.value);
    }
    finish_length(w, at, "field table");
}

void encode_array(byte_writer& w, const field_array& a) {
    const std::size_t at = w.reserve_u32();
    for (const auto& v : a) encode_field_value(w, v);
    finish_length(w, at, "field array");
}

// ---- decoding -------------------------------------------------------------

namespace {

// The errc a child reader failed with (a reader only ever records an errc).
errc code_of(const byte_reader& r) noexcept { return static_cast<errc>(r.error().value()); }

class decoder {
public:
    explicit decoder(const table_limits& limits) : limits_(limits) {}

    // Reads a u32 byte length and points `body` at exactly that many bytes;
    // or fails `r` (too deep, too large, truncated) and returns false.
    bool open(byte_reader& r, std::size_t depth, const char* what, byte_reader& body) {
        if (depth > limits_.max_depth) {
            r.fail(errc::table_too_deep, std::string(what) + " nested deeper than " +
                                             std::to_string(limits_.max_depth));
            return false;
        }
        const std::uint32_t len = r.u32();
        if (!r.ok()) return false;
        if (len > limits_.max_bytes) {
            r.fail(errc::table_too_large, std::string(what) + " of " + std::to_string(len) +
                                              " bytes (limit " +
                                              std::to_string(limits_.max_bytes) + ")");
            return false;
        }
        if (len > r.remaining()) {
            r.fail(errc::truncated, std::string(what) + " of " + std::to_string(len) +
                                        " bytes, have " + std::to_string(r.remaining()));
            return false;
        }
        body = byte_reader(r.bytes(len));
        return true;
    }

    field_table table(byte_reader& r, std::size_t depth) {
        field_table out;
        byte_reader body({});
        if (!open(r, depth, "field table", body)) return out;
        while (!body.at_end()) {
            std::string name = body.shortstr();
            if (!body.ok()) {
                r.fail(code_of(body), "name of entry " + std::to_string(out.size()) + ": " +
                                          body.detail());
                break;
            }
            field_value v = value(body, depth);
            if (!body.ok()) {
                // Nested failures arrive already prefixed: "field 'a': field 'b': …".
                r.fail(code_of(body), "field '" + name + "': " + body.detail());
                break;
            }
            out.entries().push_back(field_entry{std::move(name), std::move(v)});
        }
        return out;
    }

    field_array array(byte_reader& r, std::size_t depth) {
        field_array out;
        byte_reader body({});
        if (!open(r, depth, "field array", body)) return out;
        while (!body.at_end()) {
            field_value v = value(body, depth);
            if (!body.ok()) {
                r.fail(code_of(body),
                       "array element " + std::to_string(out.size()) + ": " + body.detail());
                break;
            }
            out.push_back(std::move(v));
        }
        return out;
    }

private:
    // Reads one tag + value. `depth` is that of the enclosing table/array.
    field_value value(byte_reader& r, std::size_t depth) {
        const std::uint8_t tag = r.u8();
        if (!r.ok()) return {};
        switch (tag) {
        case 'V': return void_value{};
        case 't': return r.u8() != 0;
        case 'b': return r.i8();
        case 'B': return r.u8();
        case 's': return r.i16();
        case 'u': return r.u16();
        case 'I': return r.i32();
        case 'i': return r.u32();
        case 'l':
        case 'L': return r.i64();
        case 'f': return r.f32();
        case 'd': return r.f64();
        case 'D': {
            decimal_value d;
            d.scale = r.u8();
            d.value = r.u32();
            return d;
        }
        case 'S': return r.longstr();
        case 'T': return timestamp_value{r.u64()};
        case 'A': return array(r, depth + 1);
        case 'F': return table(r, depth + 1);
        case 'x': {
            const std::uint32_t n = r.u32();
            const auto bytes = r.bytes(n);
            return byte_array{std::vector<std::uint8_t>(bytes.begin(), bytes.end())};
        }
        default: break;
        }
        r.fail(errc::bad_field_type, "unknown tag " + describe_tag(tag));
        return {};
    }

    const table_limits& limits_;
};

}  // namespace

field_table decode_table(byte_reader& r, const table_limits& limits) {
    return decoder(limits).table(r, 1);
}

field_array decode_array(byte_reader& r, const table_limits& limits) {
    return decoder(limits).array(r, 1);
}

}  // namespace tarry::amqp::wire
