// The method codec: every method round-trips with every argument set,
// packed bits in every combination, golden bytes worked out by hand from the
// spec, and every way a payload can be wrong.
#include "tarry/amqp/wire/methods.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace wire = tarry::amqp::wire;
using wire::errc;
using wire::method;
using wire::wire_type;
using bytes = std::vector<std::uint8_t>;

namespace {

// ---- helpers --------------------------------------------------------------

bytes encode(const method& m) {
    bytes out;
    wire::byte_writer w(out);
    wire::encode_method(w, m);
    REQUIRE_MESSAGE(w.ok(), w.detail());
    return out;
}

// Bytes from a mix of octets and strings, e.g. b({0x00, 0x32}, "jobs").
bytes b(std::initializer_list<int> octets) {
    bytes out;
    for (int o : octets) out.push_back(static_cast<std::uint8_t>(o));
    return out;
}
bytes operator+(bytes a, const bytes& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
}
bytes operator+(bytes a, std::string_view s) {
    a.insert(a.end(), s.begin(), s.end());
    return a;
}

// Sets argument number k of m to a value different from its default (a
// string gets the argument's name, so a swapped pair of arguments shows).
template <wire_type T, class S>
void set_non_default(S& m, const wire::method_field<T, S>& f, unsigned k) {
    auto& v = m.*f.member;
    const auto def = S{}.*f.member;
    if constexpr (T == wire_type::bit) v = !def;
    else if constexpr (T == wire_type::octet) v = static_cast<std::uint8_t>(def ^ (0xA0u + k));
    else if constexpr (T == wire_type::short_) v = static_cast<std::uint16_t>(def ^ (0xBE00u + k));
    else if constexpr (T == wire_type::long_) v = def ^ (0xDEAD0000u + k);
    else if constexpr (T == wire_type::longlong || T == wire_type::timestamp)
        v = def ^ (0x0102030405060000ull + k);
    else if constexpr (T == wire_type::shortstr) v = def + std::string(f.name);
    else if constexpr (T == wire_type::longstr) v = def + std::string("\0long ", 6) + std::string(f.name);
    else if constexpr (T == wire_type::table)
        v = wire::field_table{{"arg", static_cast<std::int32_t>(k)},
                              {"name", std::string(f.name)},
                              {"nested", wire::field_table{{"deep", true}}}};
    CHECK_MESSAGE(v != def, S::name, " argument ", f.name, " kept its default");
}

template <class M>
M all_set() {
    M m{};
    unsigned k = 0;
    std::apply([&](const auto&... f) { (set_non_default(m, f, k++), ...); }, M::fields());
    return m;
}

// Sets the bit arguments of m from `mask`, first bit argument = bit 0.
template <class M>
void set_bits(M& m, unsigned mask) {
    unsigned i = 0;
    auto one = [&]<wire_type T>(const wire::method_field<T, M>& f) {
        if constexpr (T == wire_type::bit) m.*f.member = ((mask >> i++) & 1u) != 0;
    };
    std::apply([&](const auto&... f) { (one(f), ...); }, M::fields());
}

template <class M>
unsigned bit_count() {
    unsigned n = 0;
    std::apply([&](const auto&... f) { ((n += f.type == wire_type::bit ? 1u : 0u), ...); },
               M::fields());
    return n;
}

// Calls fn.template operator()<M>() for every alternative M of `method`.
template <class Fn>
void for_each_method(Fn&& fn) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (fn.template operator()<std::variant_alternative_t<I, method>>(), ...);
    }(std::make_index_sequence<std::variant_size_v<method>>{});
}

std::error_code decode(const bytes& in, method& out, std::string* detail = nullptr,
                       const wire::table_limits& limits = {}) {
    return wire::decode_method(in, out, detail, limits);
}

// Golden bytes both ways: encoding m gives `expected`, decoding it gives m.
void check_golden(const method& m, const bytes& expected) {
    INFO(wire::method_name(m));
    CHECK(encode(m) == expected);
    method back;
    std::string detail;
    CHECK_MESSAGE(!decode(expected, back, &detail), detail);
    CHECK(back == m);
}

}  // namespace

// ---- round trips ----------------------------------------------------------

