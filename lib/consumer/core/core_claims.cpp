// Run claims (docs/periodic.md, "Run claims"): a copy of a periodic
// occurrence is claimed when it is admitted, runs only when its own claim
// came first, is acked unrun when another copy's did, and waits here when
// it falls due before any claim of its occurrence was read.
#include "consumer_core.hpp"

#include "../occurrence_claim.hpp"

namespace tarry::detail {

namespace {
// How often the claims of the occurrences that wait for them are made again
// (a claim lost on its way, or a stream that was down).
constexpr std::chrono::seconds claim_remake_interval{1};
}  // namespace

std::optional<std::pair<control::run_claim, claim_verdict>> consumer_core::claim_check(
    const amqp::basic_properties& props, std::uint32_t attempt, moment now) const {
    // Claimed before claims are in force too: a consumer that admits the
    // first occurrence of a new schedule before it has attached to the new
    // stream finds its claim there once it reads the stream.
    if (claims_ == nullptr) return std::nullopt;
    auto claim = claim_of(props, attempt, now.wall);
    if (!claim) return std::nullopt;
    const auto verdict =
        claims_->in_force() ? claims_->verdict(claim->occurrence_id, claim->copy) : claim_verdict::unknown;
    return std::pair{std::move(*claim), verdict};
}

void consumer_core::await_claim(held_job j, moment now) {
    const auto props = j.msg.properties();
    if (auto claim = claim_check(props, j.attempt, now); claim && claim->second == claim_verdict::unknown)
        actions_.push_back(action::claim{std::move(claim->first)});
    unclaimed_.push_back(std::move(j));
    if (!claim_remake_at_) claim_remake_at_ = now.steady + claim_remake_interval;
    // Read meanwhile (the worker's answer crossed the claim): no wait.
    recheck_claims(now, false);
}

void consumer_core::claims_read(moment now) {
    if (!unclaimed_.empty()) recheck_claims(now, false);
}

void consumer_core::recheck_claims(moment now, bool remake) {
    auto waiting = std::move(unclaimed_);
    unclaimed_.clear();
    for (auto& j : waiting) {
        if (!current(j)) {
            drop(j, "its channel was lost before it ran", now);
            continue;
        }
        const auto props = j.msg.properties();
        auto claim = claim_check(props, j.attempt, now);
        const auto verdict = claim && claims_->in_force() ? claim->second : claim_verdict::runs;
        if (verdict == claim_verdict::runs) {
            to_workers(std::move(j), now);
        } else if (verdict == claim_verdict::lost) {
            deduplicate_one(j, now);
        } else if (deadline_of(j, now.steady) <= now.steady) {
            give_back_one(std::move(j), "backlog", now);  // as a due job no worker took in time
        } else {
            if (remake) actions_.push_back(action::claim{std::move(claim->first)});
            unclaimed_.push_back(std::move(j));
        }
    }
    if (unclaimed_.empty()) claim_remake_at_.reset();
    else if (remake || !claim_remake_at_) claim_remake_at_ = now.steady + claim_remake_interval;
}

void consumer_core::deduplicate_one(const held_job& j, moment now) {
    ack_unrun(j, job_event::kind::deduplicated, counters_.deduplicated,
              "another copy of this occurrence won its run claim: acknowledged without running", now);
}

}  // namespace tarry::detail
