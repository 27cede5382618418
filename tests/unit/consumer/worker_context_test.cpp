// The workers' side of the consumer: a job whose delivery is no longer
// current or that the wall clock says is not due is never run; outcomes go
// back in batches; a handler abandoned at stop() gets its event and its
// outcome is discarded.
#include "consumer_workers.hpp"

#include "tarry/contract/occurrence_headers.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <latch>
#include <thread>

using namespace tarry;
using namespace tarry::detail;
using namespace std::chrono_literals;

namespace {
struct fixture {
    explicit fixture(job_handler handler)
        : incarnations(std::make_shared<lane_incarnations>(2)),
          counters(std::make_shared<core_counters>()),
          cancels(std::make_shared<cancellations>(std::chrono::hours(1))),
          tombstones(cancels->jobs),
          claims(std::make_shared<run_claims>()),
          ctx(std::make_shared<worker_context>(
              std::move(handler), nullptr,
              [this](const job_event& e) {
                  std::lock_guard lock(mutex);
                  events.push_back(e);
              },
              counters, incarnations, [this] { ++delivered; }, cancels, claims)) {
        incarnations->set(0, 1);
    }
    held_item item(wall_time due, std::uint32_t incarnation = 1, std::uint64_t job_generation = 0) {
        held_job j;
        j.due = due;
        j.incarnation = incarnation;
        j.delivery_tag = 7;
        amqp::message m;
        m.properties.message_id = "a";
        if (job_generation != 0) contract::write_generation(m.properties, job_generation);
        j.msg = packed_message::pack(m);
        return {std::move(j), {}, 0};
    }
    std::vector<job_event::kind> kinds() {
        std::lock_guard lock(mutex);
        std::vector<job_event::kind> out;
        for (auto& e : events) out.push_back(e.what);
        return out;
    }

    std::mutex mutex;
    std::vector<job_event> events;
    std::atomic<int> delivered{0};
    std::shared_ptr<lane_incarnations> incarnations;
    std::shared_ptr<core_counters> counters;
    std::shared_ptr<cancellations> cancels;
    std::shared_ptr<control::tombstone_table> tombstones;
    std::shared_ptr<run_claims> claims;
    std::shared_ptr<worker_context> ctx;
};
}  // namespace

TEST_CASE("a job due later by the wall clock is handed back unrun (never early after a clock step)") {
    std::atomic<int> calls{0};
    fixture f([&](const job&) {
        ++calls;
        return job_outcome::success();
    });
    auto it = f.item(std::chrono::system_clock::now() + 1h);
    f.ctx->run(it);
    CHECK(calls == 0);
    auto out = f.ctx->take_finished();
    REQUIRE(out.size() == 1);
    CHECK(out[0].what == finished_job::result::not_yet_due);
}

TEST_CASE("a job whose delivery is no longer current is handed back unrun") {
    std::atomic<int> calls{0};
    fixture f([&](const job&) {
        ++calls;
        return job_outcome::success();
    });
    auto it = f.item(std::chrono::system_clock::now(), 2);
    f.ctx->run(it);
    CHECK(calls == 0);
    auto out = f.ctx->take_finished();
    REQUIRE(out.size() == 1);
    CHECK(out[0].what == finished_job::result::not_current);
}

TEST_CASE("outcomes go back in one batch per announcement; a throw is a failure") {
    fixture f([](const job& j) -> job_outcome {
        if (j.attempt == 2) throw std::runtime_error("nope");
        return job_outcome::success();
    });
    auto a = f.item(std::chrono::system_clock::now());
    auto b = f.item(std::chrono::system_clock::now());
    b.value.attempt = 2;
    f.ctx->run(a);
    f.ctx->run(b);
    CHECK(f.delivered == 1);
    auto out = f.ctx->take_finished();
    REQUIRE(out.size() == 2);
    CHECK(out[1].outcome->what() == job_outcome::kind::failure);
    CHECK(out[1].outcome->error() == "nope");
    CHECK(f.kinds() == std::vector{job_event::kind::run, job_event::kind::run});
    CHECK(f.counters->started == 2);
}

