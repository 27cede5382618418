// A consumer core driven by hand: a fake clock, the real delay queue on it
// as the job store, and helpers to deliver, run and look at the actions.
// No broker, no threads: a test plays the driver and the workers.
#pragma once

#include "core/consumer_core.hpp"

#include "tarry/contract/schedule_headers.hpp"
#include "tarry/schedule/fake_clock.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace core_test {

using namespace tarry;
using namespace tarry::detail;
using namespace std::chrono_literals;

/// A store that counts the passes take_if() makes over the held jobs.
class counting_store final : public job_store {
public:
    explicit counting_store(delay_queue<held_job, fake_clock>& q) : inner_(q) {}
    bool hold(held_job&& j, steady_time due, std::size_t bytes) override { return inner_.hold(std::move(j), due, bytes); }
    bool ready(held_job&& j, steady_time due, std::size_t bytes) override {
        return inner_.ready(std::move(j), due, bytes);
    }
    std::optional<held_item> take_latest() override { return inner_.take_latest(); }
    std::optional<steady_time> latest_due() const override { return inner_.latest_due(); }
    std::optional<steady_time> earliest_due() const override { return inner_.earliest_due(); }
    std::vector<held_item> take_if(const std::function<bool(const held_job&)>& pred) override {
        ++passes;
        return inner_.take_if(pred);
    }
    std::size_t size() const override { return inner_.size(); }
    std::size_t bytes() const override { return inner_.bytes(); }
    std::size_t ready_waiting() const override { return inner_.ready_waiting(); }
    std::size_t passes = 0;

private:
    delay_queue_store<fake_clock> inner_;
};

/// Tombstones as a plain map: job id → the generation below which its
/// copies are cancelled; and schedule upserts and removals as another:
/// schedule id → the generation below which its occurrences are dropped.
class fake_cancels final : public cancel_oracle {
public:
    bool any() const noexcept override { return !below.empty() || !schedules_below.empty(); }
    bool cancelled(std::string_view id, std::uint64_t generation, wall_time) const override {
        const auto it = below.find(id);
        return it != below.end() && generation < it->second;
    }
    bool schedule_superseded(std::string_view id, std::uint64_t generation, wall_time) const override {
        const auto it = schedules_below.find(id);
        return it != schedules_below.end() && generation < it->second;
    }
    std::map<std::string, std::uint64_t, std::less<>> below;
    std::map<std::string, std::uint64_t, std::less<>> schedules_below;
};

/// Run claims as a plain map: occurrence id -> the winning copy.
class fake_claims final : public claim_oracle {
public:
    bool in_force() const noexcept override { return enforced; }
    claim_verdict verdict(std::string_view occurrence_id, std::string_view copy) const override {
        if (!enforced) return claim_verdict::runs;
        const auto it = winners.find(occurrence_id);
        if (it == winners.end()) return claim_verdict::unknown;
        return it->second == copy ? claim_verdict::runs : claim_verdict::lost;
    }
    bool enforced = false;
    std::map<std::string, std::string, std::less<>> winners;
};

inline subscription_options small_options() {
    subscription_options o;
    o.queue = "jobs";
    o.workers = 1;
    o.broker_consumer_timeout = 5s;
    o.hold_horizon = 2s;
    o.retry = retry::backoff_policy::exponential(100ms, 2.0, 10s);
    o.retry->max_attempts = 3;
    return o;
}

/// small_options() spread over `channels` lanes holding `max_held` in all.
inline subscription_options lanes_options(std::size_t max_held, std::size_t channels) {
    subscription_options o = small_options();
    o.max_held = max_held;
    o.channels = channels;
    return o;
}

struct harness {
    explicit harness(subscription_options o = small_options())
        : options(std::move(o)),
          queue({}, clock),
          store(queue),
          core(options, store, counters, retry::make_random_source(7), clock.now(), true, &cancels, &claims) {}

    moment now() const { return {clock.now(), clock.wall_now()}; }
    void advance(std::chrono::nanoseconds d) {
        clock.advance(d);
        core.tick(now());
    }

    /// Subscribes: lane `lane` opens and consumes. Returns its incarnation.
    std::uint32_t open_lane(std::size_t lane = 0) {
        const auto gen = core.lane_opened(lane);
        core.lane_consuming(lane, gen, "ctag-" + std::to_string(lane));
        return gen;
    }
    std::uint32_t subscribe() {
        core.subscribed();
        auto starts = take<action::start_lane>();
        REQUIRE(starts.size() == 1);
        return open_lane(starts[0].lane);
    }

    /// Delivers a job due `in` from now (nothing: no schedule header, due at once).
    /// `generation`: its x-tarry-generation (0: none).
    void deliver(std::size_t lane, std::uint32_t gen, std::uint64_t tag, std::optional<std::chrono::milliseconds> in,
                 std::string id = {}, std::uint64_t generation = 0) {
        amqp::delivery d;
        d.delivery_tag = tag;
        d.msg.properties.message_id = id.empty() ? "job-" + std::to_string(tag) : id;
        if (in) contract::write_schedule(d.msg.properties, clock.wall_now() + *in, clock.wall_now());
        if (generation != 0) contract::write_generation(d.msg.properties, generation);
        d.msg.body = {'x'};
        core.delivery(lane, gen, std::move(d), now());
    }

    /// What a worker would take now (due by the store's clock), or nothing.
    std::optional<held_job> pop() {
        auto it = queue.try_pop();
        if (!it) return std::nullopt;
        return std::move(it->value);
    }
    void finish(held_job j, job_outcome outcome) {
        core.finished({std::move(j), finished_job::result::ran, std::move(outcome), clock.wall_now()}, now());
    }

    /// Takes every action out of the core, keeps them in `log`.
    void collect() {
        std::vector<core_action> out;
        core.take_actions(out);
        for (auto& a : out) log.push_back(std::move(a));
    }
    /// The actions of type A collected so far, taken out of the log.
    template <class A>
    std::vector<A> take() {
        return take_if<A>([](const A&) { return true; });
    }
    /// The events of kind k collected so far, taken out of the log.
    std::vector<job_event> events(job_event::kind k) {
        std::vector<job_event> out;
        for (auto& e : take_if<action::emit>([k](const action::emit& e) { return e.event.what == k; }))
            out.push_back(std::move(e.event));
        return out;
    }
    /// The actions of type A for which pred holds, taken out of the log.
    template <class A, class Pred>
    std::vector<A> take_if(Pred pred) {
        collect();
        const auto hit = [&](const core_action& a) {
            const auto* x = std::get_if<A>(&a);
            return x != nullptr && pred(*x);
        };
        std::vector<A> found;
        for (auto& a : log)
            if (hit(a)) found.push_back(std::get<A>(a));
        std::erase_if(log, hit);
        return found;
    }

    fake_clock clock;
    fake_cancels cancels;
    fake_claims claims;
    subscription_options options;
    delay_queue<held_job, fake_clock> queue;
    counting_store store;
    core_counters counters;
    consumer_core core;
    std::vector<core_action> log;
};

}  // namespace core_test
