// Reading a queue's control stream from its first entry, as a consumer
// does (prefetch, manual acks, x-stream-offset "first"), and removing it
// after a test: for the tests of cancel and reschedule.
#pragma once

#include "amqp_client.hpp"

#include "tarry/control/control_stream.hpp"
#include "tarry/control/tombstone.hpp"

#include <string>
#include <vector>

namespace amqp_it {

/// The tombstones in `queue`'s control stream, from its first entry: waits
/// (at most 10 s) until `n` were read, then 300 ms more to see that no
/// other follows. A malformed entry fails the test.
inline std::vector<tarry::control::tombstone> read_tombstones(client& c, const std::string& queue, std::size_t n) {
    auto ch = c.open_channel();
    ok(ch.async_qos(prefetch(200), use_future));
    inbox in;
    auto o = consume_opts(tarry::control::stream_name(queue));
    o.arguments.set("x-stream-offset", "first");
    value_of(ch.async_consume(o, in.handlers(), use_future));
    std::vector<tarry::control::tombstone> out;
    while (true) {
        auto d = in.next(out.size() < n ? 10s : 300ms);
        if (!d) break;
        std::string why;
        auto t = tarry::control::read_tombstone(d->msg.properties, why);
        REQUIRE_MESSAGE(why.empty(), why);
        if (t) out.push_back(std::move(*t));
    }
    wait(ch.async_close(use_future));
    return out;
}

/// Deletes `queue`'s control stream when it goes out of scope.
struct control_stream_cleanup {
    client& c;
    std::string queue;
    ~control_stream_cleanup() {
        auto ch = c.open_channel();
        ch.async_delete_queue(tarry::control::stream_name(queue), {}, use_future).wait_for(10s);
    }
};

}  // namespace amqp_it
