// The run claim of an occurrence's copy.
#include "occurrence_claim.hpp"

#include "tarry/contract/occurrence_headers.hpp"

namespace tarry::detail {

std::optional<control::run_claim> claim_of(const amqp::basic_properties& props, std::uint32_t attempt,
                                           wall_time now) {
    if (attempt != 1 || !props.message_id || props.message_id->find('@') == std::string::npos) return std::nullopt;
    std::string why;
    auto o = contract::read_occurrence(props, why);
    if (!o) return std::nullopt;
    return control::run_claim{o->id(), std::move(o->schedule_id), std::move(o->nominal), std::move(o->copy), now};
}

}  // namespace tarry::detail
