// Writes the seed corpus of the fuzz targets from valid encodings and the
// golden captures, so that fuzzing starts from inputs that reach deep into
// each decoder (and the replay test covers them).
//
//   make_fuzz_corpus SOURCE_ROOT
//
// reads SOURCE_ROOT/tests/data/{pika,pyamqp}-conversation.txt and replaces
// every file named gen-* in SOURCE_ROOT/tests/fuzz/corpus/<target>/. Other
// files there (crash reproducers, inputs kept by hand) are left alone. The
// output is deterministic; rerun it when the codec or the captures change
// and commit the result.
#include "fuzz_core_program.hpp"

#include "tarry/amqp/wire/byte_writer.hpp"
#include "tarry/amqp/wire/field_table.hpp"
#include "tarry/amqp/wire/frame.hpp"
#include "tarry/amqp/wire/frame_parser.hpp"
#include "tarry/amqp/wire/methods.hpp"
#include "tarry/amqp/wire/properties.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace tarry::amqp::wire;
using bytes = std::vector<std::uint8_t>;

// ---- output ----------------------------------------------------------------

class corpus_dir {
public:
    corpus_dir(const fs::path& dir) : dir_(dir) {
        fs::create_directories(dir_);
        for (const auto& e : fs::directory_iterator(dir_))
            if (e.path().filename().string().starts_with("gen-")) fs::remove(e.path());
    }
    // Writes one input unless an identical one was already written.
    void add(const std::string& name, const bytes& data) {
        if (!seen_.insert(data).second) return;
        char prefix[16];
        std::snprintf(prefix, sizeof prefix, "gen-%03zu-", seen_.size());
        std::ofstream out(dir_ / (prefix + name), std::ios::binary);
        out.write(reinterpret_cast<const char*>(data.data()),
                  static_cast<std::streamsize>(data.size()));
        total_ += data.size();
    }
    std::size_t files() const { return seen_.size(); }
    std::size_t total() const { return total_; }

private:
    fs::path dir_;
    std::set<bytes> seen_;
    std::size_t total_ = 0;
};

// ---- captures --------------------------------------------------------------

bytes from_hex(const std::string& s) {
    bytes out;
    for (std::size_t i = 0; i + 1 < s.size(); i += 2)
        out.push_back(static_cast<std::uint8_t>(std::stoi(s.substr(i, 2), nullptr, 16)));
    return out;
}

// The two byte streams of a capture; the client's without its protocol header.
std::pair<bytes, bytes> load_capture(const fs::path& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path.string());
    bytes client, server;
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() < 3 || line[0] == '#') continue;
        const bytes b = from_hex(line.substr(2));
        bytes& to = line[0] == 'C' ? client : server;
        to.insert(to.end(), b.begin(), b.end());
    }
    if (client.size() < protocol_header.size())
        throw std::runtime_error("no protocol header in " + path.string());
    client.erase(client.begin(), client.begin() + protocol_header.size());
    return {client, server};
}

std::vector<frame> frames_of(const bytes& stream) {
    frame_parser p(0);
    p.feed(stream);
    std::vector<frame> out;
    while (auto f = p.next()) out.push_back(f->to_frame());
    if (p.error()) throw std::runtime_error("capture does not parse: " + p.detail());
    return out;
}

// ---- encoders ----------------------------------------------------------------

bytes table_bytes(const field_table& t) {
    bytes out;
    byte_writer w(out);
    encode_table(w, t);
    return out;
}

bytes array_bytes(const field_array& a) {
    bytes out;
    byte_writer w(out);
    encode_array(w, a);
    return out;
}

bytes method_bytes(const method& m) {
    bytes out;
    byte_writer w(out);
    encode_method(w, m);
    return out;
}

bytes frame_bytes(frame_type t, std::uint16_t channel, const bytes& payload) {
    bytes out;
    (void)encode_frame(out, t, channel, payload);
    return out;
}

void append(bytes& to, const bytes& b) { to.insert(to.end(), b.begin(), b.end()); }

// The frame-parser target's input: mode byte, chunk sizes, stream.
bytes parser_input(std::uint8_t mode, const bytes& chunk_sizes, const bytes& stream) {
    bytes out{mode, static_cast<std::uint8_t>(chunk_sizes.size())};
    append(out, chunk_sizes);
    append(out, stream);
    return out;
}

