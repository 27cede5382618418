// What a channel handle shares with the connection: which channel of which
// connection attempt it names, its limits, its error, and its callbacks.
#pragma once

#include "machine_types.hpp"

#include "tarry/amqp/error.hpp"
#include "tarry/amqp/message.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

namespace tarry::amqp::detail {

class connection_impl;

struct channel_shared {
    channel_shared(std::shared_ptr<connection_impl> c, std::uint64_t gen, channel_ref r,
                   std::uint32_t fmax)
        : conn(std::move(c)), session(gen), ref(r), frame_max(fmax) {}

    // Immutable after construction: read from any thread.
    const std::shared_ptr<connection_impl> conn;
    const std::uint64_t session;  ///< the number of the session (transport connection) it belongs to
    const channel_ref ref;
    const std::uint32_t frame_max;

    std::atomic<bool> open{true};
    std::atomic<std::size_t> unconfirmed{0};

    // Guarded by mutex: read from any thread, written on the I/O thread.
    mutable std::mutex mutex;
    diagnostics last_error;

    // I/O thread only.
    std::function<void(returned_message)> on_return;
    std::function<void(const diagnostics&)> on_close;
};

}  // namespace tarry::amqp::detail
