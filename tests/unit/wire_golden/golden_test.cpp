// Golden bytes: real conversations between clients we did not write (pika,
// py-amqp) and RabbitMQ 3.10, captured on loopback by the scripts in
// tests/interop/. Each direction is parsed in the original chunk boundaries,
// one byte at a time and through prepare()/commit(); every frame is decoded
// and checked against what the capture script did; then every frame is
// re-encoded from the decoded structures and must give the original bytes.
#include "../wire/bytes.hpp"

#include "tarry/amqp/wire/content_assembler.hpp"
#include "tarry/amqp/wire/frame.hpp"
#include "tarry/amqp/wire/frame_parser.hpp"
#include "tarry/amqp/wire/methods.hpp"
#include "tarry/amqp/wire/properties.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace tarry::amqp::wire;
using wire_test::bytes;

namespace {

// ---- the capture file ------------------------------------------------------

// One direction of a capture: the chunks as the relay forwarded them.
struct capture {
    std::vector<bytes> client;  // after the protocol header
    std::vector<bytes> server;
};

bytes concat(const std::vector<bytes>& chunks) {
    bytes out;
    for (const auto& c : chunks) out.insert(out.end(), c.begin(), c.end());
    return out;
}

// Reads tests/data/<name>: '#' lines are comments, then `C <hex>` or
// `S <hex>` a line. Checks and strips the client's 8-byte protocol header,
// keeping the remaining chunk boundaries as they were.
capture load_capture(const std::string& name) {
    const char* root = std::getenv("TARRY_SOURCE_ROOT");
    REQUIRE_MESSAGE(root != nullptr, "TARRY_SOURCE_ROOT is not set (run through meson test)");
    const std::string path = std::string(root) + "/tests/data/" + name;
    std::ifstream in(path);
    REQUIRE_MESSAGE(in.good(), "cannot open " << path);

    capture c;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        REQUIRE_MESSAGE((line.size() > 2 && (line[0] == 'C' || line[0] == 'S') && line[1] == ' '),
                        "bad capture line: " << line.substr(0, 40));
        bytes chunk = wire_test::hex(std::string_view(line).substr(2));
        REQUIRE(chunk.size() * 2 == line.size() - 2);
        (line[0] == 'C' ? c.client : c.server).push_back(std::move(chunk));
    }

    const bytes all = concat(c.client);
    REQUIRE(all.size() >= protocol_header.size());
    std::string detail;
    const auto ec =
        check_protocol_header(std::span(all).first(protocol_header.size()), &detail);
    REQUIRE_MESSAGE(!ec, detail);
    std::size_t skip = protocol_header.size();
    while (skip > 0) {
        bytes& first = c.client.front();
        const std::size_t n = std::min(skip, first.size());
        first.erase(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(n));
        if (first.empty()) c.client.erase(c.client.begin());
        skip -= n;
    }
    REQUIRE_FALSE(c.client.empty());
    REQUIRE_FALSE(c.server.empty());
    return c;
}

// ---- parsing -----------------------------------------------------------------

enum class feeding { original_chunks, byte_at_a_time, prepare_commit };

const char* to_string(feeding f) {
    switch (f) {
    case feeding::original_chunks: return "original chunks";
    case feeding::byte_at_a_time: return "one byte at a time";
    case feeding::prepare_commit: return "prepare/commit";
    }
    return "?";
}

// As a client does: frames up to 4096 bytes until tuning, then the
// frame_max this direction's tune or tune-ok carries.
void follow_tuning(frame_parser& p, const frame& f) {
    if (f.type != frame_type::method) return;
    method m;
    if (decode_method(f.payload, m)) return;
    if (const auto* t = std::get_if<connection_tune>(&m)) p.set_frame_max(t->frame_max);
    if (const auto* t = std::get_if<connection_tune_ok>(&m)) p.set_frame_max(t->frame_max);
}

