// The publisher's periodic-schedule commands: upsert (an upsert entry and
// the chain's first occurrence), remove (a removal entry) and list (the
// control stream read once). See tarry/publisher/publisher.hpp and
// docs/periodic.md.
#include "tarry/publisher/publisher.hpp"

#include "publisher_state.hpp"
#include "scheduled_message.hpp"

#include "tarry/contract/schedule_headers.hpp"
#include "tarry/control/schedule_catalog.hpp"
#include "tarry/periodic/error.hpp"
#include "tarry/periodic/occurrence.hpp"

#include <memory>

namespace tarry {

namespace {

// An occurrence id, `<id>@<nominal>`, must fit a message_id (255 bytes):
// a nominal takes up to 24 (sign, digits, fraction).
constexpr std::size_t max_schedule_id = 230;

// The chain's first occurrence is the first one at least this long after
// the command: the command declares the stream (and then waits 100 ms for
// it), appends its entry and only then publishes the occurrence, so one due
// sooner would reach the queue already late.
constexpr std::chrono::milliseconds first_occurrence_lead{250};

amqp::diagnostics schedule_id_refusal(const std::string& id) {
    if (id.empty()) return amqp::diagnostics::from(amqp::errc::invalid_argument, "the schedule id is empty");
    if (id.size() > max_schedule_id)
        return amqp::diagnostics::from(amqp::errc::invalid_argument,
                                       "the schedule id is " + std::to_string(id.size()) + " bytes long; at most " +
                                           std::to_string(max_schedule_id) + " (its occurrence ids must fit 255)");
    return {};
}

}  // namespace

void publisher::upsert_schedule_(std::string queue, std::string schedule_id, periodic::schedule_spec spec,
                                 amqp::message msg, completion h) {
    if (auto refused = schedule_id_refusal(schedule_id); refused.code)
        return s_->refuse(std::move(h), std::move(refused));
    auto compiled = periodic::make_recurrence(spec);
    if (!compiled.schedule)
        return s_->refuse(std::move(h), amqp::diagnostics::from(compiled.error, "schedule '" + schedule_id +
                                                                                  "': " + compiled.detail));
    const wall_time now = std::chrono::system_clock::now();
    const auto first = compiled.schedule->first(now + first_occurrence_lead);
    if (!first)
        return s_->refuse(std::move(h), amqp::diagnostics::from(periodic::errc::invalid_schedule,
                                                                "schedule '" + schedule_id +
                                                                    "' has no occurrence left (its end is past)"));
    const std::uint64_t g = contract::next_generation(now);
    const auto text = periodic::to_string(spec);
    const contract::occurrence_headers o{schedule_id, periodic::format_nominal(*first), text, 1,
                                         contract::new_copy_id()};
    auto occurrence = control::occurrence_message(msg, o, *first, g, now);
    const control::schedule_upsert u{std::move(schedule_id), g, text, std::move(msg), now};
    s_->run_command(std::move(queue), control::to_entry(u), std::move(occurrence), std::move(h));
}

void publisher::remove_schedule_(std::string queue, std::string schedule_id, completion h) {
    if (auto refused = schedule_id_refusal(schedule_id); refused.code)
        return s_->refuse(std::move(h), std::move(refused));
    const wall_time now = std::chrono::system_clock::now();
    const control::schedule_removal r{std::move(schedule_id), contract::next_generation(now), now};
    s_->run_command(std::move(queue), control::to_entry(r), std::nullopt, std::move(h));
}

void publisher::list_schedules_(std::string queue, std::chrono::milliseconds timeout, list_completion h) {
    struct listing {
        control::schedule_catalog catalog;
        amqp::diagnostics diag;
        list_completion done;
    };
    // Built whole: an op_handler is never assigned (see run_command).
    auto l = std::shared_ptr<listing>(new listing{{}, {}, std::move(h)});
    auto entry = [l](const amqp::message& m) {
        std::string why;
        if (auto e = control::read_schedule_entry(m, why)) l->catalog.add(*e);
    };
    s_->read_control_stream(
        std::move(queue), timeout, std::move(entry),
        completion(completion::handler_type([l, s = s_](std::error_code) {
                       auto why = std::move(l->diag);
                       if (why.code == amqp::reply_code::not_found) why = {};  // no stream: no schedules
                       std::move(l->done).complete(s->strand, why, why.code ? std::vector<control::schedule_upsert>{}
                                                                             : l->catalog.live());
                   }),
                   &l->diag));
}

}  // namespace tarry