TEST_CASE("every method round-trips with every argument set") {
    std::size_t methods = 0;
    for_each_method([&]<class M>() {
        INFO(M::name);
        const method in = all_set<M>();
        const bytes payload = encode(in);
        method out;
        std::string detail;
        CHECK_MESSAGE(!decode(payload, out, &detail), detail);
        CHECK(std::holds_alternative<M>(out));
        CHECK(out == in);
        CHECK(wire::method_name(out) == M::name);
        ++methods;
    });
    CHECK(methods == std::variant_size_v<method>);
}

TEST_CASE("every method round-trips with default values") {
    for_each_method([&]<class M>() {
        INFO(M::name);
        const method in = M{};
        method out = wire::basic_ack{.delivery_tag = 9};
        CHECK(!decode(encode(in), out));
        CHECK(out == in);
    });
}

TEST_CASE("packed bits: every combination of every method's bits") {
    std::size_t methods_with_bits = 0;
    for_each_method([&]<class M>() {
        const unsigned n = bit_count<M>();
        if (n == 0) return;
        ++methods_with_bits;
        REQUIRE(n <= 8);  // one octet; all methods of 0-9-1 have at most 5
        INFO(M::name);

        // The octet the bits share: the one byte where all-clear and
        // all-set encodings differ.
        M base = all_set<M>();
        set_bits(base, 0);
        M full = base;
        set_bits(full, (1u << n) - 1);
        const bytes clear_bytes = encode(base);
        const bytes full_bytes = encode(full);
        REQUIRE(clear_bytes.size() == full_bytes.size());
        std::size_t at = clear_bytes.size();
        for (std::size_t i = 0; i < clear_bytes.size(); ++i) {
            if (clear_bytes[i] != full_bytes[i]) {
                CHECK(at == clear_bytes.size());  // only one byte differs
                at = i;
            }
        }
        REQUIRE(at < clear_bytes.size());

        for (unsigned mask = 0; mask < (1u << n); ++mask) {
            CAPTURE(mask);
            M m = base;
            set_bits(m, mask);
            bytes expected = clear_bytes;
            expected[at] = static_cast<std::uint8_t>(mask);  // first bit = least significant
            const bytes got = encode(m);
            CHECK(got == expected);
            method out;
            CHECK(!decode(got, out));
            CHECK(out == method{m});
        }
    });
    CHECK(methods_with_bits >= 20);
}

TEST_CASE("unused bits of a bit octet are ignored") {
    // queue.declare with durable and bits 5..7 set (0xE2).
    const bytes in = b({0x00, 0x32, 0x00, 0x0A, 0x00, 0x00, 0x00, 0xE2, 0, 0, 0, 0});
    method out;
    REQUIRE(!decode(in, out));
    CHECK(out == method{wire::queue_declare{.durable = true}});
}

TEST_CASE("a shortstr of 255 bytes round-trips") {
    const method in = wire::basic_publish{.routing_key = std::string(255, 'k')};
    const bytes payload = encode(in);
    CHECK(payload.size() == 4 + 2 + 1 + 1 + 255 + 1);
    method out;
    CHECK(!decode(payload, out));
    CHECK(out == in);
}

// ---- golden bytes, worked out by hand from the spec -----------------------

TEST_CASE("golden: queue.declare durable only") {
    // 50.10, ticket 0, "jobs", bits: passive 0x01 durable 0x02 exclusive
    // 0x04 auto-delete 0x08 no-wait 0x10, empty table.
    check_golden(wire::queue_declare{.queue = "jobs", .durable = true},
                 b({0x00, 0x32, 0x00, 0x0A, 0x00, 0x00, 0x04}) + "jobs" +
                     b({0x02, 0x00, 0x00, 0x00, 0x00}));
}

TEST_CASE("golden: queue.declare with an x-message-ttl argument") {
    // table: u32 length 19 = shortstr "x-message-ttl" (1 + 13) + 'I' + int32.
    check_golden(
        wire::queue_declare{.queue = "jobs",
                            .durable = true,
                            .auto_delete = true,
                            .arguments = {{"x-message-ttl", std::int32_t{60000}}}},
        b({0x00, 0x32, 0x00, 0x0A, 0x00, 0x00, 0x04}) + "jobs" +
            b({0x0A, 0x00, 0x00, 0x00, 0x13, 0x0D}) + "x-message-ttl" +
            b({'I', 0x00, 0x00, 0xEA, 0x60}));
}

