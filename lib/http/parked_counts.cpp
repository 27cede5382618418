// The parked counts: see parked_counts.hpp.
#include "parked_counts.hpp"

#include <boost/asio/bind_executor.hpp>

namespace tarry::http_detail {

parked_counts::parked_counts(amqp::connection* conn, std::vector<std::string> queues,
                             std::chrono::milliseconds reuse, std::chrono::milliseconds patience,
                             std::shared_ptr<mailbox> box, endpoint_strand strand)
    : conn_(conn), reuse_(reuse), patience_(patience), box_(std::move(box)), strand_(strand),
      patience_timer_(strand) {
    for (auto& q : queues) counts_.push_back({std::move(q), std::nullopt});
}

std::optional<std::uint64_t> parked_counts::total() const {
    std::optional<std::uint64_t> sum;
    for (const auto& c : counts_)
        if (c.messages) sum = sum.value_or(0) + *c.messages;
    return sum;
}

void parked_counts::get(answer done) {
    const bool fresh = fetched_ && std::chrono::steady_clock::now() - *fetched_ < reuse_;
    if (fresh || !conn_ || counts_.empty()) {
        boost::asio::post(strand_, [self = shared_from_this(), done = std::move(done)] { done(self->counts_); });
        return;
    }
    waiting_.push_back(std::move(done));
    if (waiting_.size() == 1) {
        // Whoever waits is answered after `patience` at the latest.
        patience_timer_.expires_after(patience_);
        patience_timer_.async_wait(
            boost::asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec) {
                if (!ec) self->finish();
            }));
    }
    if (refreshing_) return;
    refreshing_ = true;
    refresh();
}

void parked_counts::refresh() {
    if (channel_ && channel_->is_open()) {
        declare_next(0);
        return;
    }
    channel_.reset();
    // The connection's thread may drop this callback (the mailbox closed)
    // after the endpoint's io_context is gone: it must not own the counts,
    // whose strand would then be destroyed there (weak, as below).
    conn_->async_open_channel(via(box_, [w = weak_from_this()](std::error_code ec, amqp::channel ch) {
        const auto self = w.lock();
        if (!self) return;
        if (ec) return self->end_refresh(0);
        self->channel_ = std::move(ch);
        self->declare_next(0);
    }));
}

// One queue at a time: a passive declare answers with its ready messages;
// a queue that does not exist (404, which closes the channel) is unknown.
void parked_counts::declare_next(std::size_t i) {
    if (i == counts_.size()) {
        fetched_ = std::chrono::steady_clock::now();
        return end_refresh(i);
    }
    amqp::queue_options o;
    o.name = counts_[i].queue;
    o.passive = true;
    channel_->async_declare_queue(
        std::move(o), via(box_, [w = weak_from_this(), i](std::error_code ec, amqp::queue_info info) {
            const auto self = w.lock();
            if (!self) return;
            if (ec) {
                // With the channel closed, the rest stay unknown until the next refresh.
                if (!self->channel_->is_open()) return self->end_refresh(i);
                self->counts_[i].messages.reset();
            } else {
                self->counts_[i].messages = info.message_count;
            }
            self->declare_next(i + 1);
        }));
}

void parked_counts::end_refresh(std::size_t unknown_from) {
    for (std::size_t k = unknown_from; k < counts_.size(); ++k) counts_[k].messages.reset();
    refreshing_ = false;
    finish();
}

void parked_counts::close() {
    patience_timer_.cancel();
    waiting_.clear();
    if (channel_ && channel_->is_open()) channel_->async_close([](std::error_code) {});
    channel_.reset();
}

void parked_counts::finish() {
    patience_timer_.cancel();
    auto waiting = std::move(waiting_);
    waiting_.clear();
    for (auto& done : waiting) done(counts_);
}

}  // namespace tarry::http_detail
