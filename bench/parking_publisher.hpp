// Far jobs published by a tarry::publisher that parks them itself
// (publisher_options::park_beyond), through a delay cascade of its own: a
// binary cascade of 1 s units under a fresh prefix, declared on
// construction and deleted with what it holds on destruction. Jobs are
// transient, as the benchmark's other publishes. For consumer_bench H
// --publisher-parks.
#pragma once

#include "consumer_bench_support.hpp"

#include "tarry/parking/delay_cascade.hpp"
#include "tarry/publisher/publisher.hpp"

#include <condition_variable>
#include <mutex>
#include <string>

namespace cbench {

class parking_publisher {
public:
    /// Declares the cascade on `e` (which must outlive this object).
    parking_publisher(endpoint& e, std::chrono::milliseconds park_beyond, std::size_t window = 2000);
    /// Waits for what is in flight, then deletes the cascade's queues (and
    /// every destination's delivery queue) and exchanges.
    ~parking_publisher();
    parking_publisher(const parking_publisher&) = delete;
    parking_publisher& operator=(const parking_publisher&) = delete;

    /// async_publish of a job (id `id`, a body of body_bytes) due at `due`
    /// to `queue`; blocks while `window` publishes are unconfirmed.
    void publish(const std::string& queue, const std::string& id, sys::time_point due);
    /// Waits until every publish is confirmed; dies if one failed.
    void wait_all();
    /// The cascade it parks through.
    const tarry::parking::delay_cascade& cascade() const noexcept { return cascade_; }

private:
    endpoint& e_;
    tarry::parking::delay_cascade cascade_;
    tarry::publisher pub_;
    std::size_t window_;
    std::vector<std::string> destinations_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::size_t outstanding_ = 0;
    std::size_t failures_ = 0;
    std::string first_failure_;
};

}  // namespace cbench
