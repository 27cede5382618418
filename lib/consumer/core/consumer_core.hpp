// The consumer's core, sans I/O: every decision about a delivery - admit,
// hold, park, dead-letter, run, settle, give back, drop - and the lanes'
// bookkeeping, as a single-threaded state machine. Inputs are calls (a
// delivery, a worker's outcome, a copy confirmed / refused, a lane opened /
// consuming / lost, the timer, stop); outputs are actions (core_actions.hpp)
// that the driver executes, and jobs put into the job store, from which
// worker threads pop due jobs. Time comes in with each input (a moment), so
// tests drive it with a fake clock and no broker.
//
// Invariants, each with one owner here:
// - settlement: a delivery is settled once, by whoever holds its held_job;
//   one that is no longer current (its channel's incarnation is gone) is
//   dropped - nothing published, nothing acked;
// - lanes: lane_table alone counts unsettled and held deliveries per lane;
// - the due backlog: at most max_due_waiting jobs due at arrival wait for a
//   worker (then the intake pauses until half of them have started), and a
//   due job not started backlog_margin() before the broker's
//   consumer_timeout (counted from its delivery) is given back;
// - copies: a copy not confirmed within copy_confirm_timeout counts as
//   refused; a refused copy is published again after a pause (the handler
//   is not run again) until its original would overstay, then the original
//   is given back.
// - the delivery limit: a delivery whose count of returns has reached the
//   renewal threshold below the limit in force is replaced at admission by
//   a confirmed copy; one near the limit is never given back by a nack (a
//   refused copy of it is published again until confirmed, or until
//   stop() closes its channel) (delivery_limit.hpp);
// - run claims: a copy of a periodic occurrence runs only once the
//   claim_oracle says it won its occurrence's claim; one that lost is acked
//   unrun; one whose claim is not read yet when it falls due waits here
//   (claims are made again every second meanwhile) until it is, or until
//   it would overstay the broker's consumer_timeout (given back).
#pragma once

#include "cancel_oracle.hpp"
#include "claim_oracle.hpp"
#include "delivery_limit.hpp"
#include "core_actions.hpp"
#include "duration_recorder.hpp"
#include "held_job.hpp"
#include "job_store.hpp"
#include "lane_table.hpp"

#include "tarry/amqp/message.hpp"
#include "tarry/consumer/job.hpp"
#include "tarry/consumer/job_event.hpp"
#include "tarry/consumer/subscription_options.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/parking/wait_ladder.hpp"
#include "tarry/retry/backoff.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace tarry::detail {

/// Now, on both clocks.
struct moment {
    steady_time steady;
    wall_time wall;
};

/// The counters behind consumer_stats and consumer_metrics: written by the
/// core (and by workers for `started`, `running` and the histograms), read
/// by any thread.
struct core_counters {
    std::atomic<std::uint64_t> received{0}, fast_path{0}, started{0}, succeeded{0}, handler_failures{0},
        retried{0}, dead_lettered{0}, parked{0}, requeued{0}, dropped{0}, copy_failures{0},
        late_confirms{0}, abandoned{0}, channel_losses{0}, lane_changes{0}, cancelled{0}, scheduled{0}, skipped{0},
        deduplicated{0}, hook_exceptions{0};
    std::atomic<std::size_t> running{0};
    /// Counted where dead_lettered and requeued are, so they add up to them.
    std::array<std::atomic<std::uint64_t>, dead_letter_reasons.size()> dead_lettered_by_reason{};
    std::array<std::atomic<std::uint64_t>, requeue_reasons.size()> requeued_by_reason{};
    duration_recorder start_lateness{start_lateness_bounds()};
    duration_recorder handler_duration{handler_duration_bounds()};
};

/// What a worker hands back: the job and what came of it.
struct finished_job {
    enum class result {
        ran,          ///< the handler ran; `outcome` says how it went
        not_current,  ///< its delivery was no longer current: not run
        not_yet_due,  ///< popped before its due time by the wall clock (a clock step): not run
        cancelled,    ///< a tombstone covers it (cancel_oracle): not run
        misfired,     ///< a periodic occurrence its misfire policy does not run: not run
        deduplicated, ///< another copy of its periodic occurrence won the run claim: not run
        unclaimed,    ///< no run claim of its periodic occurrence was read yet: not run, it waits
    };
    held_job job;
    result what = result::ran;
    std::optional<job_outcome> outcome;
    wall_time started{};
};

class consumer_core {
public:
    /// `store` (and `cancels` and `claims`, when given) must outlive the
    /// core. `epoch` is the steady time that held_job::delivered_ms counts
    /// from. Without `cancels` no job is ever cancelled; without `claims`
    /// every copy of an occurrence runs.
    consumer_core(const subscription_options& options, job_store& store, core_counters& counters,
                  retry::random_source random, steady_time epoch, bool events_wanted = true,
                  const cancel_oracle* cancels = nullptr, const claim_oracle* claims = nullptr);