// Every field-value type once, as the headers of a job might carry them.
field_table every_type() {
    return field_table{
        {"void", void_value{}},
        {"bool", true},
        {"i8", std::int8_t{-8}},
        {"u8", std::uint8_t{200}},
        {"i16", std::int16_t{-300}},
        {"u16", std::uint16_t{60000}},
        {"i32", std::int32_t{-70000}},
        {"u32", std::uint32_t{4000000000u}},
        {"i64", std::int64_t{-(std::int64_t{1} << 40)}},
        {"f32", 1.5f},
        {"perform_job_at", 1767225600.25},
        {"dec", decimal_value{2, 12345}},
        {"str", "text"},
        {"ts", timestamp_value{1767225600}},
        {"arr", field_array{std::int32_t{1}, "x", field_array{}, field_table{}}},
        {"tbl", field_table{{"a", std::int32_t{1}}}},
        {"bin", byte_array{{0, 1, 2, 0xff}}},
    };
}

// A table nested `depth` levels deep (1 = a table with no table inside).
field_table nested_tables(std::size_t depth) {
    field_table t{{"leaf", std::int32_t{1}}};
    for (std::size_t i = 1; i < depth; ++i) t = field_table{{"n", std::move(t)}};
    return t;
}

field_array nested_arrays(std::size_t depth) {
    field_array a{std::int32_t{1}};
    for (std::size_t i = 1; i < depth; ++i) a = field_array{std::move(a)};
    return a;
}

// Collects the tables a method or content header carries, recursively.
void collect_tables(const field_table& t, std::vector<field_table>& out) {
    out.push_back(t);
    for (const auto& e : t.entries())
        if (const auto* inner = e.value.get_if<field_table>()) collect_tables(*inner, out);
}

template <class M, class F>
void collect_field(const M& m, const F& f, std::vector<field_table>& out) {
    if constexpr (std::is_same_v<typename F::value_type, field_table>) collect_tables(m.*f.member, out);
}

template <class M>
void collect_method_tables(const M& m, std::vector<field_table>& out) {
    std::apply([&](const auto&... f) { (collect_field(m, f, out), ...); }, M::fields());
}

template <class M>
void add_default(corpus_dir& d) {
    d.add(std::string(M::name), method_bytes(M{}));
}

template <std::size_t... I>
void add_every_method(corpus_dir& d, std::index_sequence<I...>) {
    (add_default<std::variant_alternative_t<I, method>>(d), ...);
}

}  // namespace

// ---- the schedule contract's inputs (fuzz_schedule.cpp) --------------------

