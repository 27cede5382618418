#include "consumer_workers.hpp"

#include "occurrence_successor.hpp"

#include "tarry/contract/schedule_headers.hpp"
#include "tarry/schedule/worker_pool.hpp"

namespace tarry::detail {

worker_context::worker_context(job_handler handler, std::function<bool(const std::exception_ptr&)> is_permanent,
                               std::function<void(const job_event&)> on_event,
                               std::shared_ptr<core_counters> counters,
                               std::shared_ptr<const lane_incarnations> incarnations, std::function<void()> deliver,
                               std::shared_ptr<const cancellations> cancels,
                               std::shared_ptr<const run_claims> claims)
    : handler_(std::move(handler)),
      is_permanent_(std::move(is_permanent)),
      on_event_(std::move(on_event)),
      counters_(std::move(counters)),
      incarnations_(std::move(incarnations)),
      deliver_(std::move(deliver)),
      cancels_(std::move(cancels)),
      claims_(std::move(claims)) {}

void worker_context::run(held_item& item) {
    job_run r;
    if (!begin(item, r)) return;
    job_outcome outcome = job_outcome::success();
    try {
        outcome = handler_(*r.view);
    } catch (...) {
        outcome = outcome_of(std::current_exception());
    }
    end(r, std::move(outcome));
}

bool worker_context::begin(held_item& item, job_run& r) {
    finished_job& f = r.finished;
    f = {std::move(item.value), finished_job::result::ran, std::nullopt, {}};
    held_job& j = f.job;
    // Its channel is gone: the broker redelivers it; running it would duplicate it.
    if (!incarnations_->current(j.lane, j.incarnation)) {
        f.what = finished_job::result::not_current;
        hand_back(std::move(f));
        return false;
    }
    f.started = std::chrono::system_clock::now();
    if (f.started < j.due) {  // the wall clock stepped back since it was held: never early
        f.what = finished_job::result::not_yet_due;
        hand_back(std::move(f));
        return false;
    }
    // A job due at arrival was kept as decoded; a held one is unpacked now.
    const amqp::message& msg = j.msg.kept() ? *j.msg.kept() : r.unpacked.emplace(j.msg.unpack());
    // Checked again at release: a tombstone (or an upsert or removal of an
    // occurrence's schedule) read while it was held.
    const std::uint64_t generation = contract::read_generation(msg.properties);
    if (cancels_ && cancels_->covers(msg.properties, f.started)) {
        f.what = finished_job::result::cancelled;
        hand_back(std::move(f));
        return false;
    }
    // One copy of an occurrence runs: the one whose claim came first. Before
    // the misfire check, since a skipped occurrence publishes a successor.
    if (claims_) {
        const auto verdict = claims_->verdict_of(msg.properties, j.attempt);
        if (verdict != claim_verdict::runs) {
            f.what = verdict == claim_verdict::lost ? finished_job::result::deduplicated
                                                    : finished_job::result::unclaimed;
            hand_back(std::move(f));
            return false;
        }
    }
    // A periodic occurrence found too late may be one its policy skips.
    if (!runs_when_released(msg, j.attempt, f.started)) {
        f.what = finished_job::result::misfired;
        hand_back(std::move(f));
        return false;
    }
    job_event run{job_event::kind::run, {}, j.due, f.started, j.attempt, {}, {}, false};
    if (msg.properties.message_id) run.id = *msg.properties.message_id;
    {
        std::lock_guard lock(running_mutex_);
        r.id = ++last_running_id_;
        running_.emplace(r.id, running_job{run});
    }
    ++counters_->started;
    counters_->start_lateness.observe(f.started - j.due);
    ++counters_->running;
    emit(run);
    r.view.emplace(tarry::job{msg, j.due, f.started, j.attempt, j.redelivered, generation,
                              cancels_ ? cancels_->jobs.get() : nullptr});
    r.began = std::chrono::steady_clock::now();
    return true;
}

void worker_context::end(job_run& r, job_outcome outcome) {
    counters_->handler_duration.observe(std::chrono::steady_clock::now() - r.began);
    --counters_->running;
    {
        std::lock_guard lock(running_mutex_);
        const auto it = running_.find(r.id);
        const bool abandoned = it->second.abandoned;
        running_.erase(it);
        if (abandoned) return;  // stop() gave up on it: the broker redelivers it
    }
    r.view.reset();
    r.finished.outcome = std::move(outcome);
    hand_back(std::move(r.finished));
}

std::size_t worker_context::abandon_running(wall_time now) {
    std::vector<job_event> events;
    {
        std::lock_guard lock(running_mutex_);
        for (auto& [id, r] : running_) {
            if (r.abandoned) continue;
            r.abandoned = true;
            job_event e = r.event;
            e.what = job_event::kind::abandoned;
            e.at = now;
            e.reason = "still running at the end of shutdown_grace: not acknowledged, the broker redelivers it";
            events.push_back(std::move(e));
        }
    }
    counters_->abandoned += events.size();
    for (const auto& e : events) emit(e);
    return events.size();
}

void worker_context::hand_back(finished_job f) {
    // To the I/O thread, batched: one post carries every outcome that
    // arrives before the I/O thread gets to it.
    std::lock_guard lock(inbox_mutex_);
    if (closed_) return;
    const bool first = inbox_.empty();
    inbox_.push_back(std::move(f));
    if (first) deliver_();
}

std::vector<finished_job> worker_context::take_finished() {
    std::vector<finished_job> out;
    std::lock_guard lock(inbox_mutex_);
    out.swap(inbox_);
    return out;
}

void worker_context::close() {
    std::lock_guard lock(inbox_mutex_);
    closed_ = true;
    inbox_.clear();
}

namespace {
bool is_permanent_error(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const permanent_error&) {
        return true;
    } catch (...) {
        return false;
    }
}
}  // namespace

job_outcome worker_context::outcome_of(std::exception_ptr e) const {
    std::string what = exception_text(e);
    const bool permanent = is_permanent_error(e) || (is_permanent_ && is_permanent_(e));
    return permanent ? job_outcome::reject(std::move(what)) : job_outcome::failure(std::move(what));
}

void worker_context::emit(const job_event& e) const {
    if (on_event_) on_event_(e);
}

}  // namespace tarry::detail
