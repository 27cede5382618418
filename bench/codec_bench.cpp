// The wire codec's throughput on a consumer's traffic, against memcpy.
//
//   codec_bench [--messages N] [--min-seconds S] [--runs R]
//
// Builds a stream of N deliveries as RabbitMQ sends them to a consumer:
// basic.deliver method frame, content header (content-type, delivery-mode,
// message-id, timestamp and a small headers table with perform_job_at),
// one ~200-byte body frame. Then times, each pass repeated until it takes at
// least S seconds, best of R runs:
//   decode  frame_parser fed in 64 KiB chunks, decode_method on every method
//           frame, decode_content_header on every header, a view of each body;
//   encode  the same sequence written from its structures (method frames
//           with encode_method, contents with encode_content);
//   memcpy  the same bytes copied, as the floor any codec is measured from.
// Prints a markdown table (frames/s, MB/s, time relative to memcpy). Exits 1
// when decoding or encoding does not reproduce the stream exactly.
#include "tarry/amqp/wire/frame.hpp"
#include "tarry/amqp/wire/frame_parser.hpp"
#include "tarry/amqp/wire/methods.hpp"
#include "tarry/amqp/wire/properties.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace tarry::amqp::wire;
using bytes = std::vector<std::uint8_t>;
using clk = std::chrono::steady_clock;

constexpr std::uint16_t channel = 1;
constexpr std::uint32_t frame_max = 131072;  // RabbitMQ's default
constexpr std::size_t feed_chunk = 64 * 1024;

struct delivery {
    method deliver;
    basic_properties properties;
    bytes body;
};

std::vector<delivery> make_deliveries(std::size_t n) {
    std::vector<delivery> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        delivery d;
        d.deliver = basic_deliver{.consumer_tag = "amq.ctag-3sZ0hFJmQ8mR1Yk5Hk8Vqw",
                                  .delivery_tag = i + 1,
                                  .redelivered = false,
                                  .exchange = "tarry.jobs",
                                  .routing_key = "job.email.send"};
        d.properties.content_type = "application/json";
        d.properties.delivery_mode = 2;
        d.properties.message_id = "job-" + std::to_string(1000000 + i);
        d.properties.timestamp = 1767225600 + i;
        d.properties.headers = field_table{
            {"perform_job_at", 1767225600.25 + static_cast<double>(i) * 0.001},
            {"attempt", std::int32_t{1}},
            {"job", "email.send"},
        };
        std::string json = R"({"to":"user)" + std::to_string(i) +
                           R"(@example.com","template":"welcome","locale":"en","vars":{)";
        while (json.size() < 196) json += R"("k":"v",)";
        json += R"("z":1}})";
        d.body.assign(json.begin(), json.end());
        out.push_back(std::move(d));
    }
    return out;
}

// Encodes the whole sequence into `out` (cleared first). Returns frames written.
std::size_t encode_all(const std::vector<delivery>& ds, bytes& out) {
    out.clear();
    std::size_t frames = 0;
    for (const auto& d : ds) {
        const std::size_t at = begin_frame(out, frame_type::method, channel);
        byte_writer w(out);
        encode_method(w, d.deliver);
        if (!w.ok() || end_frame(out, at, frame_max)) {
            std::fprintf(stderr, "codec_bench: encoding a method failed\n");
            std::exit(1);
        }
        if (encode_content(out, channel, d.properties, d.body, frame_max)) {
            std::fprintf(stderr, "codec_bench: encoding a content failed\n");
            std::exit(1);
        }
        frames += 2 + (d.body.empty() ? 0 : 1);
    }
    return frames;
}

// What decoding saw, so that the work cannot be optimised away and is checked.
struct decode_result {
    std::size_t frames = 0;
    std::uint64_t last_tag = 0;
    std::uint64_t body_bytes = 0;
    std::uint64_t header_sizes = 0;
};

