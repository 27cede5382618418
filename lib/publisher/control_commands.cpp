// The publisher's commands on the queue's control stream: cancel (a
// tombstone) and reschedule (a tombstone and the job's new copy, in one
// step). See async_cancel / async_reschedule in tarry/publisher/publisher.hpp;
// the schedule commands are in schedule_commands.cpp.
#include "tarry/publisher/publisher.hpp"

#include "publisher_state.hpp"
#include "scheduled_message.hpp"

#include "tarry/contract/schedule_headers.hpp"
#include "tarry/control/control_stream.hpp"
#include "tarry/control/tombstone.hpp"

#include <array>
#include <memory>

namespace tarry {

namespace {

// The refusal of a job id no tombstone can carry (message_id is a shortstr).
amqp::diagnostics job_id_refusal(const std::string& job_id) {
    if (job_id.empty()) return amqp::diagnostics::from(amqp::errc::invalid_argument, "the job id is empty");
    if (job_id.size() > 255)
        return amqp::diagnostics::from(amqp::errc::invalid_argument,
                                       "the job id is " + std::to_string(job_id.size()) +
                                           " bytes long; a message_id holds at most 255");
    return {};
}

}  // namespace

void publisher::state::run_command(std::string queue, amqp::message entry, std::optional<amqp::message> copy,
                                   completion h) {
    // The publishes of the command: it completes once each has, with the
    // first failure among them.
    struct join {
        std::shared_ptr<state> s;
        std::string queue;
        completion done;
        int left = 0;
        std::array<amqp::diagnostics, 2> parts;  // [0]: the tombstone's
        amqp::diagnostics first;
    };
    const auto part = [](const std::shared_ptr<join>& j, std::size_t i) {
        return completion(
            completion::handler_type([j, i](std::error_code) {
                amqp::diagnostics& why = j->parts[i];
                if (i == 0 && why.code == publish_errc::unroutable) {
                    why.message = "the control stream '" + control::stream_name(j->queue) +
                                  "' was deleted (the next command declares it again): " + why.message;
                    j->s->forget_control_stream(j->queue);
                }
                if (why.code && !j->first.code) j->first = std::move(why);
                if (--j->left == 0) std::move(j->done).complete(j->s->strand, std::move(j->first));
            }),
            &j->parts[i]);
    };
    with_control_stream(queue, declared_handler([self = shared_from_this(), queue, entry = std::move(entry),
                                                 copy = std::move(copy), h = std::move(h),
                                                 part](amqp::diagnostics declared) mutable {
        if (declared.code) return self->complete(std::move(h), std::move(declared));
        // Built whole: Boost 1.81's any_completion_handler cannot be
        // move-assigned (its operator= copies from an lvalue, which wraps
        // the handler in itself without end).
        auto j = std::shared_ptr<join>(new join{self, queue, std::move(h), copy ? 2 : 1, {}, {}});
        self->ensure_channel();
        // In this order on the one channel: the tombstone first.
        self->enqueue({"", control::stream_name(queue), std::move(entry), part(j, 0)});
        if (copy) self->enqueue({"", queue, std::move(*copy), part(j, 1)});
    }));
}

void publisher::cancel_(std::string queue, std::string job_id, completion h) {
    if (auto refused = job_id_refusal(job_id); refused.code) return s_->refuse(std::move(h), std::move(refused));
    const wall_time now = std::chrono::system_clock::now();
    const control::tombstone t{std::move(job_id), contract::next_generation(now), now};
    s_->run_command(std::move(queue), control::to_message(t), std::nullopt, std::move(h));
}

void publisher::reschedule_(std::string queue, std::string job_id, job_schedule when, amqp::message msg,
                            completion h) {
    if (auto refused = job_id_refusal(job_id); refused.code) return s_->refuse(std::move(h), std::move(refused));
    const wall_time now = std::chrono::system_clock::now();
    const std::uint64_t g = contract::next_generation(now);
    msg.properties.message_id = job_id;
    if (auto refused = detail::schedule_message(msg, when, now, g, s_->options); refused.code)
        return s_->refuse(std::move(h), std::move(refused));
    const control::tombstone t{std::move(job_id), g, now};
    s_->run_command(std::move(queue), control::to_message(t), std::move(msg), std::move(h));
}

}  // namespace tarry
