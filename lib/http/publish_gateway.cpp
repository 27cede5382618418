// The publish gateway: see publish_gateway.hpp.
#include "publish_gateway.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>

#include <deque>

namespace tarry::http_detail {

std::string new_message_id() {
    thread_local boost::uuids::random_generator generate;
    return boost::uuids::to_string(generate());
}

namespace {

publisher_options options_with(std::optional<std::chrono::milliseconds> max_delay) {
    publisher_options o;
    o.max_delay = max_delay;
    return o;
}

amqp::message message_of(gateway_message& m, const std::string& id) {
    amqp::message msg(m.body);
    auto& p = msg.properties;
    p.message_id = id;
    p.content_type = m.body_is_json ? "application/json" : "text/plain; charset=utf-8";
    if (m.ttl) p.expiration = std::to_string(m.ttl->count());
    if (!m.headers.empty()) p.headers = std::move(m.headers);
    return msg;
}

}  // namespace

// One request's publishes: results filled in as they complete, answered
// once, when the last completes or the time runs out.
struct request_state {
    std::vector<publish_result> results;
    std::deque<amqp::diagnostics> diags;  // one per publish, stable addresses
    std::size_t outstanding = 0;
    publish_gateway::answer done;
    boost::asio::steady_timer timer;

    explicit request_state(endpoint_strand& strand) : timer(strand) {}
    void answer_once() {
        if (!done) return;
        timer.cancel();
        auto d = std::move(done);
        done = nullptr;
        d(results);
    }
};

publish_gateway::publish_gateway(amqp::connection& conn, std::string queue,
                                 std::chrono::milliseconds default_delay,
                                 std::optional<std::chrono::milliseconds> max_delay, std::shared_ptr<mailbox> box,
                                 endpoint_strand strand)
    : conn_(conn), queue_(std::move(queue)), default_delay_(default_delay),
      publisher_(conn, options_with(max_delay)), box_(std::move(box)), strand_(strand) {}

std::shared_ptr<request_state> publish_gateway::start(std::size_t operations, std::chrono::milliseconds timeout,
                                                      answer done) {
    auto state = std::make_shared<request_state>(strand_);
    state->done = std::move(done);
    state->outstanding = operations;
    state->results.resize(operations);
    state->diags.resize(operations);
    const std::string not_confirmed =
        "not confirmed within " + std::to_string(timeout.count()) + " ms (it may still arrive)";
    for (auto& r : state->results) {
        r.error = std::make_error_code(std::errc::timed_out);
        r.message = not_confirmed;
    }
    state->timer.expires_after(timeout);
    state->timer.async_wait(boost::asio::bind_executor(strand_, [state](std::error_code ec) {
        if (!ec) state->answer_once();
    }));
    return state;
}

void publish_gateway::publish(std::vector<gateway_message> messages, std::chrono::milliseconds timeout,
                              answer done) {
    auto state = start(messages.size(), timeout, std::move(done));
    for (std::size_t i = 0; i < messages.size(); ++i) {
        auto& m = messages[i];
        std::string id = m.id ? *m.id : new_message_id();
        state->results[i].id = id;
        publisher_.async_publish("", queue_, message_of(m, id), schedule_of(m), state->diags[i],
                                 via(box_, completion_of(state, i)));
    }
}

void publish_gateway::cancel(std::string job_id, std::chrono::milliseconds timeout, answer done) {
    auto state = start(1, timeout, std::move(done));
    state->results[0].id = job_id;
    publisher_.async_cancel(queue_, std::move(job_id), state->diags[0], via(box_, completion_of(state, 0)));
}

void publish_gateway::reschedule(gateway_message m, std::chrono::milliseconds timeout, answer done) {
    auto state = start(1, timeout, std::move(done));
    const std::string id = *m.id;
    state->results[0].id = id;
    publisher_.async_reschedule(queue_, id, schedule_of(m), message_of(m, id), state->diags[0],
                                via(box_, completion_of(state, 0)));
}

job_schedule publish_gateway::schedule_of(const gateway_message& m) const {
    return job_schedule::after(m.delay ? *m.delay : std::chrono::microseconds(default_delay_));
}

std::function<void(std::error_code)> publish_gateway::completion_of(const std::shared_ptr<request_state>& state,
                                                                    std::size_t i) {
    return [state, i](std::error_code ec) {
        auto& r = state->results[i];
        r.error = ec;
        r.message = ec ? (state->diags[i].message.empty() ? ec.message() : state->diags[i].message) : std::string();
        if (--state->outstanding == 0) state->answer_once();
    };
}

}  // namespace tarry::http_detail
