// The successor of a periodic occurrence.
#include "occurrence_successor.hpp"

#include "tarry/contract/occurrence_headers.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/periodic/occurrence.hpp"
#include "tarry/periodic/recurrence.hpp"

namespace tarry::detail {

namespace {

struct release {
    contract::occurrence_headers headers;
    periodic::release_decision decision;
};

// What periodic::on_release says of `m` (attempt 1) at `released`; nothing
// when it is no readable occurrence.
std::optional<release> released_as(const amqp::message& m, std::uint32_t attempt, wall_time released) {
    if (attempt != 1 || !m.properties.message_id || m.properties.message_id->find('@') == std::string::npos)
        return std::nullopt;
    std::string why;
    auto o = contract::read_occurrence(m.properties, why);
    if (!o) return std::nullopt;
    const auto nominal = periodic::parse_nominal(o->nominal);
    if (!nominal) return std::nullopt;
    const auto spec = periodic::parse_spec(o->spec);
    if (!spec.spec) return std::nullopt;
    const auto schedule = periodic::make_recurrence(*spec.spec);
    if (!schedule.schedule) return std::nullopt;
    auto decision = periodic::on_release(*schedule.schedule, *nominal, o->number, released);
    return release{std::move(*o), std::move(decision)};
}

}  // namespace

bool runs_when_released(const amqp::message& m, std::uint32_t attempt, wall_time released) {
    const auto r = released_as(m, attempt, released);
    return !r || r->decision.run;
}

std::optional<occurrence_successor> successor_of(const amqp::message& occurrence, std::uint32_t attempt,
                                                 wall_time released, wall_time now) {
    const auto r = released_as(occurrence, attempt, released);
    if (!r || !r->decision.successor) return std::nullopt;
    const auto& o = r->headers;
    const auto& decision = r->decision;
    contract::occurrence_headers next{o.schedule_id, periodic::format_nominal(*decision.successor), o.spec,
                                      decision.successor_number, contract::new_copy_id()};
    occurrence_successor s{occurrence, *decision.successor};
    contract::write_occurrence_copy(s.msg.properties, next, s.due, contract::read_generation(occurrence.properties),
                                    now);
    return s;
}

}  // namespace tarry::detail