TEST_CASE("golden: connection.tune-ok") {
    // 10.31, channel-max 2047, frame-max 131072, heartbeat 60.
    check_golden(
        wire::connection_tune_ok{.channel_max = 2047, .frame_max = 131072, .heartbeat = 60},
        b({0x00, 0x0A, 0x00, 0x1F, 0x07, 0xFF, 0x00, 0x02, 0x00, 0x00, 0x00, 0x3C}));
}

TEST_CASE("golden: connection.start-ok with PLAIN") {
    // 10.11, empty table, shortstr "PLAIN", longstr "\0guest\0guest", shortstr "en_US".
    check_golden(wire::connection_start_ok{.response = std::string("\0guest\0guest", 12)},
                 b({0x00, 0x0A, 0x00, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x05}) + "PLAIN" +
                     b({0x00, 0x00, 0x00, 0x0C, 0x00}) + "guest" + b({0x00}) + "guest" +
                     b({0x05}) + "en_US");
}

TEST_CASE("golden: connection.open and its reserved arguments") {
    // 10.40, "/", reserved shortstr "", reserved bit 0.
    check_golden(wire::connection_open{},
                 b({0x00, 0x0A, 0x00, 0x28, 0x01, '/', 0x00, 0x00}));
}

TEST_CASE("golden: connection.close and channel.close") {
    // reply-code 320, "bye", failing class 60 method 40 (basic.publish).
    const bytes args = b({0x01, 0x40, 0x03}) + "bye" + b({0x00, 0x3C, 0x00, 0x28});
    check_golden(wire::connection_close{.reply_code = 320,
                                        .reply_text = "bye",
                                        .failing_class_id = 60,
                                        .failing_method_id = 40},
                 b({0x00, 0x0A, 0x00, 0x32}) + args);
    check_golden(wire::channel_close{.reply_code = 320,
                                     .reply_text = "bye",
                                     .failing_class_id = 60,
                                     .failing_method_id = 40},
                 b({0x00, 0x14, 0x00, 0x28}) + args);
}

TEST_CASE("golden: basic.consume with no-ack and exclusive") {
    // 60.20, ticket 0, "q", "c", bits: no-local 0x01 no-ack 0x02
    // exclusive 0x04 no-wait 0x08, empty table.
    check_golden(
        wire::basic_consume{.queue = "q", .consumer_tag = "c", .no_ack = true, .exclusive = true},
        b({0x00, 0x3C, 0x00, 0x14, 0x00, 0x00, 0x01, 'q', 0x01, 'c', 0x06, 0, 0, 0, 0}));
}

TEST_CASE("golden: basic.publish mandatory to the default exchange") {
    check_golden(wire::basic_publish{.routing_key = "jobs", .mandatory = true},
                 b({0x00, 0x3C, 0x00, 0x28, 0x00, 0x00, 0x00, 0x04}) + "jobs" + b({0x01}));
}

TEST_CASE("golden: basic.deliver") {
    // consumer-tag "ctag", delivery-tag 2^32 + 1, redelivered, "ex", "rk".
    check_golden(wire::basic_deliver{.consumer_tag = "ctag",
                                     .delivery_tag = 0x1'0000'0001ull,
                                     .redelivered = true,
                                     .exchange = "ex",
                                     .routing_key = "rk"},
                 b({0x00, 0x3C, 0x00, 0x3C, 0x04}) + "ctag" +
                     b({0, 0, 0, 1, 0, 0, 0, 1, 0x01, 0x02}) + "ex" + b({0x02}) + "rk");
}

TEST_CASE("golden: basic.nack multiple and requeue") {
    check_golden(wire::basic_nack{.delivery_tag = 0x0102030405060708ull,
                                  .multiple = true,
                                  .requeue = true},
                 b({0x00, 0x3C, 0x00, 0x78, 1, 2, 3, 4, 5, 6, 7, 8, 0x03}));
}

