// What the connection machine keeps per channel: its lifecycle, the
// synchronous request in flight, frames held behind it, consumers, the
// confirm tracker and the content being assembled.
#pragma once

#include "confirm_tracker.hpp"
#include "machine_types.hpp"
#include "rpc_table.hpp"

#include "tarry/amqp/wire/content_assembler.hpp"

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tarry::amqp::detail {

/// One frame group to send on a channel, in request order.
struct outgoing {
    enum class kind {
        request,  ///< a synchronous method: wait for `reply` before sending more
        publish,  ///< basic.publish + content
        async,    ///< ack, nack, reject, ...: done once sent
    };
    kind what = kind::async;
    std::vector<std::uint8_t> frames;
    op_id op = 0;
    reply_spec reply;         ///< for requests
    op_id consumer = 0;       ///< for basic.consume: the consumer to register
    bool is_confirm_select = false;
    bool is_close = false;    ///< channel.close
};

/// A content-bearing method whose header and body are on the way.
using content_method = std::variant<wire::basic_deliver, wire::basic_return, wire::basic_get_ok>;

struct channel_state {
    enum class phase {
        opening,  ///< channel.open sent
        open,
        closing,  ///< our channel.close sent, waiting for close-ok
    };

    channel_state(std::uint16_t number, std::uint64_t serial, std::uint64_t max_body_size)
        : ref{number, serial}, assembler(number, max_body_size) {}

    channel_ref ref;
    phase state = phase::opening;

    /// The request whose reply we wait for (its frames are sent).
    std::optional<outgoing> in_flight;
    /// Frames held until in_flight is answered.
    std::deque<outgoing> held;

    bool confirm_mode = false;
    confirm_tracker confirms;

    /// consumer tag -> consumer id.
    std::map<std::string, op_id, std::less<>> consumers;

    wire::content_assembler assembler;
    std::optional<content_method> pending_content;
    /// For basic.get-ok: the request waiting for the content.
    op_id content_op = 0;
};

}  // namespace tarry::amqp::detail