    // ---- inputs -------------------------------------------------------------
    /// The consuming connection is open to a broker that says it is
    /// `version` (connection.start's server property): it decides the
    /// delivery limit in force when the options do not tell one. Until
    /// then an untold limit is taken as broker_default_delivery_limit.
    void broker_identified(std::string_view version);
    /// The topology is declared: start consuming if no lane does.
    void subscribed();
    /// Subscribing failed; try again in a while.
    void subscribe_failed(const std::string& why, moment now);
    /// The driver opened a channel for `lane` (start_lane): its new incarnation.
    std::uint32_t lane_opened(std::size_t lane);
    /// basic.consume on `lane` succeeded.
    void lane_consuming(std::size_t lane, std::uint32_t incarnation, std::string consumer_tag);
    /// start_lane failed (`incarnation` 0 when no channel opened).
    void lane_start_failed(std::size_t lane, std::uint32_t incarnation, const std::string& why, moment now);
    /// The lane's channel closed or its consumer was cancelled by the broker
    /// (reported twice, or for an earlier incarnation: nothing happens).
    void lane_lost(std::size_t lane, std::uint32_t incarnation, const std::string& why, moment now);
    /// The broker cancelled the lane's consumer (a server basic.cancel: its
    /// queue was deleted, or RabbitMQ 4.3's consumer timeout on a quorum
    /// queue). The channel stays open: what the lane holds stays held and
    /// is settled on it (4.3 returns only a delivery that overstayed its
    /// timeout, which can only be a running job's: it may run twice, as
    /// when 3.10 closes the channel). Its consumer tag is cancelled by us too (4.3 would put the consumer
    /// back in service). Another lane consumes after a pause that doubles
    /// while cancels follow each other with no delivery between them
    /// (connection event `consumer_cancelled`). Stale or repeated reports
    /// do nothing.
    void consumer_cancelled(std::size_t lane, std::uint32_t incarnation, const std::string& why, moment now);
    /// The consuming connection is gone: every lane with it, in one pass.
    void connection_lost(const std::string& why, moment now);
    /// Takes out the jobs of lanes lost since the last sweep (asked for by a
    /// sweep action, so that the lanes of one connection loss cost one pass).
    void sweep(moment now);

    void delivery(std::size_t lane, std::uint32_t incarnation, amqp::delivery d, moment now);
    void finished(finished_job f, moment now);
    /// frame_max: the copies connection's, for a copy refused as too large.
    void copy_confirmed(std::uint64_t publish_id, moment now);
    void copy_refused(std::uint64_t publish_id, std::error_code why, std::uint32_t frame_max, moment now);
    /// The copies connection is open (again): copies refused meanwhile
    /// ("not connected") are published again now, and the pause between
    /// refusals starts over (an outage's refusals say nothing of the broker).
    void copies_connected(moment now);
    /// Timers: call at next_wake() (or later).
    void tick(moment now);
    /// Run claims were read: the occurrences waiting for theirs are looked
    /// at again (those that won go to the workers, those that lost are acked).
    void claims_read(moment now);

    /// Stop taking deliveries: every consuming lane is cancelled.
    void stop(moment now);
    /// Gives back (nack, requeue) jobs that will not run: reason `shutdown`.
    void give_back(std::vector<held_item> items, moment now);

    // ---- outputs ------------------------------------------------------------
    /// The actions decided since the last call, in order, swapped into
    /// `out` (cleared first), so that a driver reuses one vector.
    void take_actions(std::vector<core_action>& out);
    /// When tick() is next needed, if ever.
    std::optional<steady_time> next_wake() const;

    // ---- state --------------------------------------------------------------
    bool stopping() const noexcept { return stopping_; }
    /// Copies published (or waiting to be published again) whose originals
    /// are not yet settled.
    std::size_t copies_pending() const noexcept { return copies_.size(); }
    /// Occurrences due that wait for their run claim to be read.
    std::size_t awaiting_claims() const noexcept { return unclaimed_.size(); }
    const lane_table& lanes() const noexcept { return lanes_; }
    /// A lane consumes (or the intake is paused while the due backlog drains).
    bool consuming() const noexcept { return intake_ != lane_table::none || paused_; }
    /// When the oldest delivery not yet settled arrived; empty when none
    /// is. Any thread.
    std::optional<steady_time> oldest_unsettled() const noexcept;
    const subscription_options& options() const noexcept { return options_; }
    /// The work queue's delivery limit in force; empty: none.
    std::optional<std::uint32_t> delivery_limit() const noexcept { return delivery_limit_; }

private:
    /// The event a step of j makes.
    job_event event_of(const held_job& j, job_event::kind k, wall_time at) const;
    /// t as a delivery stamp: ms since epoch_, modulo 2^32 (it wraps every
    /// 49.7 days; delivered_at() reads it back as an age).
    std::uint32_t delivered_ms(steady_time t) const noexcept;
    /// When j was delivered, from its stamp and `now`: exact to the
    /// millisecond for any delivery younger than 49.7 days.
    steady_time delivered_at(const held_job& j, steady_time now) const noexcept;