TEST_CASE("golden: ids people get wrong") {
    check_golden(wire::exchange_unbind_ok{}, b({0x00, 0x28, 0x00, 0x33}));
    check_golden(wire::connection_blocked{.reason = "low"},
                 b({0x00, 0x0A, 0x00, 0x3C, 0x03}) + "low");
    check_golden(wire::connection_unblocked{}, b({0x00, 0x0A, 0x00, 0x3D}));
    check_golden(wire::connection_update_secret{.new_secret = "t", .reason = "r"},
                 b({0x00, 0x0A, 0x00, 0x46, 0, 0, 0, 1, 't', 1, 'r'}));
    check_golden(wire::connection_update_secret_ok{}, b({0x00, 0x0A, 0x00, 0x47}));
    check_golden(wire::confirm_select{.nowait = true}, b({0x00, 0x55, 0x00, 0x0A, 0x01}));
    check_golden(wire::confirm_select_ok{}, b({0x00, 0x55, 0x00, 0x0B}));
}

// ---- errors ---------------------------------------------------------------

TEST_CASE("every truncation of every method fails with truncated") {
    for_each_method([&]<class M>() {
        INFO(M::name);
        const bytes whole = encode(all_set<M>());
        for (std::size_t n = 0; n < whole.size(); ++n) {
            CAPTURE(n);
            const bytes cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
            method out;
            std::string detail;
            CHECK(decode(cut, out, &detail) == errc::truncated);
            if (n < 4) {
                CHECK(detail.find("class-id and method-id") != std::string::npos);
            } else {
                // "<method> argument '<name>': ..."
                CHECK(detail.starts_with(std::string(M::name) + " argument '"));
            }
        }
    });
}

TEST_CASE("truncation detail names the argument") {
    // basic.deliver whose consumer tag claims 9 bytes but has 3.
    const bytes in = b({0x00, 0x3C, 0x00, 0x3C, 0x09}) + "abc";
    method out;
    std::string detail;
    CHECK(decode(in, out, &detail) == errc::truncated);
    CHECK(detail.starts_with("basic.deliver argument 'consumer-tag': "));
}

TEST_CASE("every method with a byte left over fails with trailing_bytes") {
    for_each_method([&]<class M>() {
        INFO(M::name);
        const bytes longer = encode(all_set<M>()) + b({0x00});
        method out;
        std::string detail;
        CHECK(decode(longer, out, &detail) == errc::trailing_bytes);
        CHECK(detail == std::string(M::name) + ": 1 byte after the last argument");
    });
    method out;
    std::string detail;
    CHECK(decode(encode(wire::tx_select{}) + b({1, 2, 3}), out, &detail) == errc::trailing_bytes);
    CHECK(detail == "tx.select: 3 bytes after the last argument");
}

TEST_CASE("unknown class or method ids") {
    struct ids {
        std::uint16_t class_id, method_id;
    };
    for (const ids& k : {ids{60, 99}, ids{0, 0}, ids{10, 12}, ids{30, 10} /* 0-8 access */,
                         ids{40, 41}, ids{50, 60}, ids{60, 121}, ids{85, 20}, ids{90, 40},
                         ids{65535, 65535}}) {
        const bytes in = b({k.class_id >> 8, k.class_id & 0xFF, k.method_id >> 8,
                            k.method_id & 0xFF, 0x00, 0x01});
        method out;
        std::string detail;
        CHECK(decode(in, out, &detail) == errc::unknown_method);
        CHECK(detail == "class " + std::to_string(k.class_id) + " method " +
                            std::to_string(k.method_id));
    }
}

TEST_CASE("detail is optional and left alone on success") {
    method out;
    CHECK(decode(b({0x00}), out) == errc::truncated);
    std::string detail = "untouched";
    CHECK(!decode(encode(wire::basic_qos_ok{}), out, &detail));
    CHECK(detail == "untouched");
}

TEST_CASE("a bad field table inside a method fails with its table error") {
    // queue.declare whose arguments hold a 'Z' value.
    const bytes in = b({0x00, 0x32, 0x00, 0x0A, 0x00, 0x00, 0x01, 'q', 0x00, 0, 0, 0, 3, 1,
                        'a', 'Z'});
    method out;
    std::string detail;
    CHECK(decode(in, out, &detail) == errc::bad_field_type);
    CHECK(detail.starts_with("queue.declare argument 'arguments': "));
}

