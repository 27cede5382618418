// Whether a copy is cancelled: by its job id, or by its schedule.
#include "cancellations.hpp"

#include "tarry/contract/occurrence_headers.hpp"
#include "tarry/contract/schedule_headers.hpp"

namespace tarry::detail {

bool cancellations::covers(const amqp::basic_properties& props, wall_time now) const {
    if (!any()) return false;
    const std::uint64_t generation = contract::read_generation(props);
    if (props.message_id && !jobs->empty() && jobs->covers(*props.message_id, generation, now)) return true;
    if (schedules->empty()) return false;
    const auto* id = amqp::wire::text_header(props, contract::schedule_header);
    return id != nullptr && schedules->covers(*id, generation, now);
}

}  // namespace tarry::detail