    // What becomes of a copy once it is confirmed.
    struct copy_effect {
        copy_effect(job_event::kind k, std::string r = {}, std::optional<wall_time> next = std::nullopt)
            : kind(k), reason(std::move(r)), next_due(next) {}
        job_event::kind kind;
        std::string reason;  // dead, requeued: why
        std::optional<wall_time> next_due;
        // scheduled (a successor): the handler's outcome, settled once the
        // successor is confirmed (none: a misfired occurrence, skipped), and
        // when the handler started.
        std::optional<job_outcome> then;
        wall_time started{};
    };
    struct pending_copy {
        held_job original;
        std::string exchange;
        std::string routing_key;
        // Kept to publish again after a refusal; a parked copy is made again
        // from the original instead (the hot path of parking copies nothing).
        std::optional<amqp::message> copy;
        copy_effect effect;
        const char* copy_name;  // null: the copy is the unreadable dead letter already
        std::uint64_t publish_id = 0;  // the publish awaited; 0 while paused
        // Awaiting: the confirm's deadline; paused: when to publish again.
        std::optional<steady_time> timer;
    };

    // admission (core_admission.cpp)
    void admit(held_job j, amqp::message msg, moment now);
    /// j came back often enough that one more return of ours or the
    /// broker's could drop it: a fresh copy (no count) goes to the work
    /// queue, and j is acked once it is confirmed (requeued, reason
    /// `delivery-limit`).
    void renew(held_job j, moment now);
    void hold(held_job j, moment now);
    void park_or_hold(held_job j, moment now);
    void push_held(held_job j, moment now);
    void fast_path(held_job j, moment now);
    /// Hands j, due, to the next worker (given back when the store is closed).
    void to_workers(held_job j, moment now);
    std::size_t cost_of(const held_job& j) const noexcept;

    // settlement (core_settlement.cpp)
    /// A periodic occurrence (attempt 1, not cancelled) first publishes its
    /// successor (occurrence_successor.hpp) and settles once that is
    /// confirmed; `successor_published` says it was.
    void settle(held_job j, const job_outcome& outcome, wall_time started, moment now,
                bool successor_published = false);
    void retry_or_dead_letter(held_job j, const job_outcome& failure, wall_time started, moment now);
    /// Parks j: a copy published to `exchange` with `routing_key` (a wait
    /// queue's name with the default exchange, or a cascade route).
    void park(held_job j, const std::string& exchange, const std::string& routing_key, moment now);
    void dead_letter(held_job j, std::string reason, std::optional<amqp::message> letter, moment now,
                     const char* copy_name = "dead letter");
    void ack(const held_job& j);
    void nack(const held_job& j, const char* reason, moment now, bool emit_event = true);
    /// Gives j back to the queue: a nack, or, near the work queue's
    /// delivery limit, a copy acked once confirmed.
    void give_back_one(held_job j, const char* reason, moment now, bool emit_event = true);
    /// j's count of returns is near the delivery limit in force
    /// (delivery_limit.hpp): never given back by a nack.
    bool near_delivery_limit(const held_job& j) const;
    void drop(const held_job& j, std::string why, moment now);
    /// Whether a tombstone covers this copy of `msg` (its message_id and
    /// generation) at `now`.
    bool covered(const amqp::basic_properties& props, wall_time now) const;
    /// Acks j without running it further: event `cancelled`.
    void cancel_one(const held_job& j, moment now, bool after_run = false);
    /// Acks a misfired occurrence without running it: event `skipped`.
    void skip_one(const held_job& j, moment now);
    /// Acks j without running it (further): `counter` counts it, event `k`
    /// says `reason`. Nothing when j is no longer current.
    void ack_unrun(const held_job& j, job_event::kind k, std::atomic<std::uint64_t>& counter, const char* reason,
                   moment now, bool cancel_requested = false);
    /// The lane's counts for j, which leaves them; false if j is not current.
    bool settling(const held_job& j);
    bool current(const held_job& j) const noexcept { return lanes_.current(j.lane, j.incarnation); }
    steady_time deadline_of(const held_job& j, steady_time now) const noexcept;