TEST_CASE("table limits reach the field table decoder") {
    const method in = wire::connection_start{
        .server_properties = {{"capabilities", wire::field_table{{"basic.nack", true}}}}};
    const bytes payload = encode(in);
    method out;
    CHECK(!decode(payload, out));
    std::string detail;
    CHECK(decode(payload, out, &detail, wire::table_limits{.max_depth = 1}) ==
          errc::table_too_deep);
    CHECK(detail.starts_with("connection.start argument 'server-properties': "));
    CHECK(decode(payload, out, &detail, wire::table_limits{.max_bytes = 8}) ==
          errc::table_too_large);
}

TEST_CASE("every shortstr argument over 255 bytes fails to encode") {
    std::size_t checked = 0;
    for_each_method([&]<class M>() {
        auto one = [&]<wire_type T>(const wire::method_field<T, M>& f) {
            if constexpr (T == wire_type::shortstr) {
                INFO(M::name, " ", f.name);
                M m = all_set<M>();
                m.*f.member = std::string(256, 'x');
                bytes out;
                wire::byte_writer w(out);
                wire::encode_method(w, m);
                CHECK(w.error() == errc::string_too_long);
                CHECK(w.detail() == std::string(M::name) + " argument '" + std::string(f.name) +
                                        "': shortstr of 256 bytes (at most 255)");
                ++checked;
            }
        };
        std::apply([&](const auto&... f) { (one(f), ...); }, M::fields());
    });
    CHECK(checked >= 40);
}

TEST_CASE("a table key over 255 bytes fails to encode") {
    bytes out;
    wire::byte_writer w(out);
    wire::encode_method(w, wire::queue_declare{.arguments = {{std::string(256, 'k'), true}}});
    CHECK(w.error() == errc::string_too_long);
}

// ---- catalog and names ----------------------------------------------------

TEST_CASE("catalog: one entry per alternative, ascending ids, unique names") {
    const auto catalog = wire::method_catalog();
    REQUIRE(catalog.size() == std::variant_size_v<method>);
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < catalog.size(); ++i) {
        const auto& info = catalog[i];
        INFO(info.name);
        CHECK(names.insert(info.name).second);
        if (i > 0) {
            const auto& prev = catalog[i - 1];
            CHECK((prev.class_id < info.class_id ||
                   (prev.class_id == info.class_id && prev.method_id < info.method_id)));
        }
        CHECK(wire::find_method(info.class_id, info.method_id) == &info);
    }
    CHECK(wire::find_method(60, 99) == nullptr);
    CHECK(wire::find_method(0, 0) == nullptr);
    CHECK(wire::find_method(65535, 65535) == nullptr);
}

TEST_CASE("catalog entries match the structs") {
    std::size_t i = 0;
    for_each_method([&]<class M>() {
        const auto& info = wire::method_catalog()[i++];
        INFO(M::name);
        CHECK(info.class_id == M::class_id);
        CHECK(info.method_id == M::method_id);
        CHECK(info.name == M::name);
        CHECK(info.has_content == M::has_content);
        CHECK(info.arguments.size() == std::tuple_size_v<decltype(M::fields())>);
        CHECK(&wire::info_of(method{M{}}) == &info);
    });
}

TEST_CASE("content follows exactly publish, return, deliver and get-ok") {
    std::set<std::string_view> with_content;
    for (const auto& info : wire::method_catalog())
        if (info.has_content) with_content.insert(info.name);
    CHECK(with_content == std::set<std::string_view>{"basic.publish", "basic.return",
                                                     "basic.deliver", "basic.get-ok"});
}

TEST_CASE("names for logs") {
    CHECK(wire::method_name(wire::basic_deliver{}) == "basic.deliver");
    CHECK(wire::method_name(wire::exchange_unbind_ok{}) == "exchange.unbind-ok");
    // The failing method of a close, by its ids.
    const wire::channel_close close{.reply_code = 404, .failing_class_id = 60,
                                    .failing_method_id = 40};
    const auto* failing = wire::find_method(close.failing_class_id, close.failing_method_id);
    REQUIRE(failing != nullptr);
    CHECK(failing->name == "basic.publish");
    CHECK(wire::to_string(wire_type::short_) == "short");
    CHECK(wire::to_string(wire_type::longlong) == "longlong");
}