std::vector<frame> parse(const std::vector<bytes>& chunks, feeding how) {
    CAPTURE(to_string(how));
    std::vector<bytes> pieces;
    if (how == feeding::byte_at_a_time) {
        for (const auto& c : chunks)
            for (std::uint8_t b : c) pieces.push_back(bytes{b});
    } else {
        pieces = chunks;
    }
    frame_parser p(min_frame_max);
    std::vector<frame> frames;
    std::uint64_t total = 0;
    for (const auto& piece : pieces) {
        if (how == feeding::prepare_commit) {
            const auto room = p.prepare(piece.size());
            if (room.size() < piece.size()) FAIL("prepare() gave " << room.size() << " bytes");
            std::copy(piece.begin(), piece.end(), room.begin());
            p.commit(piece.size());
        } else {
            p.feed(piece);
        }
        total += piece.size();
        while (auto f = p.next()) {
            frames.push_back(f->to_frame());
            follow_tuning(p, frames.back());
        }
        // Not a REQUIRE per piece: one byte at a time is ~10^4 pieces.
        if (p.error()) FAIL("parser error after " << total << " bytes: " << p.detail());
    }
    CHECK(p.buffered() == 0);
    CHECK(p.consumed() == total);
    return frames;
}

// ---- decoding and re-encoding ------------------------------------------------

struct decoded_frame {
    frame_type type = frame_type::heartbeat;
    std::uint16_t channel = 0;
    std::optional<method> m;                // method frames
    std::optional<content_header> header;   // header frames
    bytes body;                             // body frames
};

std::vector<decoded_frame> decode_all(const std::vector<frame>& frames) {
    std::vector<decoded_frame> out;
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const frame& f = frames[i];
        CAPTURE(i);
        decoded_frame d{f.type, f.channel, {}, {}, {}};
        switch (f.type) {
        case frame_type::method: {
            method m;
            std::string detail;
            const auto ec = decode_method(f.payload, m, &detail);
            REQUIRE_MESSAGE(!ec, detail);
            d.m = std::move(m);
            break;
        }
        case frame_type::header: {
            byte_reader r(f.payload);
            d.header = decode_content_header(r);
            REQUIRE_MESSAGE(r.ok(), r.detail());
            break;
        }
        case frame_type::body: d.body = f.payload; break;
        case frame_type::heartbeat:
            CHECK(f.channel == 0);
            CHECK(f.payload.empty());
            break;
        }
        out.push_back(std::move(d));
    }
    return out;
}

// Every frame written again from its decoded structure alone.
bytes reencode(const std::vector<decoded_frame>& frames) {
    bytes out;
    for (const auto& d : frames) {
        switch (d.type) {
        case frame_type::method: {
            const std::size_t at = begin_frame(out, d.type, d.channel);
            byte_writer w(out);
            encode_method(w, *d.m);
            REQUIRE_MESSAGE(w.ok(), w.detail());
            REQUIRE_FALSE(end_frame(out, at, 0));
            break;
        }
        case frame_type::header: {
            const std::size_t at = begin_frame(out, d.type, d.channel);
            byte_writer w(out);
            encode_content_header(w, *d.header);
            REQUIRE_MESSAGE(w.ok(), w.detail());
            REQUIRE_FALSE(end_frame(out, at, 0));
            break;
        }
        case frame_type::body: REQUIRE_FALSE(encode_frame(out, d.type, d.channel, d.body)); break;
        case frame_type::heartbeat: encode_heartbeat(out); break;
        }
    }
    return out;
}

// Byte equality, reporting the first difference in a readable way.
void check_same_bytes(const bytes& got, const bytes& want) {
    CHECK(got.size() == want.size());
    const auto [g, w] = std::mismatch(got.begin(), got.end(), want.begin(), want.end());
    if (g == got.end() && w == want.end()) return;
    const auto at = static_cast<std::size_t>(g - got.begin());
    const std::size_t from = at < 16 ? 0 : at - 16;
    auto window = [&](const bytes& b) {
        const std::size_t to = std::min(b.size(), at + 16);
        return wire_test::to_hex(std::span(b).subspan(from, to - from));
    };
    FAIL("first difference at byte " << at << "\n  got:  " << window(got)
                                     << "\n  want: " << window(want));
}

// ---- contents ------------------------------------------------------------------

// A content as it was on the wire: the method before it, the assembled
// header properties and body, the sizes of its body frames, and where its
// frames lie in the stream (for re-encoding it with encode_content).
struct wire_content {
    std::uint16_t channel = 0;
    method before;
    content_header header;
    message_content content;
    std::vector<std::size_t> body_frames;
    std::size_t begin = 0, end = 0;  // stream offsets of header .. last body frame
};

