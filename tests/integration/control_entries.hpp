// Reading a queue's control stream from its first entry, as a consumer
// does (prefetch, manual acks, x-stream-offset "first"), and removing it
// after a test: for the tests of cancel and reschedule.
#pragma once

#include "amqp_client.hpp"

#include "tarry/control/checkpoint_stream.hpp"
#include "tarry/control/control_stream.hpp"
#include "tarry/control/tombstone.hpp"

#include <string>
#include <vector>

namespace amqp_it {

/// The entries of `queue`'s control stream that `read` (message, why) ->
/// std::optional<T> turns into a T, from its first entry: waits (at most
/// 10 s) until `n` were read, then 300 ms more to see that no other
/// follows. An entry `read` finds malformed (a `why`) fails the test.
template <class T, class Read>
std::vector<T> read_stream_entries(client& c, const std::string& queue, std::size_t n, Read read) {
    auto ch = c.open_channel();
    ok(ch.async_qos(prefetch(200), use_future));
    inbox in;
    auto o = consume_opts(tarry::control::stream_name(queue));
    o.arguments.set("x-stream-offset", "first");
    value_of(ch.async_consume(o, in.handlers(), use_future));
    std::vector<T> out;
    while (true) {
        auto d = in.next(out.size() < n ? 10s : 300ms);
        if (!d) break;
        ch.async_ack(d->delivery_tag, {}, [](std::error_code) {});  // or the prefetch stops it at 200
        std::string why;
        auto t = read(d->msg, why);
        REQUIRE_MESSAGE(why.empty(), why);
        if (t) out.push_back(std::move(*t));
    }
    wait(ch.async_close(use_future));
    return out;
}

/// The tombstones in `queue`'s control stream (read_stream_entries).
inline std::vector<tarry::control::tombstone> read_tombstones(client& c, const std::string& queue, std::size_t n) {
    return read_stream_entries<tarry::control::tombstone>(
        c, queue, n, [](const amqp::message& m, std::string& why) { return tarry::control::read_tombstone(m.properties, why); });
}

/// Deletes `queue`'s control stream and its checkpoint stream when it
/// goes out of scope.
struct control_stream_cleanup {
    client& c;
    std::string queue;
    ~control_stream_cleanup() {
        auto ch = c.open_channel();
        ch.async_delete_queue(tarry::control::stream_name(queue), {}, use_future).wait_for(10s);
        ch.async_delete_queue(tarry::control::checkpoint_stream_name(queue), {}, use_future).wait_for(10s);
    }
};

}  // namespace amqp_it