decode_result decode_all(const bytes& stream, frame_parser& p, method& m) {
    decode_result r;
    p.reset();
    for (std::size_t off = 0; off < stream.size(); off += feed_chunk) {
        p.feed(std::span(stream).subspan(off, std::min(feed_chunk, stream.size() - off)));
        while (auto f = p.next()) {
            ++r.frames;
            switch (f->type) {
            case frame_type::method:
                if (decode_method(f->payload, m)) return {};
                if (const auto* d = std::get_if<basic_deliver>(&m)) r.last_tag = d->delivery_tag;
                break;
            case frame_type::header: {
                byte_reader br(f->payload);
                const content_header h = decode_content_header(br);
                if (!br.ok()) return {};
                r.header_sizes += h.body_size;
                break;
            }
            case frame_type::body: r.body_bytes += f->payload.size(); break;
            case frame_type::heartbeat: break;
            }
        }
        if (p.error()) return {};
    }
    return r;
}

// Runs `pass` until at least min_seconds have gone by; returns seconds per pass.
template <class Pass>
double time_per_pass(double min_seconds, Pass&& pass) {
    std::size_t reps = 0;
    const auto start = clk::now();
    double elapsed = 0;
    do {
        pass();
        ++reps;
        elapsed = std::chrono::duration<double>(clk::now() - start).count();
    } while (elapsed < min_seconds);
    return elapsed / static_cast<double>(reps);
}

template <class Pass>
double best_of(int runs, double min_seconds, Pass&& pass) {
    double best = 1e300;
    for (int i = 0; i < runs; ++i) best = std::min(best, time_per_pass(min_seconds, pass));
    return best;
}

volatile std::uint64_t sink;  // keeps the timed results observable

}  // namespace

int main(int argc, char** argv) {
    std::size_t messages = 20000;
    double min_seconds = 0.5;
    int runs = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string opt = argv[i];
        if (opt == "--messages") messages = std::strtoul(argv[i + 1], nullptr, 10);
        else if (opt == "--min-seconds") min_seconds = std::strtod(argv[i + 1], nullptr);
        else if (opt == "--runs") runs = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: codec_bench [--messages N] [--min-seconds S] [--runs R]\n");
            return 2;
        }
    }
    if (argc % 2 == 0 || messages == 0 || runs < 1) {
        std::fprintf(stderr, "usage: codec_bench [--messages N] [--min-seconds S] [--runs R]\n");
        return 2;
    }

    const auto ds = make_deliveries(messages);
    bytes stream;
    const std::size_t frames = encode_all(ds, stream);

    // Correctness first: decoding sees every frame, encoding is stable.
    frame_parser parser(frame_max);
    method m;
    const decode_result check = decode_all(stream, parser, m);
    std::uint64_t body_total = 0;
    for (const auto& d : ds) body_total += d.body.size();
    if (check.frames != frames || check.last_tag != messages || check.body_bytes != body_total ||
        check.header_sizes != body_total) {
        std::fprintf(stderr, "codec_bench: decoding did not reproduce the stream (%s)\n",
                     parser.detail().c_str());
        return 1;
    }
    bytes again;
    encode_all(ds, again);
    if (again != stream) {
        std::fprintf(stderr, "codec_bench: encoding is not deterministic\n");
        return 1;
    }

    const double t_decode = best_of(runs, min_seconds, [&] {
        sink = decode_all(stream, parser, m).body_bytes;
    });
    bytes out;
    out.reserve(stream.size());
    const double t_encode = best_of(runs, min_seconds, [&] { sink = encode_all(ds, out); });
    bytes copy(stream.size());
    const double t_memcpy = best_of(runs, min_seconds, [&] {
        std::memcpy(copy.data(), stream.data(), stream.size());
        sink = copy[copy.size() / 2];
    });

    const double mb = static_cast<double>(stream.size()) / 1e6;
    std::printf("%zu deliveries, %zu frames, %zu bytes (%.1f bytes a delivery); best of %d "
                "runs of >= %.2f s\n\n",
                messages, frames, stream.size(),
                static_cast<double>(stream.size()) / static_cast<double>(messages), runs,
                min_seconds);
    std::printf("| operation | frames/s | MB/s | time vs memcpy |\n");
    std::printf("|---|---:|---:|---:|\n");
    auto row = [&](const char* name, double t) {
        std::printf("| %s | %.3g M | %.0f | %.1f× |\n", name,
                    static_cast<double>(frames) / t / 1e6, mb / t, t / t_memcpy);
    };
    row("decode (parser + decode_method + content header + body view)", t_decode);
    row("encode (encode_method + encode_content)", t_encode);
    row("memcpy", t_memcpy);
    return 0;
}