TEST_CASE("fault: a handler still running at stop is abandoned: its event now, its outcome discarded") {
    std::promise<void> release;
    auto released = release.get_future().share();
    std::latch entered(1);
    fixture f([&](const job&) {
        entered.count_down();
        released.wait();
        return job_outcome::success();
    });
    auto it = f.item(std::chrono::system_clock::now());
    std::thread worker([&] { f.ctx->run(it); });
    entered.wait();
    CHECK(f.counters->running == 1);
    CHECK(f.ctx->abandon_running(std::chrono::system_clock::now()) == 1);
    CHECK(f.kinds() == std::vector{job_event::kind::run, job_event::kind::abandoned});
    CHECK(f.counters->abandoned == 1);
    release.set_value();
    worker.join();
    CHECK(f.ctx->take_finished().empty());  // never acknowledged: the broker redelivers it
    CHECK(f.delivered == 0);
    CHECK(f.counters->running == 0);
}

TEST_CASE("after close() no outcome is delivered") {
    fixture f([](const job&) { return job_outcome::success(); });
    f.ctx->close();
    auto it = f.item(std::chrono::system_clock::now());
    f.ctx->run(it);
    CHECK(f.delivered == 0);
    CHECK(f.ctx->take_finished().empty());
}

TEST_CASE("fault: a job a tombstone covers when it falls due is handed back cancelled, unrun") {
    std::atomic<int> calls{0};
    fixture f([&](const job&) {
        ++calls;
        return job_outcome::success();
    });
    const auto now = std::chrono::system_clock::now();
    f.tombstones->add({"a", 100, now}, now);
    auto it = f.item(now, 1, 99);
    f.ctx->run(it);
    CHECK(calls == 0);
    CHECK(f.kinds().empty());  // no run event
    auto out = f.ctx->take_finished();
    REQUIRE(out.size() == 1);
    CHECK(out[0].what == finished_job::result::cancelled);
    CHECK(f.counters->started == 0);
}

TEST_CASE("fault: an occurrence whose schedule was upserted again or removed while it was held is handed back "
          "cancelled, unrun; one of the newer chain runs") {
    std::atomic<int> calls{0};
    fixture f([&](const job&) {
        ++calls;
        return job_outcome::success();
    });
    const auto now = std::chrono::system_clock::now();
    const auto occurrence = [&](std::uint64_t generation) {
        auto it = f.item(now, 1, generation);
        amqp::message m = it.value.msg.unpack();
        contract::write_occurrence(m.properties, {"tick", "1795500000", "every 1000ms", 1, "c1"});
        it.value.msg = packed_message::pack(m);
        return it;
    };
    // The removal (or the newer upsert) of schedule "tick", generation 100.
    f.cancels->schedules->add({"tick", 100, now}, now);
    auto older = occurrence(99);
    f.ctx->run(older);
    auto newer = occurrence(100);
    f.ctx->run(newer);
    CHECK(calls == 1);
    auto out = f.ctx->take_finished();
    REQUIRE(out.size() == 2);
    CHECK(out[0].what == finished_job::result::cancelled);
    CHECK(out[1].what == finished_job::result::ran);
    // The schedule's id is not a job id: a job "tick" is not touched by it.
    amqp::message job_named_tick;
    job_named_tick.properties.message_id = "tick";
    contract::write_generation(job_named_tick.properties, 1);
    CHECK_FALSE(f.cancels->covers(job_named_tick.properties, now));
}

TEST_CASE("a misfired occurrence: handed back unrun when its policy skips it, run when it runs once") {
    std::atomic<int> calls{0};
    fixture f([&](const job&) {
        ++calls;
        return job_outcome::success();
    });
    const auto now = std::chrono::system_clock::now();
    const auto nominal = std::chrono::floor<std::chrono::minutes>(now) - std::chrono::hours(1);
    const auto occurrence = [&](const std::string& spec) {
        auto it = f.item(now, 1, 1);
        amqp::message m = it.value.msg.unpack();
        contract::occurrence_headers o{"tick", std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                                                  nominal.time_since_epoch()).count()),
                                       spec, 1, "c1"};
        contract::write_occurrence(m.properties, o);
        it.value.msg = packed_message::pack(m);
        return it;
    };
    auto skip = occurrence("every 60000ms misfire skip");
    f.ctx->run(skip);
    auto once = occurrence("every 60000ms");
    f.ctx->run(once);
    CHECK(calls == 1);
    auto out = f.ctx->take_finished();
    REQUIRE(out.size() == 2);
    CHECK(out[0].what == finished_job::result::misfired);
    CHECK(out[1].what == finished_job::result::ran);
}

