// Fuzz target: the incremental frame parser and everything a channel does
// with the frames it returns.
//
// Input layout (so the fuzzer controls the chunking as well as the bytes):
//   byte 0        bits 0-1: frame_max (4096, 131072, 65536, 0 = no limit);
//                 bit 2: feed through prepare()/commit() instead of feed()
//   byte 1        K = number of chunk-size bytes (mod 16)
//   bytes 2..2+K  chunk sizes, used in turn: size = byte + 1 (K = 0: one chunk)
//   the rest      the byte stream, as received after the protocol header
//
// Properties: the parser never reads or writes out of bounds (sanitizers);
// every frame it returns re-encodes to exactly the bytes it consumed; its
// byte accounting adds up; once failed it stays failed. Each frame's payload
// goes to its decoder (methods and content headers must round-trip) and to
// a content_assembler per channel, as a channel would route it; a tune or
// tune-ok changes the parser's frame_max as a connection would.
#include "fuzz_support.hpp"

#include "tarry/amqp/wire/content_assembler.hpp"
#include "tarry/amqp/wire/frame.hpp"
#include "tarry/amqp/wire/frame_parser.hpp"

#include <algorithm>
#include <cstring>
#include <map>

namespace {

using namespace tarry_fuzz;

constexpr std::uint32_t frame_max_choices[] = {wire::min_frame_max, 131072, 65536, 0};

// Routes one frame as a channel would; assembler errors reset the channel
// (a real one would close it) so the rest of the input is still exercised.
void route(std::map<std::uint16_t, wire::content_assembler>& channels, wire::frame_parser& p,
           const wire::frame_view& f) {
    if (f.type == wire::frame_type::heartbeat) return;

    wire::method m;
    const bool is_method =
        f.type == wire::frame_type::method && method_round_trip(f.payload, &m);
    if (f.type == wire::frame_type::header) header_round_trip(f.payload);
    if (is_method) {
        if (const auto* t = std::get_if<wire::connection_tune>(&m)) p.set_frame_max(t->frame_max);
        if (const auto* t = std::get_if<wire::connection_tune_ok>(&m))
            p.set_frame_max(t->frame_max);
    }

    auto& a = channels.try_emplace(f.channel, f.channel).first->second;
    if (a.on_frame(f)) {
        check(!a.in_progress() && !a.ready(), "failed assembler still busy");
        a.reset();
        return;
    }
    if (is_method && wire::info_of(m).has_content && a.expect_content()) {
        a.reset();
        return;
    }
    if (a.in_progress()) check(a.received() <= a.body_size(), "assembler over-received");
    if (a.ready()) {
        const std::uint64_t size = a.body_size();
        const auto content = a.take();
        const bool dropped = content.unreadable && content.unreadable->body_dropped;
        check(content.body.size() == (dropped ? 0 : size), "assembled body size differs from the header's");
        check(!content.unreadable || content.unreadable->body_size == size,
              "unreadable content names another body size");
        check(!a.ready() && !a.in_progress(), "assembler not idle after take()");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const std::uint8_t mode = data[0];
    const std::size_t k = std::min<std::size_t>(data[1] % 16, size - 2);
    const std::span<const std::uint8_t> sizes(data + 2, k);
    const std::span<const std::uint8_t> stream(data + 2 + k, size - 2 - k);
    const bool use_prepare = (mode & 4) != 0;

    wire::frame_parser p(frame_max_choices[mode & 3]);
    std::map<std::uint16_t, wire::content_assembler> channels;
    std::size_t fed = 0;
    std::uint64_t expect_consumed = 0;
    for (std::size_t i = 0; fed < stream.size(); ++i) {
        const std::size_t want = sizes.empty() ? stream.size() : sizes[i % sizes.size()] + 1u;
        const auto chunk = stream.subspan(fed, std::min(want, stream.size() - fed));
        if (use_prepare) {
            const auto room = p.prepare(chunk.size());
            check(room.size() >= chunk.size(), "prepare() gave less room than asked");
            std::memcpy(room.data(), chunk.data(), chunk.size());
            p.commit(chunk.size());
        } else {
            p.feed(chunk);
        }
        fed += chunk.size();

        while (auto f = p.next()) {
            check(!p.error(), "a frame returned after an error");
            // The frame is exactly the next bytes of the stream.
            bytes again;
            check(!wire::encode_frame(again, f->type, f->channel, f->payload),
                  "a parsed frame does not re-encode");
            check(expect_consumed + again.size() <= stream.size() &&
                      std::equal(again.begin(), again.end(),
                                 stream.begin() + static_cast<std::ptrdiff_t>(expect_consumed)),
                  "a parsed frame is not the bytes it was parsed from");
            expect_consumed += again.size();
            check(p.consumed() == expect_consumed, "consumed() disagrees with the frames");
            route(channels, p, *f);
        }
        if (p.error()) {
            check(!p.detail().empty(), "an error without a detail");
            check(!p.next(), "next() returns a frame after an error");
            break;
        }
        check(p.consumed() + p.buffered() == fed, "consumed + buffered != bytes fed");
    }
    return 0;
}
