// How completions from executors that are not the endpoint's (the gateway
// connection's, the consumer's) come back to the endpoint's strand: through
// a mailbox that stop() closes. After that, a late completion is dropped
// where it runs instead of being posted to an executor that may be gone.
#pragma once

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace tarry::http_detail {

using endpoint_strand = boost::asio::strand<boost::asio::any_io_executor>;

class mailbox {
public:
    explicit mailbox(endpoint_strand strand) : strand_(std::move(strand)) {}

    /// Runs f on the strand, unless the mailbox was closed (then f is
    /// destroyed here, not run). Any thread.
    template <class F>
    void deliver(F&& f) {
        std::lock_guard lock(mutex_);
        if (strand_) boost::asio::post(*strand_, std::forward<F>(f));
    }
    void close() {
        std::lock_guard lock(mutex_);
        strand_.reset();
    }

private:
    std::mutex mutex_;
    std::optional<endpoint_strand> strand_;
};

/// A completion handler for another executor's operation that hands its
/// arguments to `f` on the endpoint's strand (through the mailbox).
template <class F>
auto via(std::shared_ptr<mailbox> box, F f) {
    return [box = std::move(box), f = std::move(f)](auto... args) mutable {
        box->deliver([f = std::move(f), args...]() mutable { f(std::move(args)...); });
    };
}

}  // namespace tarry::http_detail
