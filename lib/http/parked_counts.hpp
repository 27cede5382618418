// How many jobs wait in each wait queue, from the broker (a passive
// queue.declare per queue on a channel of the gateway connection), reused
// for a while so that a busy /jobs costs the broker one round per period.
// Lives on the endpoint's strand: every member is called there.
#pragma once

#include "jobs_json.hpp"
#include "mailbox.hpp"

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/connection.hpp"

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tarry::http_detail {

class parked_counts : public std::enable_shared_from_this<parked_counts> {
public:
    using answer = std::function<void(const std::vector<parked_count>&)>;

    /// `conn` may be null: every count is then unknown.
    parked_counts(amqp::connection* conn, std::vector<std::string> queues, std::chrono::milliseconds reuse,
                  std::chrono::milliseconds patience, std::shared_ptr<mailbox> box, endpoint_strand strand);

    /// Calls `done` (on the strand, never inside this call) with the counts:
    /// those of the last refresh when it is recent enough; else after a new
    /// one, or after `patience` with what is known (unknown for the rest).
    void get(answer done);
    /// The endpoint stops: whoever waits is forgotten (not answered), the
    /// timer cancelled and the channel closed, so that nothing waiting keeps
    /// the endpoint alive (a refresh's answer no longer comes back through
    /// the closed mailbox). On the strand.
    void close();
    /// The sum of the last known counts (empty when none is known).
    std::optional<std::uint64_t> total() const;

private:
    void refresh();
    void declare_next(std::size_t i);
    /// The refresh is over; counts from `unknown_from` on are unknown.
    void end_refresh(std::size_t unknown_from);
    /// Answers whoever waits with the counts as they are.
    void finish();

    amqp::connection* conn_;
    std::chrono::milliseconds reuse_, patience_;
    std::shared_ptr<mailbox> box_;
    endpoint_strand strand_;
    boost::asio::steady_timer patience_timer_;
    std::optional<amqp::channel> channel_;
    std::vector<parked_count> counts_;
    std::optional<std::chrono::steady_clock::time_point> fetched_;
    bool refreshing_ = false;
    std::vector<answer> waiting_;
};

}  // namespace tarry::http_detail
