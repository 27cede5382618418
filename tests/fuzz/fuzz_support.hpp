// Shared by the fuzz targets: a property check that aborts (so libFuzzer
// and the corpus replay both report it as a crash, with the input), and
// the round-trip properties of the decoders.
//
// Round trip: when a decoder accepts some bytes, encoding the result and
// decoding that must succeed and encode to the same bytes again. Bytes are
// compared rather than values because a NaN double or float in a table
// never equals itself; the first encoding is not compared with the input
// because decoding normalises ('L' is written back as 'l', any non-zero
// bool octet as 1, unused bits of a bit octet as 0).
#pragma once

#include "tarry/amqp/wire/byte_reader.hpp"
#include "tarry/amqp/wire/byte_writer.hpp"
#include "tarry/amqp/wire/field_table.hpp"
#include "tarry/amqp/wire/methods.hpp"
#include "tarry/amqp/wire/properties.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace tarry_fuzz {

namespace wire = tarry::amqp::wire;
using bytes = std::vector<std::uint8_t>;

/// Reports a broken property and aborts: a crash for libFuzzer, which then
/// saves the input; a failed test for the replay.
[[noreturn]] inline void fail(const char* what, const std::string& detail = {}) {
    std::fprintf(stderr, "fuzz property violated: %s%s%s\n", what, detail.empty() ? "" : ": ",
                 detail.c_str());
    std::abort();
}

inline void check(bool ok, const char* what, const std::string& detail = {}) {
    if (!ok) fail(what, detail);
}

/// The same, with the detail made only when the property fails: a target
/// that checks its invariants after every step would otherwise spend much
/// of each execution building strings nobody reads.
template <class MakeDetail>
    requires std::is_invocable_r_v<std::string, MakeDetail>
inline void check(bool ok, const char* what, MakeDetail&& make_detail) {
    if (!ok) fail(what, make_detail());
}

// ---- methods ---------------------------------------------------------------

inline bytes encode(const wire::method& m) {
    bytes out;
    wire::byte_writer w(out);
    wire::encode_method(w, m);
    // Every decoded value is encodable: strings came from fields of the
    // same width, table names from shortstr.
    check(w.ok(), "encode_method of a decoded method", w.detail());
    return out;
}

/// decode_method on `payload`; when it succeeds, checks the round trip and
/// that the method's ids are those of the payload. Returns whether it decoded.
inline bool method_round_trip(std::span<const std::uint8_t> payload,
                              wire::method* decoded = nullptr) {
    wire::method m;
    std::string detail;
    if (wire::decode_method(payload, m, &detail)) return false;
    const auto& info = wire::info_of(m);
    check(payload.size() >= 4 &&
              info.class_id == ((payload[0] << 8) | payload[1]) &&
              info.method_id == ((payload[2] << 8) | payload[3]),
          "decoded method ids differ from the payload's");
    const bytes first = encode(m);
    // Every argument has a fixed width or its own length prefix, so the
    // re-encoding has exactly the payload's length.
    check(first.size() == payload.size(), "re-encoded method length differs",
          std::string(info.name));
    wire::method again;
    const auto ec = wire::decode_method(first, again, &detail);
    check(!ec, "re-encoded method does not decode", detail);
    check(again.index() == m.index(), "re-encoded method decodes as another method");
    check(encode(again) == first, "method re-encoding is not stable", std::string(info.name));
    if (decoded) *decoded = std::move(m);
    return true;
}

// ---- field tables ----------------------------------------------------------

template <class T>
bytes encode_value(const T& t) {
    bytes out;
    wire::byte_writer w(out);
    if constexpr (std::is_same_v<T, wire::field_table>)
        wire::encode_table(w, t);
    else
        wire::encode_array(w, t);
    check(w.ok(), "encoding a decoded table or array", w.detail());
    return out;
}

/// Decodes a table (or array) from the front of `input`; when that succeeds,
/// checks the round trip. Returns whether it decoded.
template <class T>
bool table_round_trip(std::span<const std::uint8_t> input) {
    auto decode = [](wire::byte_reader& r) {
        if constexpr (std::is_same_v<T, wire::field_table>)
            return wire::decode_table(r);
        else
            return wire::decode_array(r);
    };
    wire::byte_reader r(input);
    const T t = decode(r);
    if (!r.ok()) return false;
    const bytes first = encode_value(t);
    check(first.size() == r.position(), "re-encoded table length differs from the bytes read");
    wire::byte_reader r2(first);
    const T again = decode(r2);
    check(r2.ok(), "re-encoded table does not decode", r2.detail());
    check(r2.at_end(), "re-encoded table leaves bytes");
    check(encode_value(again) == first, "table re-encoding is not stable");
    return true;
}

// ---- content headers -------------------------------------------------------

inline bytes encode(const wire::content_header& h) {
    bytes out;
    wire::byte_writer w(out);
    wire::encode_content_header(w, h);
    check(w.ok(), "encode_content_header of a decoded header", w.detail());
    return out;
}

/// decode_content_header on a whole header payload; when it succeeds, checks
/// the round trip. Returns whether it decoded.
inline bool header_round_trip(std::span<const std::uint8_t> payload) {
    wire::byte_reader r(payload);
    const wire::content_header h = wire::decode_content_header(r);
    if (!r.ok()) return false;
    const bytes first = encode(h);
    check(first.size() == payload.size(), "re-encoded content header length differs");
    wire::byte_reader r2(first);
    const wire::content_header again = wire::decode_content_header(r2);
    check(r2.ok(), "re-encoded content header does not decode", r2.detail());
    check(encode(again) == first, "content header re-encoding is not stable");
    return true;
}

}  // namespace tarry_fuzz
