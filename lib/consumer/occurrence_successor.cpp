// The successor of a periodic occurrence.
#include "occurrence_successor.hpp"

#include "tarry/contract/occurrence_headers.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/periodic/occurrence.hpp"
#include "tarry/periodic/recurrence.hpp"

namespace tarry::detail {

std::optional<occurrence_successor> successor_of(const amqp::message& occurrence, std::uint32_t attempt,
                                                 wall_time released, wall_time now) {
    if (attempt != 1) return std::nullopt;
    std::string why;
    const auto o = contract::read_occurrence(occurrence.properties, why);
    if (!o) return std::nullopt;
    const auto nominal = periodic::parse_nominal(o->nominal);
    if (!nominal) return std::nullopt;
    const auto spec = periodic::parse_spec(o->spec);
    if (!spec.spec) return std::nullopt;
    const auto schedule = periodic::make_recurrence(*spec.spec);
    if (!schedule.schedule) return std::nullopt;
    const auto decision = periodic::on_release(*schedule.schedule, *nominal, o->number, released);
    if (!decision.successor) return std::nullopt;
    contract::occurrence_headers next{o->schedule_id, periodic::format_nominal(*decision.successor), o->spec,
                                      decision.successor_number, contract::new_copy_id()};
    occurrence_successor s{occurrence, *decision.successor};
    contract::write_occurrence_copy(s.msg.properties, next, s.due, contract::read_generation(occurrence.properties),
                                    now);
    return s;
}

}  // namespace tarry::detail