// Runs every frame through one content_assembler per channel, as a channel
// does, and collects the contents in order.
std::vector<wire_content> assemble(const std::vector<frame>& frames,
                                   const std::vector<decoded_frame>& decoded) {
    std::map<std::uint16_t, content_assembler> assemblers;
    std::vector<wire_content> out;
    std::optional<wire_content> current;
    std::size_t offset = 0;
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const frame& f = frames[i];
        const decoded_frame& d = decoded[i];
        CAPTURE(i);
        const std::size_t size = f.payload.size() + frame_overhead;
        if (f.type == frame_type::heartbeat) {
            offset += size;
            continue;
        }
        auto& a = assemblers.try_emplace(f.channel, f.channel).first->second;
        const frame_view view{f.type, f.channel, f.payload};
        const auto ec = a.on_frame(view);
        REQUIRE_MESSAGE(!ec, a.detail());
        if (d.m && info_of(*d.m).has_content) {
            REQUIRE_FALSE(a.expect_content());
            REQUIRE_FALSE(current.has_value());
            current = wire_content{};
            current->channel = f.channel;
            current->before = *d.m;
        }
        if (f.type == frame_type::header) {
            REQUIRE(current.has_value());
            current->header = *d.header;
            current->begin = offset;
        }
        if (f.type == frame_type::body) current->body_frames.push_back(f.payload.size());
        offset += size;
        if (a.ready()) {
            REQUIRE(current.has_value());
            current->content = a.take();
            current->end = offset;
            out.push_back(std::move(*current));
            current.reset();
        }
    }
    CHECK_FALSE(current.has_value());
    for (const auto& [channel, a] : assemblers) {
        CAPTURE(channel);
        CHECK_FALSE(a.in_progress());
    }
    return out;
}

// ---- one whole conversation ------------------------------------------------------

struct direction {
    bytes stream;  // the bytes after the protocol header
    std::vector<frame> frames;
    std::vector<decoded_frame> decoded;
    std::vector<wire_content> contents;

    std::vector<method> methods() const {
        std::vector<method> out;
        for (const auto& d : decoded)
            if (d.m) out.push_back(*d.m);
        return out;
    }
    template <class M>
    std::vector<M> all() const {
        std::vector<M> out;
        for (const auto& d : decoded)
            if (d.m)
                if (const auto* m = std::get_if<M>(&*d.m)) out.push_back(*m);
        return out;
    }
    template <class M>
    M first() const {
        const auto v = all<M>();
        REQUIRE_FALSE(v.empty());
        return v.front();
    }
};

// Parses one direction three ways (all must agree), decodes, assembles.
direction read_direction(const std::vector<bytes>& chunks) {
    direction d;
    d.stream = concat(chunks);
    d.frames = parse(chunks, feeding::original_chunks);
    for (feeding how : {feeding::byte_at_a_time, feeding::prepare_commit}) {
        CAPTURE(to_string(how));
        CHECK(parse(chunks, how) == d.frames);
    }
    d.decoded = decode_all(d.frames);
    d.contents = assemble(d.frames, d.decoded);
    return d;
}

// Re-encodes each content with encode_content at the negotiated frame_max:
// the header and the body split must be exactly what the peer sent.
void check_contents_reencode(const direction& d, std::uint32_t frame_max) {
    for (std::size_t i = 0; i < d.contents.size(); ++i) {
        const auto& c = d.contents[i];
        CAPTURE(i);
        bytes out;
        std::string detail;
        const auto ec = encode_content(out, c.channel, c.content.properties, c.content.body,
                                       frame_max, &detail);
        REQUIRE_MESSAGE(!ec, detail);
        check_same_bytes(out, bytes(d.stream.begin() + static_cast<std::ptrdiff_t>(c.begin),
                                    d.stream.begin() + static_cast<std::ptrdiff_t>(c.end)));
    }
}

template <class T>
T get(const field_table& t, std::string_view name) {
    const field_value* v = t.find(name);
    REQUIRE_MESSAGE(v != nullptr, "no field " << std::string(name));
    const T* x = v->get_if<T>();
    REQUIRE_MESSAGE(x != nullptr, "field " << std::string(name) << " has tag '"
                                           << field_tag(*v) << "'");
    return *x;
}