namespace schedule_seed {

// byte 0's fields
constexpr std::uint8_t arrival_2026 = 0, arrival_epoch = 1, arrival_1969 = 2, arrival_end = 3;
constexpr std::uint8_t default_1500ms = 1 << 2, default_max = 3 << 2;
constexpr std::uint8_t max_0 = 1 << 4, max_60s = 2 << 4, max_100y = 3 << 4;
constexpr std::uint8_t stamped = 0x40, expiring = 0x80;

bytes input(std::uint8_t mode, std::optional<field_table> headers, std::uint64_t timestamp = 0,
            const std::string& expiration = {}) {
    if (timestamp != 0) mode |= stamped;
    if (!expiration.empty()) mode |= expiring;
    bytes out{mode};
    if (mode & stamped)
        for (int i = 7; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(timestamp >> (8 * i)));
    if (mode & expiring) {
        out.push_back(static_cast<std::uint8_t>(expiration.size()));
        out.insert(out.end(), expiration.begin(), expiration.end());
    }
    if (headers) append(out, table_bytes(*headers));
    return out;
}

field_table at(field_value v) { return field_table{{"perform_job_at", std::move(v)}}; }
field_table delay(field_value v) { return field_table{{"x-delay", std::move(v)}}; }

void write(const fs::path& out_root) {
    corpus_dir d(out_root / "schedule");
    d.add("no-headers", input(arrival_2026, std::nullopt));
    d.add("empty-headers", input(arrival_2026, field_table{}));
    d.add("default-delay-1500ms", input(arrival_2026 | default_1500ms, field_table{{"other", "x"}}));
    d.add("default-delay-too-long", input(arrival_2026 | default_max, std::nullopt));
    d.add("default-delay-at-the-end-of-time", input(arrival_end | default_1500ms, std::nullopt));
    d.add("arrival-before-1970", input(arrival_1969 | default_1500ms, std::nullopt));
    // perform_job_at in every type the contract reads, and those it refuses
    d.add("at-double", input(arrival_2026, at(1767225600.25)));
    d.add("at-double-past", input(arrival_2026, at(1024.5)));
    d.add("at-float", input(arrival_2026, at(1024.5f)));
    d.add("at-i8", input(arrival_2026, at(std::int8_t{100})));
    d.add("at-u8", input(arrival_2026, at(std::uint8_t{200})));
    d.add("at-i16", input(arrival_2026, at(std::int16_t{-3})));
    d.add("at-u16", input(arrival_2026, at(std::uint16_t{60000})));
    d.add("at-i32", input(arrival_2026, at(std::int32_t{1767225600})));
    d.add("at-u32", input(arrival_2026, at(std::uint32_t{4000000000u})));
    d.add("at-i64", input(arrival_2026, at(std::int64_t{1767225600})));
    d.add("at-i64-after-9999", input(arrival_2026, at(std::int64_t{253402300800})));
    d.add("at-i64-after-2262", input(arrival_2026, at(std::int64_t{9223372037})));
    d.add("at-decimal", input(arrival_2026, at(decimal_value{2, 176722525})));
    d.add("at-decimal-scale-31", input(arrival_2026, at(decimal_value{31, 5})));
    d.add("at-timestamp", input(arrival_2026, at(timestamp_value{1767225600})));
    d.add("at-string-number", input(arrival_2026, at("1767225600.0000001")));
    d.add("at-string-minus-zero", input(arrival_2026, at("-0.000")));
    d.add("at-string-negative", input(arrival_2026, at("-1.5")));
    d.add("at-rfc3339-offset", input(arrival_2026, at("2026-01-01T02:00:00.125+02:00")));
    d.add("at-rfc3339-leap-second", input(arrival_2026, at("2016-12-31T23:59:60Z")));
    d.add("at-rfc3339-space-lower", input(arrival_2026, at("2026-01-01 00:00:00.0000001z")));
    d.add("at-rfc3339-before-1970", input(arrival_2026, at("1969-12-31T23:59:59Z")));
    d.add("at-rfc3339-year-9999", input(arrival_2026, at("9999-12-31T23:59:59Z")));
    d.add("at-rfc3339-feb-29-1900", input(arrival_2026, at("1900-02-29T00:00:00Z")));
    d.add("at-text", input(arrival_2026, at("next tuesday")));
    d.add("at-nan", input(arrival_2026, at(std::numeric_limits<double>::quiet_NaN())));
    d.add("at-infinity", input(arrival_2026, at(-std::numeric_limits<double>::infinity())));
    d.add("at-negative", input(arrival_2026, at(-1.5)));
    d.add("at-bool", input(arrival_2026, at(true)));
    d.add("at-void", input(arrival_2026, at(void_value{})));
    d.add("at-table", input(arrival_2026, at(field_table{{"a", std::int32_t{1}}})));
    d.add("at-bytes", input(arrival_2026, at(byte_array{{1, 2}})));
    d.add("at-after-2242", input(arrival_2026, at(9000000000.5)));
    d.add("at-end-of-time", input(arrival_2026, at(9223372036.854775)));
    // x-delay, from arrival and from timestamp
    d.add("delay-i32", input(arrival_2026, delay(std::int32_t{1500})));
    d.add("delay-from-timestamp", input(arrival_2026, delay(std::int64_t{1500}), 1767225500));
    d.add("delay-timestamp-past-latest", input(arrival_2026, delay(std::int64_t{1500}), 300000000000));
    d.add("delay-string", input(arrival_2026, delay("2.5")));
    d.add("delay-double", input(arrival_2026, delay(0.05)));
    d.add("delay-100-years", input(arrival_2026, delay(std::int64_t{3155760000000})));
    d.add("delay-over-100-years", input(arrival_2026, delay(std::int64_t{3155760000001})));
    d.add("delay-past-the-end-of-time", input(arrival_end, delay(std::int64_t{2000})));
    d.add("delay-negative", input(arrival_2026, delay(std::int16_t{-1})));
    d.add("delay-timestamp-type", input(arrival_2026, delay(timestamp_value{5})));
    d.add("delay-rfc3339", input(arrival_2026, delay("2026-01-01T00:00:00Z")));
    d.add("both-bad-at-good-delay", input(arrival_2026, field_table{{"x-delay", std::int32_t{10}},
                                                                     {"perform_job_at", "soon"}}));
    d.add("both-good-at-bad-delay", input(arrival_2026, field_table{{"perform_job_at", std::int64_t{5}},
                                                                     {"x-delay", "soon"}}));
    d.add("at-twice", input(arrival_2026, field_table{{"perform_job_at", std::int64_t{5}},
                                                       {"perform_job_at", "bad"}}));
    d.add("aliases", input(arrival_2026, field_table{{"+", std::int32_t{10}}, {"@", 1767225601.5}}));
    // max_delay, then expiration
    d.add("max-delay-exceeded", input(arrival_2026 | max_60s, delay(std::int32_t{120000})));
    d.add("max-delay-equal", input(arrival_2026 | max_60s, delay(std::int32_t{60000})));
    d.add("max-delay-0-past-due", input(arrival_2026 | max_0, at(std::int64_t{1000})));
    d.add("max-delay-100-years", input(arrival_2026 | max_100y, at("2126-01-01T00:00:00Z")));
    d.add("max-delay-from-arrival-not-timestamp",
          input(arrival_2026 | max_60s, delay(std::int32_t{50000}), 1767225500));
    d.add("expired-before-due", input(arrival_2026, delay(std::int32_t{5000}), 0, "1000"));
    d.add("expires-when-due", input(arrival_epoch, delay(std::int32_t{5000}), 0, "5000"));
    d.add("expired-from-timestamp", input(arrival_2026, delay(std::int32_t{5000}), 1767225590, "1000"));
    d.add("expiration-not-digits", input(arrival_2026, delay(std::int32_t{5000}), 0, "1e3"));
    d.add("expiration-huge", input(arrival_2026, delay(std::int32_t{5000}), 0, "99999999999999999999"));
    d.add("max-delay-before-expiration",
          input(arrival_2026 | max_60s, delay(std::int32_t{120000}), 0, "1"));
    // the other headers of the contract
    d.add("death-headers", input(arrival_2026, field_table{{"x-death", field_array{field_table{}}},
                                                           {"perform_job_at", std::int64_t{1}},
                                                           {"x-first-death-queue", "q"},
                                                           {"x-last-death-reason", "expired"},
                                                           {"x-deaths", "kept"}}));
    d.add("attempt", input(arrival_2026, field_table{{"x-tarry-attempt", std::int64_t{3}}}));
    d.add("attempt-zero", input(arrival_2026, field_table{{"x-tarry-attempt", std::int8_t{0}}}));
    std::printf("schedule: %zu files, %zu bytes\n", d.files(), d.total());
}

}  // namespace schedule_seed

