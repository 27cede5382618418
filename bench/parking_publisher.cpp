// See parking_publisher.hpp.
#include "parking_publisher.hpp"

#include "cascade_setup.hpp"

#include <algorithm>

namespace cbench {

namespace {

tarry::parking::cascade_spec bench_cascade() {
    tarry::parking::cascade_spec s;
    s.prefix = "tarry-bench-park-" + fresh_queue_name("cascade");
    return s;  // binary, 28 levels of 1 s, classic queues
}

tarry::publisher_options parking_options(const tarry::parking::cascade_spec& spec,
                                         std::chrono::milliseconds park_beyond) {
    tarry::publisher_options o;
    o.delay_cascade = spec;
    o.park_beyond = park_beyond;
    o.persistent = false;  // transient, as H's other publishes (job_message)
    return o;
}

}  // namespace

parking_publisher::parking_publisher(endpoint& e, std::chrono::milliseconds park_beyond, std::size_t window)
    : e_(e),
      cascade_(bench_cascade()),
      pub_(e.conn, parking_options(cascade_.spec(), park_beyond)),
      window_(window) {
    declare_cascade(e, cascade_);
}

parking_publisher::~parking_publisher() {
    {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, 60s, [&] { return outstanding_ == 0; });
    }
    delete_cascade(e_, cascade_, destinations_);
}

void parking_publisher::publish(const std::string& queue, const std::string& id, sys::time_point due) {
    {
        std::unique_lock lock(mu_);
        if (!cv_.wait_for(lock, 120s, [&] { return outstanding_ < window_; }))
            die("parking publisher: confirms stopped coming");
        ++outstanding_;
        if (std::find(destinations_.begin(), destinations_.end(), queue) == destinations_.end())
            destinations_.push_back(queue);
    }
    amqp::message m(std::string(body_bytes, 'x'));
    m.properties.message_id = id;
    pub_.async_publish("", queue, std::move(m), tarry::job_schedule::at(due), [this](std::error_code ec) {
        std::lock_guard lock(mu_);
        if (ec && failures_++ == 0) first_failure_ = ec.message() + " (" + pub_.last_error().message + ")";
        --outstanding_;
        cv_.notify_all();
    });
}

void parking_publisher::wait_all() {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, 120s, [&] { return outstanding_ == 0; })) die("parking publisher: confirms stopped coming");
    if (failures_ > 0) die("parking publisher: " + std::to_string(failures_) + " publishes failed: " + first_failure_);
}

}  // namespace cbench
