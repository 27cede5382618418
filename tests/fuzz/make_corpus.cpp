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
    return 0;
}
