#include "ping_relay.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/system_executor.hpp>

#include <vector>

namespace tarry::detail {

namespace asio = boost::asio;

namespace {
// Runs h on its associated executor (the system executor when it has none).
// Held by a shared_ptr: the executors may copy what they run, and a handler
// is move-only.
void complete(ping_relay::handler h) {
    auto ex = asio::get_associated_executor(h, asio::system_executor());
    ex.execute([h = std::make_shared<ping_relay::handler>(std::move(h))] { std::move(*h)(); });
}

// The same from another thread, never inside the caller's call.
void complete_later(ping_relay::handler h) {
    asio::post(asio::system_executor(),
               [h = std::make_shared<ping_relay::handler>(std::move(h))] { complete(std::move(*h)); });
}
}  // namespace

ping_relay::ping_relay(asio::any_io_executor io, bool running) : io_(std::move(io)), running_(running) {}

void ping_relay::ping(handler h) {
    std::uint64_t id = 0;
    {
        std::lock_guard lock(mutex_);
        if (running_) {
            id = ++last_id_;
            pending_.emplace(id, std::move(h));
        }
    }
    if (id == 0) {
        complete_later(std::move(h));
        return;
    }
    asio::post(io_, [self = shared_from_this(), id] { self->answered(id); });
}

void ping_relay::answered(std::uint64_t id) {
    // Taken out as a node, not move-assigned: Boost 1.81's move assignment
    // of any_completion_handler copies from an lvalue and recurses.
    decltype(pending_)::node_type node;
    {
        std::lock_guard lock(mutex_);
        node = pending_.extract(id);
    }
    if (node.empty()) return;  // completed by close()
    complete(std::move(node.mapped()));
}

void ping_relay::open() {
    std::lock_guard lock(mutex_);
    running_ = true;
}

void ping_relay::close() {
    std::vector<handler> waiting;
    {
        std::lock_guard lock(mutex_);
        running_ = false;
        for (auto& [id, h] : pending_) waiting.push_back(std::move(h));
        pending_.clear();
    }
    for (auto& h : waiting) complete_later(std::move(h));
}

}  // namespace tarry::detail