void check_server_start(const connection_start& s) {
    CHECK(s.version_major == 0);
    CHECK(s.version_minor == 9);
    const auto caps = get<field_table>(s.server_properties, "capabilities");
    for (const char* key : {"publisher_confirms", "exchange_exchange_bindings", "basic.nack",
                            "consumer_cancel_notify", "connection.blocked", "consumer_priorities",
                            "authentication_failure_close", "per_consumer_qos",
                            "direct_reply_to"}) {
        CAPTURE(key);
        CHECK(get<bool>(caps, key));
    }
    CHECK(get<std::string>(s.server_properties, "product") == "RabbitMQ");
    CHECK(get<std::string>(s.server_properties, "version").starts_with("3.10."));
    CHECK(wire_test::contains(s.mechanisms, "PLAIN"));
    CHECK(s.locales == "en_US");
}

}  // namespace

TEST_CASE("golden bytes: pika and RabbitMQ 3.10") {
    const capture cap = load_capture("pika-conversation.txt");
    const direction client = read_direction(cap.client);
    const direction server = read_direction(cap.server);

    SUBCASE("every frame re-encodes to the captured bytes") {
        check_same_bytes(reencode(client.decoded), client.stream);
        check_same_bytes(reencode(server.decoded), server.stream);
        check_contents_reencode(client, 4096);
        check_contents_reencode(server, 4096);
    }

    SUBCASE("handshake") {
        const auto server_methods = server.methods();
        REQUIRE_FALSE(server_methods.empty());
        REQUIRE(std::holds_alternative<connection_start>(server_methods.front()));
        check_server_start(std::get<connection_start>(server_methods.front()));

        const auto client_methods = client.methods();
        REQUIRE(std::holds_alternative<connection_start_ok>(client_methods.front()));
        const auto start_ok = std::get<connection_start_ok>(client_methods.front());
        CHECK(start_ok.mechanism == "PLAIN");
        CHECK(start_ok.response == std::string("\0guest\0guest", 12));
        CHECK(start_ok.locale == "en_US");
        CHECK(get<std::string>(start_ok.client_properties, "product") ==
              "Pika Python Client Library");
        const auto client_caps = get<field_table>(start_ok.client_properties, "capabilities");
        CHECK(get<bool>(client_caps, "publisher_confirms"));
        CHECK(get<bool>(client_caps, "consumer_cancel_notify"));

        const auto tune = server.first<connection_tune>();
        CHECK(tune.channel_max == 2047);
        CHECK(tune.frame_max == 131072);
        CHECK(tune.heartbeat == 60);
        const auto tune_ok = client.first<connection_tune_ok>();
        CHECK(tune_ok.channel_max == 2047);
        CHECK(tune_ok.frame_max == 4096);
        CHECK(tune_ok.heartbeat == 30);
        CHECK(client.first<connection_open>().virtual_host == "/");
        CHECK(server.all<connection_open_ok>().size() == 1);
        CHECK(server.all<confirm_select_ok>().size() == 1);
    }

    SUBCASE("declarations") {
        const auto qd = client.first<queue_declare>();
        CHECK(qd.queue == "tarry.golden");
        CHECK_FALSE(qd.durable);
        CHECK(get<std::int32_t>(qd.arguments, "x-max-length") == 100);
        CHECK(get<std::string>(qd.arguments, "x-queue-mode") == "default");
        CHECK(server.first<queue_declare_ok>().queue == "tarry.golden");
        const auto xd = client.first<exchange_declare>();
        CHECK(xd.exchange == "tarry.golden.x");
        CHECK(xd.type == "topic");
        CHECK(xd.auto_delete);
        CHECK(client.first<queue_bind>().routing_key == "job.#");
        CHECK(client.first<basic_qos>().prefetch_count == 10);
    }

    SUBCASE("the published contents") {
        REQUIRE(client.contents.size() == 3);
        const auto& job = client.contents[0];
        REQUIRE(std::holds_alternative<basic_publish>(job.before));
        CHECK(std::get<basic_publish>(job.before).exchange == "tarry.golden.x");
        CHECK(std::get<basic_publish>(job.before).routing_key == "job.golden");
        const basic_properties& p = job.content.properties;
        CHECK(p.content_type == "application/json");
        CHECK(p.content_encoding == "identity");
        CHECK(p.delivery_mode == 2);
        CHECK(p.priority == 3);
        CHECK(p.correlation_id == "corr-1");
        CHECK(p.reply_to == "replies");
        CHECK(p.expiration == "60000");
        CHECK(p.message_id == "msg-1");
        CHECK(p.timestamp == 1767225600u);
        CHECK(p.type == "job");
        CHECK(p.user_id == "guest");
        CHECK(p.app_id == "capture");
        CHECK(p.cluster_id == "c1");
        CHECK(property_flags(p) == property_flag::all);
        REQUIRE(p.headers.has_value());
        const field_table& h = *p.headers;
        CHECK(h.size() == 8);
        CHECK(get<std::int32_t>(h, "perform_job_at") == 1767225600);  // pika: 'I'
        CHECK(get<std::int32_t>(h, "attempt") == 1);
        CHECK(get<std::string>(h, "name") == "golden");
        CHECK(get<bool>(h, "flag"));
        CHECK(get<field_table>(h, "nested") == field_table{{"a", std::int32_t{1}}, {"b", "two"}});
        CHECK(get<field_array>(h, "list") == field_array{std::int32_t{1}, "x", false});
        CHECK(get<std::int64_t>(h, "big") == (std::int64_t{1} << 40));
        CHECK(get<std::int32_t>(h, "neg") == -5);
        CHECK(job.content.body == wire_test::of(R"({"hello":"world"})"));

        const auto& empty = client.contents[1];
        CHECK(empty.header.body_size == 0);
        CHECK(empty.body_frames.empty());  // an empty body has no body frame
        CHECK(empty.content.body.empty());
        CHECK(empty.content.properties == basic_properties{});

        const auto& big = client.contents[2];
        CHECK(big.content.properties.message_id == "big");
        CHECK(big.header.body_size == 10000);
        CHECK(big.content.body == bytes(10000, 'x'));
        CHECK(big.body_frames == std::vector<std::size_t>{4088, 4088, 1824});
    }

    SUBCASE("the server hands the contents back unchanged") {
        REQUIRE(server.contents.size() == 3);
        CHECK(std::holds_alternative<basic_get_ok>(server.contents[0].before));
        CHECK(std::holds_alternative<basic_deliver>(server.contents[1].before));
        CHECK(std::holds_alternative<basic_deliver>(server.contents[2].before));
        for (std::size_t i = 0; i < 3; ++i) {
            CAPTURE(i);
            CHECK(server.contents[i].header == client.contents[i].header);
            CHECK(server.contents[i].content == client.contents[i].content);
            CHECK(server.contents[i].body_frames == client.contents[i].body_frames);
        }
        const auto get_ok = server.first<basic_get_ok>();
        CHECK(get_ok.delivery_tag == 1);
        CHECK(get_ok.exchange == "tarry.golden.x");
        CHECK(get_ok.routing_key == "job.golden");
        const auto deliveries = server.all<basic_deliver>();
        REQUIRE(deliveries.size() == 2);
        CHECK(deliveries[0].delivery_tag == 2);
        CHECK(deliveries[1].delivery_tag == 3);
        CHECK(deliveries[0].consumer_tag == server.first<basic_consume_ok>().consumer_tag);
    }

    SUBCASE("acknowledgements and the close") {
        CHECK(client.first<basic_ack>().delivery_tag == 1);
        CHECK(client.first<basic_reject>().delivery_tag == 2);
        CHECK_FALSE(client.first<basic_reject>().requeue);
        CHECK(client.first<basic_nack>().delivery_tag == 3);
        CHECK_FALSE(client.first<basic_nack>().requeue);
        const auto confirms = server.all<basic_ack>();  // publisher confirms
        CHECK(confirms.size() == 3);
        CHECK(client.first<queue_purge>().queue == "tarry.golden");
        CHECK(client.first<queue_unbind>().routing_key == "job.#");
        CHECK(client.first<exchange_delete>().exchange == "tarry.golden.x");
        const auto close = client.first<connection_close>();
        CHECK(close.reply_code == 200);
        REQUIRE(std::holds_alternative<connection_close>(client.methods().back()));
        REQUIRE(std::holds_alternative<connection_close_ok>(server.methods().back()));
        CHECK(client.decoded.back().channel == 0);
    }
}