// ---- the consumer core's programs (fuzz_consumer_core.cpp) ------------------

namespace core_seed {

namespace cp = tarry_fuzz::core_program;

// Options (see fuzz_core_program.hpp) and steps.
class program {
public:
    program(std::uint8_t a, std::uint8_t b) : bytes_{a, b} {}
    program& op(cp::op o, std::initializer_list<std::uint8_t> args = {}) {
        bytes_.push_back(o);
        bytes_.insert(bytes_.end(), args);
        return *this;
    }
    /// The usual start: subscribed, then the lane it starts consumes.
    program& subscribe() { return op(cp::subscribed).op(cp::start_consuming, {0}); }
    program& deliver(std::uint8_t kind, std::uint8_t lane = 0, std::uint8_t flags = 0) {
        return op(cp::deliver, {static_cast<std::uint8_t>(lane * 16 + kind), flags});
    }
    program& run(cp::outcome how) { return op(cp::pop).op(cp::finish, {0, how}); }
    program& advance(std::uint8_t index) { return op(cp::advance, {index}); }
    const bytes& data() const { return bytes_; }

private:
    bytes bytes_;
};

// due_offset_ms's kinds
constexpr std::uint8_t due_now = 2, due_1s = 6, due_1999ms = 7, due_2s = 8, due_10s = 10, due_past = 1,
                       due_1h = 11;
// advance_ms's indexes
constexpr std::uint8_t by_1ms = 0, by_200ms = 3, by_500ms = 4, by_999ms = 5, by_1s = 6, by_2s = 7,
                       by_5s = 9, by_30s = 10;

// byte 0: channels 1, max_held 4, max_due_waiting 4 (the defaults here)
constexpr std::uint8_t plain_a = (2 << 2) | (2 << 4);
// byte 1: 3 attempts, consumer_timeout 5 s, confirms within 1 s
constexpr std::uint8_t plain_b = 2;

void write(const fs::path& out_root) {
    corpus_dir d(out_root / "consumer_core");
    d.add("due-now-succeeds", program(plain_a, plain_b).subscribe().deliver(due_now).run(cp::success).data());
    d.add("no-header-and-past-due",
          program(plain_a, plain_b).subscribe().deliver(cp::no_header).deliver(due_past).run(cp::success)
              .run(cp::reject).op(cp::confirm, {0}).data());
    d.add("held-until-due", program(plain_a, plain_b).subscribe().deliver(due_1s).advance(by_999ms)
                                .op(cp::pop).advance(by_1ms).run(cp::success).data());
    d.add("parked-confirmed-and-back",
          program(plain_a, plain_b).subscribe().deliver(due_10s).op(cp::confirm, {0})
              .op(cp::deliver_copy, {0, 0}).advance(by_5s).advance(by_5s).run(cp::success).data());
    d.add("fails-retried-then-succeeds",
          program(plain_a, plain_b).subscribe().deliver(due_now).run(cp::failure).op(cp::confirm, {0})
              .op(cp::deliver_copy, {0, 0}).advance(by_1s).run(cp::success).data());
    d.add("fails-until-dead-lettered",
          program(plain_a, 1).subscribe().deliver(due_now).run(cp::failure_soon).op(cp::confirm, {0})
              .op(cp::deliver_copy, {0, 0}).advance(by_200ms).run(cp::failure).op(cp::confirm, {0}).data());
    d.add("copy-refused-then-given-back",
          program(plain_a, plain_b).subscribe().deliver(due_now).run(cp::failure).op(cp::refuse, {0, 0})
              .op(cp::wake).op(cp::refuse, {0, 0}).op(cp::wake).op(cp::refuse, {0, 0}).op(cp::wake)
              .op(cp::wake).op(cp::wake).data());
    d.add("copy-not-confirmed-in-time-late-confirm",
          program(plain_a, plain_b | (3 << 5)).subscribe().deliver(due_10s).advance(by_200ms).op(cp::tick)
              .op(cp::wake).op(cp::confirm, {0}).op(cp::confirm, {0}).data());
    d.add("header-too-large",
          program(plain_a, plain_b).subscribe().deliver(cp::bad_header).op(cp::refuse, {0, 7})
              .op(cp::confirm, {0}).data());
    d.add("unreadable", program(plain_a, plain_b).subscribe().deliver(cp::unreadable_properties)
                            .deliver(cp::unreadable_body).deliver(cp::x_delay).op(cp::confirm, {1})
                            .op(cp::refuse, {0, 7}).op(cp::confirm, {0}).op(cp::confirm, {0}).data());
    d.add("expired-and-over-max-delay",
          program(plain_a, plain_b | 16).subscribe().deliver(due_1s, 0, cp::short_expiration).deliver(due_1h)
              .op(cp::confirm, {0}).op(cp::confirm, {0}).data());
    d.add("lane-lost-while-running",
          program(plain_a, plain_b).subscribe().deliver(due_now).deliver(due_1s).op(cp::pop)
              .op(cp::lose_lane, {0}).op(cp::finish, {0, cp::success}).op(cp::sweep).op(cp::wake)
              .op(cp::subscribed).op(cp::start_consuming, {0}).deliver(due_now, 0, cp::stale_incarnation)
              .data());
    d.add("connection-lost-while-copy-pending",
          program(plain_a, plain_b).subscribe().deliver(due_now).run(cp::failure).deliver(due_1s)
              .op(cp::lose_connection).op(cp::confirm, {0}).op(cp::sweep).data());
    d.add("stop-gives-back-held",
          program(plain_a, plain_b).subscribe().deliver(due_1s).deliver(due_1999ms).deliver(due_2s)
              .op(cp::stop).op(cp::give_back).deliver(due_now).data());
    d.add("stop-while-starting",
          program(plain_a, plain_b).op(cp::subscribed).op(cp::start_open, {0}).op(cp::stop)
              .op(cp::start_consuming, {0}).deliver(due_now).data());
    d.add("wall-clock-steps-back",
          program(plain_a, plain_b).subscribe().deliver(due_1s).deliver(due_1s).advance(by_1s)
              .op(cp::step_wall, {0}).op(cp::pop).op(cp::finish, {0, 0}).op(cp::pop).op(cp::finish, {0, 0})
              .advance(by_500ms).op(cp::pop).op(cp::step_wall, {1}).op(cp::pop).op(cp::finish, {1, 0})
              .op(cp::confirm, {0}).data());
    d.add("full-displaces-the-latest",
          program(2 << 4, plain_b | 4).subscribe().deliver(due_1999ms).deliver(due_1999ms).deliver(due_1s)
              .deliver(due_1s).op(cp::confirm, {0}).op(cp::confirm, {0}).data());
    d.add("lanes-hand-over",
          program(1 | (2 << 4), plain_b).subscribe().deliver(due_1s).deliver(due_1s).op(cp::start_consuming, {0})
              .deliver(due_1s, 1).deliver(due_1s, 1).op(cp::start_failed, {0}).advance(by_1s).run(cp::success)
              .op(cp::lose_lane, {0}).op(cp::sweep).data());
    d.add("due-backlog-pauses-intake",
          program(plain_a & ~(3 << 4), plain_b).subscribe().deliver(due_now).deliver(due_now).deliver(due_now)
              .run(cp::success).run(cp::success).op(cp::start_consuming, {0}).advance(by_5s).op(cp::tick)
              .data());
    d.add("backlog-given-back-before-timeout",
          program(plain_a | (3 << 4), plain_b).subscribe().deliver(due_now).deliver(due_now).deliver(due_now)
              .advance(by_2s).run(cp::success).advance(by_2s).op(cp::tick).data());
    d.add("delivery-limit",
          program(plain_a | 0x40 | 0x80, plain_b).subscribe().deliver(due_now, 0, 3 << cp::delivery_count_shift)
              .run(cp::requeue).op(cp::confirm, {0}).deliver(due_1s, 0, 3 << cp::delivery_count_shift).op(cp::stop)
              .op(cp::give_back).data());
    d.add("broker-cancels-a-holding-lane",
          program(1 | (3 << 2), plain_b).subscribe().deliver(due_1s).deliver(due_1s).op(cp::broker_cancel, {0})
              .deliver(due_now).advance(by_500ms).op(cp::tick).op(cp::subscribed).op(cp::start_open, {0})
              .op(cp::start_consuming, {0}).deliver(due_now, 1).advance(by_1s).run(cp::success).run(cp::success)
              .op(cp::broker_cancel, {1}).op(cp::stop).op(cp::give_back).data());
    d.add("delivery-limit-renewal-refused",
          program(plain_a | 0x40 | 0x80, plain_b).subscribe().deliver(due_1s, 0, 3 << cp::delivery_count_shift)
              .op(cp::refuse, {0, 0}).advance(by_5s).op(cp::wake).op(cp::refuse, {0, 0}).op(cp::stop)
              .op(cp::give_back).op(cp::confirm, {0}).data());
    d.add("subscribe-failed-then-resubscribed",
          program(plain_a, plain_b).op(cp::subscribe_failed).advance(by_1s).op(cp::tick).op(cp::subscribed)
              .op(cp::start_failed, {0}).op(cp::wake).op(cp::subscribed).op(cp::start_consuming, {0})
              .deliver(due_now).data());
    d.add("retry-time-limit",
          program(plain_a, 3 | 4).subscribe().deliver(due_now, 0, 2 << cp::attempt_shift).run(cp::failure_late)
              .op(cp::confirm, {0}).advance(by_30s).data());
    d.add("cancelled-at-admission",
          program(plain_a, plain_b).subscribe().op(cp::cancel, {0}).op(cp::cancel, {1}).deliver(due_1s)
              .deliver(due_10s).deliver(due_now).run(cp::success).data());
    d.add("cancelled-while-held",
          program(plain_a, plain_b).subscribe().deliver(due_1s).deliver(due_1s).op(cp::cancel, {0})
              .advance(by_1s).run(cp::success).run(cp::success).data());
    d.add("cancelled-while-running",
          program(plain_a, 2).subscribe().deliver(due_now).deliver(due_now).op(cp::pop).op(cp::pop)
              .op(cp::cancel, {0}).op(cp::cancel, {1}).op(cp::finish, {0, cp::failure})
              .op(cp::finish, {0, cp::success}).data());
    d.add("parked-through-the-cascade-and-back",
          program(plain_a | 0x80, plain_b).subscribe().deliver(due_10s).deliver(due_1h).op(cp::confirm, {0})
              .op(cp::deliver_copy, {0, 0}).op(cp::confirm, {0}).advance(by_5s).advance(by_5s).run(cp::success)
              .data());
    std::printf("consumer_core: %zu files, %zu bytes\n", d.files(), d.total());
}

}  // namespace core_seed

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_fuzz_corpus SOURCE_ROOT\n");
        return 2;
    }
    const fs::path root(argv[1]);
    const fs::path out_root = root / "tests" / "fuzz" / "corpus";
    corpus_dir parser_dir(out_root / "frame_parser");
    corpus_dir table_dir(out_root / "field_table");
    corpus_dir method_dir(out_root / "method");

    // ---- from the captures ----
    std::vector<field_table> tables;
    for (const char* name : {"pika", "pyamqp"}) {
        const auto [client, server] =
            load_capture(root / "tests" / "data" / (std::string(name) + "-conversation.txt"));
        for (const auto& [side, stream] : {std::pair{"client", client}, std::pair{"server", server}}) {
            const std::string tag = std::string(name) + "-" + side;
            // The whole stream: in odd chunk sizes, one piece, and (from
            // the handshake frames only) via prepare()/commit() with no limit.
            parser_dir.add(tag + "-stream-chunked", parser_input(0, {6, 99, 200}, stream));
            const auto frames = frames_of(stream);
            bytes handshake;
            for (std::size_t i = 0; i < std::min<std::size_t>(frames.size(), 4); ++i)
                append(handshake, frame_bytes(frames[i].type, frames[i].channel, frames[i].payload));
            parser_dir.add(tag + "-handshake-prepare", parser_input(4 | 3, {}, handshake));

            for (const auto& f : frames) {
                if (f.type == frame_type::method) {
                    method m;
                    if (decode_method(f.payload, m)) continue;
                    method_dir.add(tag + "-" + std::string(method_name(m)), f.payload);
                    std::visit([&](const auto& value) { collect_method_tables(value, tables); },
                               m);
                } else if (f.type == frame_type::header) {
                    byte_reader r(f.payload);
                    const content_header h = decode_content_header(r);
                    if (r.ok() && h.properties.headers) collect_tables(*h.properties.headers, tables);
                }
            }
        }
    }
    for (std::size_t i = 0; i < tables.size(); ++i)
        table_dir.add("capture-table-" + std::to_string(i), table_bytes(tables[i]));

    // ---- tables: every type, limits, and broken ones ----
    const bytes all_types = table_bytes(every_type());
    table_dir.add("every-type", all_types);
    table_dir.add("every-type-array", array_bytes(field_array{every_type(), 1.0, "s"}));
    table_dir.add("empty", table_bytes({}));
    table_dir.add("depth-32", table_bytes(nested_tables(32)));
    table_dir.add("depth-33", table_bytes(nested_tables(33)));
    table_dir.add("array-depth-33", array_bytes(nested_arrays(33)));
    table_dir.add("nan", table_bytes({{"d", std::numeric_limits<double>::quiet_NaN()},
                                      {"f", std::numeric_limits<float>::signaling_NaN()}}));
    table_dir.add("duplicates", table_bytes({{"a", std::int32_t{1}}, {"a", "again"}}));
    {
        bytes l = table_bytes({{"big", std::int64_t{1} << 40}});
        l[4 + 4] = 'L';  // u32 length, shortstr "big", then the tag
        table_dir.add("int64-L", l);
        bytes bad = table_bytes({{"x", std::int32_t{1}}});
        bad[4 + 2] = 'U';  // a tag RabbitMQ rejects
        table_dir.add("bad-tag", bad);
        bytes truncated = all_types;
        truncated.resize(truncated.size() / 2);
        table_dir.add("truncated", truncated);
        bytes too_long = table_bytes({{"x", "y"}});
        too_long[3] = 0xff;  // table length past the input
        table_dir.add("length-past-end", too_long);
        bytes odd_bool = table_bytes({{"t", true}});
        odd_bool.back() = 7;  // any non-zero octet is true
        table_dir.add("bool-7", odd_bool);
    }

    // ---- methods: every one, and broken ones ----
    add_every_method(method_dir, std::make_index_sequence<std::variant_size_v<method>>{});
    method_dir.add("queue.declare-all-bits",
                   method_bytes(queue_declare{.queue = "jobs", .passive = true, .durable = true,
                                              .exclusive = true, .auto_delete = true,
                                              .no_wait = true, .arguments = every_type()}));
    const bytes deliver = method_bytes(basic_deliver{.consumer_tag = "ctag", .delivery_tag = 42,
                                                     .redelivered = true, .exchange = "jobs",
                                                     .routing_key = "job.1"});
    method_dir.add("basic.deliver-set", deliver);
    {
        bytes trailing = deliver;
        trailing.push_back(0);
        method_dir.add("trailing-byte", trailing);
        bytes truncated(deliver.begin(), deliver.end() - 3);
        method_dir.add("truncated", truncated);
        bytes unknown = deliver;
        unknown[3] = 99;
        method_dir.add("unknown-method", unknown);
        bytes bits = method_bytes(basic_nack{.delivery_tag = 1, .multiple = true});
        bits.back() = 0xfe;  // unused bits set
        method_dir.add("basic.nack-unused-bits", bits);
    }

    // ---- frame streams: a consumer's traffic and broken ones ----
    {
        basic_properties props;
        props.content_type = "application/json";
        props.delivery_mode = 2;
        props.message_id = "m-1";
        props.headers = field_table{{"perform_job_at", 1767225600.25},
                                    {"attempt", std::int32_t{2}}};
        bytes stream;
        for (std::uint16_t ch : {std::uint16_t{1}, std::uint16_t{7}}) {
            append(stream, frame_bytes(frame_type::method, ch, deliver));
            const bytes body(300, 'b');
            (void)encode_content(stream, ch, props, body, 4096);
            encode_heartbeat(stream);
        }
        parser_dir.add("deliveries", parser_input(0, {}, stream));
        parser_dir.add("deliveries-1-byte", parser_input(0, {0}, stream));
        bytes big;
        append(big, frame_bytes(frame_type::method, 3, deliver));
        (void)encode_content(big, 3, props, bytes(9000, 'z'), 4096);
        parser_dir.add("split-body", parser_input(0, {17, 255}, big));

        bytes no_method;
        (void)encode_content(no_method, 1, props, bytes(10, 'z'), 4096);
        parser_dir.add("content-without-method", parser_input(0, {}, no_method));
        bytes over;  // body frames carry more than the header announced
        append(over, frame_bytes(frame_type::method, 1, deliver));
        bytes header_payload;
        byte_writer w(header_payload);
        encode_content_header(w, content_header{basic_class_id, 0, 2, {}});
        append(over, frame_bytes(frame_type::header, 1, header_payload));
        append(over, frame_bytes(frame_type::body, 1, bytes(5, 'o')));
        parser_dir.add("body-over-size", parser_input(0, {}, over));

        bytes bad_end = frame_bytes(frame_type::method, 0, deliver);
        bad_end.back() = 0xCD;
        parser_dir.add("bad-frame-end", parser_input(0, {}, bad_end));
        bytes bad_type = frame_bytes(frame_type::method, 0, deliver);
        bad_type[0] = 4;
        parser_dir.add("frame-type-4", parser_input(0, {}, bad_type));
        parser_dir.add("heartbeat-with-payload",
                       parser_input(0, {}, frame_bytes(frame_type::heartbeat, 0, {1})));
        parser_dir.add("frame-over-4096", parser_input(0, {}, frame_bytes(frame_type::body, 1,
                                                                         bytes(4089, 'q'))));
        bytes huge = frame_bytes(frame_type::body, 1, {});
        huge[3] = 0x40;  // claims a 1 GiB payload; no limit (mode 3)
        parser_dir.add("huge-claim-no-limit", parser_input(3, {}, huge));
        parser_dir.add("protocol-header-reply",
                       parser_input(0, {2}, bytes{'A', 'M', 'Q', 'P', 0, 0, 9, 0}));
        const bytes tune = method_bytes(connection_tune_ok{.channel_max = 2047,
                                                            .frame_max = 131072,
                                                            .heartbeat = 60});
        bytes retune = frame_bytes(frame_type::method, 0, tune);
        append(retune, frame_bytes(frame_type::body, 1, bytes(5000, 'r')));
        parser_dir.add("tune-then-large-frame", parser_input(0, {}, retune));
    }

    std::printf("frame_parser: %zu files, %zu bytes\n", parser_dir.files(), parser_dir.total());
    std::printf("field_table: %zu files, %zu bytes\n", table_dir.files(), table_dir.total());
    std::printf("method: %zu files, %zu bytes\n", method_dir.files(), method_dir.total());
    schedule_seed::write(out_root);
    core_seed::write(out_root);
    return 0;
}