    // run claims (core_claims.cpp)
    /// The claim a copy with `props` makes, when it is an occurrence (and
    /// the core has a claim_oracle); with its verdict (unknown while claims
    /// are not in force: the claim is made all the same).
    std::optional<std::pair<control::run_claim, claim_verdict>> claim_check(const amqp::basic_properties& props,
                                                                            std::uint32_t attempt, moment now) const;
    /// j fell due before its claim was read: it waits in unclaimed_.
    void await_claim(held_job j, moment now);
    /// Looks at the waiting occurrences again; `remake`: their claims are
    /// made again (the timer, every claim_remake_interval).
    void recheck_claims(moment now, bool remake);
    /// Acks j without running it: another copy won its run claim.
    void deduplicate_one(const held_job& j, moment now);

    // copies (core_copies.cpp)
    void replace(held_job j, std::string exchange, std::string routing_key, amqp::message copy,
                 copy_effect effect, const char* copy_name, moment now);
    void publish(std::uint64_t entry, pending_copy& p, amqp::message message, moment now);
    /// The copy to publish again after a refusal.
    amqp::message copy_again(const pending_copy& p, moment now) const;
    void copy_failed(std::uint64_t entry, pending_copy& p, const std::string& why, moment now);
    void copy_timers(moment now);
    void set_timer(std::uint64_t entry, pending_copy& p, std::optional<steady_time> at);
    pending_copy take_copy(std::map<std::uint64_t, pending_copy>::iterator it);

    // lanes (core_lanes.cpp)
    void start_lane(std::size_t lane);
    void cancel(std::size_t lane);
    void resubscribe_in(std::chrono::milliseconds delay, moment now);
    /// Subscribes again at `at` at the latest.
    void resubscribe_by(steady_time at);
    void maybe_rotate();
    /// Consumes again on a lane a pause cancelled that still holds jobs
    /// (one at a time), unless paused, stopping or starting.
    void consume_on_holders();
    void check_backlog(moment now);
    /// The due backlog bound: the intake pauses while max_due_waiting jobs
    /// due at arrival wait for a worker, and resumes at half of it.
    void pause_if_full();
    void resume_if_drained();

    void emit(job_event e);
    void report(connection_event::kind k, std::string detail, std::chrono::milliseconds delay = {}) {
        actions_.push_back(action::report{{k, false, std::move(detail), delay, 0}});
    }

    const subscription_options& options_;
    const contract::schedule_rules rules_;
    const parking::wait_ladder ladder_;
    /// The delay cascade jobs are parked through instead (parking_strategy).
    const std::optional<parking::delay_cascade> cascade_;
    job_store& store_;
    core_counters& counters_;
    retry::random_source random_;
    const steady_time epoch_;
    const bool events_wanted_;
    const cancel_oracle* const cancels_;
    const claim_oracle* const claims_;
    std::optional<std::uint32_t> delivery_limit_;  // in force; empty: none

    lane_table lanes_;
    std::size_t intake_ = lane_table::none;   // the newest lane consuming (older ones may consume too)
    std::size_t rotating_from_ = lane_table::none;  // a hand-over in progress: the old lane
    bool starting_ = false;                   // a start_lane action is out
    bool rearming_ = false;                   // it consumes again on a lane a pause cancelled
    bool paused_ = false;                     // every lane is cancelled while the due backlog drains
    bool stopping_ = false;
    bool wake_asked_ = false;
    bool sweep_asked_ = false;
    std::vector<std::pair<std::uint32_t, std::string>> lost_incarnations_;  // to sweep, and why
    std::optional<steady_time> resubscribe_at_;
    std::size_t cancelled_lane_ = lane_table::none;  // the broker cancelled its consumer: another lane first
    unsigned cancels_in_a_row_ = 0;                  // broker cancels with no delivery between them
    struct early_cancel {
        std::size_t lane;
        std::uint32_t incarnation;
        steady_time resubscribe_at;
    };
    std::optional<early_cancel> early_cancel_;  // cancelled by the broker before its consume-ok was handled
    std::optional<steady_time> backlog_check_at_;
    std::vector<held_job> unclaimed_;              // due, waiting for their run claim to be read
    std::optional<steady_time> claim_remake_at_;  // when their claims are made again

    std::uint64_t last_id_ = 0;
    std::map<std::uint64_t, pending_copy> copies_;                 // by entry id
    std::unordered_map<std::uint64_t, std::uint64_t> publishes_;  // publish id -> entry id
    std::set<std::pair<steady_time, std::uint64_t>> copy_timers_;  // (when, entry id)
    unsigned refused_in_a_row_ = 0;
    retry::duration last_pause_{0};

    std::vector<core_action> actions_;
};

}  // namespace tarry::detail