TEST_CASE("golden bytes: py-amqp and RabbitMQ 3.10") {
    const capture cap = load_capture("pyamqp-conversation.txt");
    const direction client = read_direction(cap.client);
    const direction server = read_direction(cap.server);

    SUBCASE("every frame re-encodes to the captured bytes, 'L' written as 'l'") {
        // py-amqp sends an int beyond 32 bits with the tag 'L'; tarry reads
        // it as int64 and writes every int64 as 'l', the tag RabbitMQ
        // itself writes. So the only expected difference is that one tag,
        // in the header named "big" (the same content travels both ways).
        auto expected = [](bytes b) {
            const bytes from = wire_test::hex("03 62 69 67 4c");  // "\3bigL"
            std::size_t patched = 0;
            for (auto it = std::search(b.begin(), b.end(), from.begin(), from.end());
                 it != b.end(); it = std::search(it + 1, b.end(), from.begin(), from.end())) {
                it[4] = 'l';
                ++patched;
            }
            CHECK(patched == 1);
            return b;
        };
        check_same_bytes(reencode(client.decoded), expected(client.stream));
        check_same_bytes(reencode(server.decoded), expected(server.stream));
    }

    SUBCASE("handshake") {
        check_server_start(std::get<connection_start>(server.methods().front()));
        const auto start_ok = client.first<connection_start_ok>();
        CHECK(start_ok.mechanism == "AMQPLAIN");  // py-amqp's default
        CHECK(wire_test::contains(start_ok.response, "LOGIN"));
        CHECK(get<std::string>(start_ok.client_properties, "product") == "py-amqp");
        const auto tune_ok = client.first<connection_tune_ok>();
        CHECK(tune_ok.frame_max == 131072);  // py-amqp takes the server's value
        CHECK(tune_ok.heartbeat == 30);
    }

    SUBCASE("the headers py-amqp writes and pika cannot") {
        REQUIRE(client.contents.size() == 1);
        REQUIRE(server.contents.size() == 1);
        CHECK(std::holds_alternative<basic_publish>(client.contents[0].before));
        CHECK(std::holds_alternative<basic_get_ok>(server.contents[0].before));
        CHECK(server.contents[0].content == client.contents[0].content);

        const basic_properties& p = client.contents[0].content.properties;
        CHECK(p.content_type == "application/json");
        CHECK(p.delivery_mode == 2);
        CHECK(p.message_id == "py-1");
        CHECK(p.timestamp == 1767225600u);
        REQUIRE(p.headers.has_value());
        const field_table& h = *p.headers;
        CHECK(h.size() == 8);
        CHECK(field_tag(*h.find("perform_job_at")) == 'd');
        CHECK(get<double>(h, "perform_job_at") == 1767225600.25);  // exact
        CHECK(get<decimal_value>(h, "price") == decimal_value{3, 12345});
        CHECK(get<timestamp_value>(h, "created") == timestamp_value{1767225600});
        CHECK(get<std::string>(h, "raw") == std::string("\x00\xff\xfe-bytes", 9));
        CHECK(h.find("none")->get_if<void_value>() != nullptr);
        CHECK(get<std::int64_t>(h, "big") == (std::int64_t{1} << 40));
        CHECK(get<std::int32_t>(h, "attempt") == 3);
        const field_table retry{
            {"delays", field_array{1.5, std::int32_t{3}, "x",
                                   field_table{{"deep", field_array{true, void_value{}}}}}},
            {"ok", false}};
        CHECK(get<field_table>(h, "retry") == retry);

        bytes body = wire_test::of("py-amqp ");
        body.resize(body.size() + 300, 'y');
        CHECK(client.contents[0].content.body == body);
        CHECK(client.contents[0].body_frames == std::vector<std::size_t>{308});
    }

    SUBCASE("confirm, get, ack, close") {
        CHECK(server.all<confirm_select_ok>().size() == 1);
        CHECK(server.first<basic_ack>().delivery_tag == 1);  // the publisher confirm
        CHECK(server.first<basic_get_ok>().routing_key == "tarry.golden.pyamqp");
        CHECK(client.first<basic_ack>().delivery_tag == server.first<basic_get_ok>().delivery_tag);
        // py-amqp closes with reply-code 0 and no text (not 200 as pika
        // does); RabbitMQ accepts it: a client must not insist on 200.
        CHECK(client.first<connection_close>().reply_code == 0);
        REQUIRE(std::holds_alternative<connection_close_ok>(server.methods().back()));
    }
}
