// Running due jobs on worker threads; outcomes go back to the I/O thread.
#include "consumer_impl.hpp"

#include <boost/asio/post.hpp>

namespace tarry {

void consumer::impl::run(due_item<job>& item) {
    job& j = item.value;
    if (!current(j)) {  // its channel is gone: the broker redelivers it; running it would duplicate
        ++counters_.dropped;
        emit(event_of(j, job_event::kind::dropped));
        return;
    }
    // A job due at arrival was kept as decoded; a held one is unpacked now.
    std::optional<amqp::message> unpacked;
    const amqp::message& msg = j.msg.kept() ? *j.msg.kept() : unpacked.emplace(j.msg.unpack());
    const wall_time started = std::chrono::system_clock::now();
    ++counters_.started;
    auto e = event_of(j, job_event::kind::run, msg.properties);
    e.at = started;
    emit(std::move(e));
    std::optional<job_outcome> outcome;
    try {
        const tarry::job view{msg, j.due, started, j.attempt, j.redelivered};
        outcome = handler_(view);
    } catch (...) {
        outcome = outcome_of(std::current_exception());
    }
    if (outcome->what() == job_outcome::kind::success) {
        ++counters_.succeeded;
        emit(event_of(j, job_event::kind::succeeded, msg.properties));
    } else if (outcome->what() == job_outcome::kind::failure) {
        ++counters_.failed;
    }
    // To the I/O thread, batched: one post carries every outcome that
    // arrives before the I/O thread gets to it.
    bool first = false;
    {
        std::lock_guard lock(outcomes_mutex_);
        first = outcomes_.empty();
        outcomes_.push_back(finished_job{std::move(j), std::move(*outcome), started});
    }
    if (first) boost::asio::post(io_, [this] { settle_finished(); });
}

void consumer::impl::settle_finished() {
    std::vector<finished_job> batch;
    {
        std::lock_guard lock(outcomes_mutex_);
        batch.swap(outcomes_);
    }
    for (auto& f : batch) settle(std::move(f.j), std::move(f.outcome), f.started);
}

job_outcome consumer::impl::outcome_of(std::exception_ptr e) const {
    std::string what = exception_text(e);
    try {
        std::rethrow_exception(e);
    } catch (const permanent_error&) {
        return job_outcome::reject(std::move(what));
    } catch (...) {
    }
    bool permanent = false;
    if (options_.is_permanent) {
        try {
            permanent = options_.is_permanent(e);
        } catch (...) {
        }
    }
    return permanent ? job_outcome::reject(std::move(what)) : job_outcome::failure(std::move(what));
}

}  // namespace tarry