TEST_CASE("a job's own newer generation runs; the handler sees its generation and a cancel read while it runs") {
    std::promise<void> running;
    std::promise<void> cancel_written;
    std::vector<bool> seen;
    std::uint64_t generation = 0;
    fixture f([&](const job& j) {
        generation = j.generation;
        seen.push_back(j.cancel_requested());
        running.set_value();
        cancel_written.get_future().wait();
        seen.push_back(j.cancel_requested());
        return job_outcome::success();
    });
    const auto now = std::chrono::system_clock::now();
    f.tombstones->add({"a", 100, now}, now);
    auto it = f.item(now, 1, 100);  // the reschedule's copy: not covered
    std::thread worker([&] { f.ctx->run(it); });
    running.get_future().wait();
    f.tombstones->add({"a", 200, now}, now);  // a later cancel
    cancel_written.set_value();
    worker.join();
    CHECK(generation == 100);
    CHECK(seen == std::vector<bool>{false, true});
    auto out = f.ctx->take_finished();
    REQUIRE(out.size() == 1);
    CHECK(out[0].what == finished_job::result::ran);
}

TEST_CASE("without a tombstone table nothing is cancelled, and cancel_requested() is false") {
    bool asked = true;
    auto counters = std::make_shared<core_counters>();
    auto incarnations = std::make_shared<lane_incarnations>(1);
    incarnations->set(0, 1);
    auto ctx = std::make_shared<worker_context>(
        [&](const job& j) {
            asked = j.cancel_requested();
            return job_outcome::success();
        },
        nullptr, nullptr, counters, incarnations, [] {});
    held_job j;
    j.due = std::chrono::system_clock::now();
    j.incarnation = 1;
    amqp::message m;
    m.properties.message_id = "a";
    j.msg = packed_message::pack(m);
    held_item it{std::move(j), {}, 0};
    ctx->run(it);
    CHECK_FALSE(asked);
    auto out = ctx->take_finished();
    REQUIRE(out.size() == 1);
    CHECK(out[0].what == finished_job::result::ran);
}

TEST_CASE("fault: a copy of an occurrence runs only when its own run claim came first; misfired or not") {
    std::atomic<int> calls{0};
    fixture f([&](const job&) {
        ++calls;
        return job_outcome::success();
    });
    const auto now = std::chrono::system_clock::now();
    const auto nominal = std::chrono::floor<std::chrono::seconds>(now) - std::chrono::hours(1);
    const std::string nominal_text =
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(nominal.time_since_epoch()).count());
    const auto copy = [&](const std::string& copy_id, const std::string& spec = "every 60000ms",
                          std::uint32_t attempt = 1) {
        auto it = f.item(now, 1, 1);
        amqp::message m = it.value.msg.unpack();
        contract::write_occurrence(m.properties, {"tick", nominal_text, spec, 1, copy_id});
        it.value.msg = packed_message::pack(m);
        it.value.attempt = attempt;
        return it;
    };
    const auto run = [&](held_item it) {
        f.ctx->run(it);
        auto out = f.ctx->take_finished();
        REQUIRE(out.size() == 1);
        return out[0].what;
    };
    // Not in force (no control stream read yet): every copy runs.
    CHECK(run(copy("c1")) == finished_job::result::ran);
    CHECK(calls == 1);
    f.claims->enforce();
    // No claim read yet: it waits, unrun.
    CHECK(run(copy("c1")) == finished_job::result::unclaimed);
    const control::run_claim first{"tick@" + nominal_text, "tick", nominal_text, "c1", now};
    REQUIRE(f.claims->table.add(first, now));
    CHECK(run(copy("c1")) == finished_job::result::ran);   // the winner (a redelivery of it too)
    CHECK(run(copy("c2")) == finished_job::result::deduplicated);
    // The claim comes before the misfire policy: a losing copy publishes no successor.
    CHECK(run(copy("c2", "every 60000ms misfire skip")) == finished_job::result::deduplicated);
    CHECK(run(copy("c1", "every 60000ms misfire skip")) == finished_job::result::misfired);
    // A retry of the occurrence (attempt 2) is a job of its own: no claim.
    CHECK(run(copy("c2", "every 60000ms", 2)) == finished_job::result::ran);
    CHECK(calls == 3);
}
