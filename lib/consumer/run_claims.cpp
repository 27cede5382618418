// Which copy of an occurrence runs, from the first claim read.
#include "run_claims.hpp"

#include "occurrence_claim.hpp"

namespace tarry::detail {

claim_verdict run_claims::verdict(std::string_view occurrence_id, std::string_view copy) const {
    if (!in_force()) return claim_verdict::runs;
    const auto winner = table.winner(occurrence_id);
    if (!winner) return claim_verdict::unknown;
    return *winner == copy ? claim_verdict::runs : claim_verdict::lost;
}

claim_verdict run_claims::verdict_of(const amqp::basic_properties& props, std::uint32_t attempt) const {
    if (!in_force()) return claim_verdict::runs;
    const auto claim = claim_of(props, attempt, {});
    return claim ? verdict(claim->occurrence_id, claim->copy) : claim_verdict::runs;
}

}  // namespace tarry::detail
