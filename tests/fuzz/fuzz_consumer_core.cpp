// Fuzz target: the consumer's sans-I/O core (lib/consumer/core/), driven
// the way its driver and workers drive it, on a fake clock.
//
// The input is a program (fuzz_core_program.hpp): options, then steps -
// deliveries (due at once, held, parked, with no header, a bad header, an
// x-delay, unreadable; on a lane's current incarnation or a stale one), a
// worker popping a due job and, some steps later, its outcome reaching the
// core (success, failure, reject, requeue; or handed back unrun, not
// current or not yet due), the broker confirming or refusing a copy the
// core published,
// lanes opening, consuming, failing and being lost, the connection lost,
// the clocks advancing and the wall clock stepping (back too), ticks, the
// sweep, stop, the store's jobs given back, the broker cancelling a lane's
// consumer (its channel stays open), and tombstones read (a worker
// then hands a covered job back unrun, as consumer_workers.cpp does). This file plays the driver
// (it executes each action as consumer_driver.cpp does: an ack or nack for
// an incarnation that is no longer current is never sent) and keeps a model
// of every delivery. After the program, it shuts down as the driver does:
// stop, the running handlers finish (with success), the store's jobs are
// given back, the sweep runs if asked for, and every copy is confirmed.
//
// Properties, checked after every step (each is a promise of
// consumer_core.hpp, core_actions.hpp, job_event.hpp or docs/consumer.md):
// - a delivery tag is settled (ack or nack, one by one or by `multiple`) at
//   most once per lane incarnation, and only one that was delivered there;
// - an ack comes from the handler's success, from a tombstone covering the
//   delivery (its id cancelled: the `cancel` step), or from the confirm of
//   a copy of that delivery: nothing is acknowledged before what replaces
//   it is confirmed;
// - a delivery a tombstone covers when it arrives is acked at once, and no
//   copy of it is published (not parked, not dead-lettered);
// - a copy is published only for a delivery that is current and unsettled
//   ("one that is no longer current is dropped - nothing published");
// - a worker gets a job only at its due time: never before its steady due
//   time, and never before its wall due time while the wall clock has not
//   stepped back; a job runs at most once, never once settled or replaced by
//   a copy;
// - `dropped` is reported only for a delivery that is no longer current;
// - no counter decreases;
// - copies_pending() is the number of deliveries with a copy published (or
//   paused after a refusal) and not yet acked, nacked or dropped;
// - each lane's `unsettled` is its current incarnation's deliveries not yet
//   acked or nacked, and `holding` is no more than that; oldest_unsettled()
//   is empty exactly when no lane has an unsettled delivery;
// and after the shutdown: no copy is pending, and every delivery of a lane
// incarnation still current was settled exactly once (the others were
// dropped with their lane).
//
// One liberty with real deliveries: an unreadable delivery whose properties
// did not decode carries a message_id here (a real one has none), so that
// the model can tell which delivery the core's events name.
#include "fuzz_core_program.hpp"
#include "fuzz_support.hpp"

#include "core/consumer_core.hpp"

#include "tarry/amqp/error.hpp"
#include "tarry/amqp/wire/error.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/parking/delay_cascade.hpp"
#include "tarry/schedule/fake_clock.hpp"

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace tarry;
using namespace std::chrono_literals;
using tarry::detail::consumer_core;
using tarry::detail::core_action;
using tarry::detail::core_counters;
using tarry::detail::finished_job;
using tarry::detail::held_item;
using tarry::detail::held_job;
using tarry::detail::moment;
using tarry_fuzz::check;
namespace action = tarry::detail::action;
namespace cp = tarry_fuzz::core_program;

constexpr std::size_t max_steps = 4096;

// TARRY_FUZZ_TRACE=1 prints each step and each action (to read a crash).
bool tracing() {
    static const bool on = std::getenv("TARRY_FUZZ_TRACE") != nullptr;
    return on;
}

[[gnu::format(printf, 1, 2)]] void trace(const char* format, ...) {
    if (!tracing()) return;
    va_list args;
    va_start(args, format);
    std::vfprintf(stderr, format, args);
    va_end(args);
    std::fputc('\n', stderr);
}

constexpr const char* op_names[] = {"subscribed", "subscribe_failed", "start_open", "start_consuming",
                                    "start_failed", "deliver", "deliver_copy", "pop", "finish", "confirm",
                                    "refuse", "lose_lane", "lose_connection", "advance", "step_wall", "tick",
                                    "wake", "sweep", "stop", "give_back", "cancel", "broker_cancel"};
static_assert(std::size(op_names) == cp::op_count);

class program {
public:
    explicit program(std::span<const std::uint8_t> data) : data_(data) {}
    std::uint8_t next() { return at_ < data_.size() ? data_[at_++] : 0; }
    bool done() const { return at_ >= data_.size(); }

private:
    std::span<const std::uint8_t> data_;
    std::size_t at_ = 0;
};

subscription_options options_of(std::uint8_t a, std::uint8_t b) {
    subscription_options o;
    o.queue = "jobs";
    o.workers = 1;
    o.hold_horizon = 2s;
    o.channels = 1 + (a & 3);
    constexpr std::size_t held[] = {2, 3, 4, 8};
    o.max_held = held[(a >> 2) & 3];
    constexpr std::size_t due_waiting[] = {2, 3, 4, 6};
    o.max_due_waiting = due_waiting[(a >> 4) & 3];
    if (a & 0x40) {
        o.delivery_limit = (a & 0x80) ? 3u : 1u;
    } else if (a & 0x80) {
        // Parking through a short cascade (4 binary levels of 500 ms: at
        // most 7.5 s, so that a far job's wait is capped).
        parking::cascade_spec spec;
        spec.levels = 4;
        spec.unit = 500ms;
        o.parking_strategy = spec;
    }
    switch (b & 3) {
        case 0: o.retry.reset(); break;
        case 1: o.retry = retry::backoff_policy::exponential(100ms, 2.0, 10s).with_max_attempts(2); break;
        case 2: o.retry = retry::backoff_policy::exponential(100ms, 2.0, 10s).with_max_attempts(3); break;
        default:
            o.retry = retry::backoff_policy::fixed(300ms).with_max_attempts(3);
            o.retry->max_total = 1s;
            break;
    }
    o.broker_consumer_timeout = (b & 4) ? 60s : 5s;
    if (b & 8) o.dead_letter_exchange = "dlx";
    if (b & 16) o.max_delay = 30s;
    constexpr std::chrono::milliseconds confirm_timeouts[] = {1s, 3s, 30s, 200ms};
    o.copy_confirm_timeout = confirm_timeouts[(b >> 5) & 3];
    if (b & 0x80) o.default_delay = 500ms;
    o.republish_backoff = retry::backoff_policy::exponential(500ms, 2.0, 4s);
    return o;
}

// One delivery the core took (on an incarnation current when it came).
struct delivery_record {
    std::size_t lane = 0;
    std::uint32_t incarnation = 0;
    std::uint64_t tag = 0;
    bool settled = false;
    int runs = 0;
    std::vector<std::uint64_t> publishes;  // of its copies
};

struct incarnation {
    std::uint64_t next_tag = 0;
    bool consuming = false;  // its consumer started: the broker delivers to it
    bool had_consumer = false;
    int after_cancel = 0;    // deliveries that crossed its basic.cancel
    std::size_t unsettled = 0;
};

struct pending_start {
    std::size_t lane = 0;
    std::uint32_t incarnation = 0;  // 0 until its channel is open
};

struct publish_out {
    std::uint64_t id = 0;
    bool redeliverable = false;  // to the work queue or a wait queue, not a dead letter
    amqp::message message;
};

// A job a worker popped: running (`ran`), or on its way back to the I/O
// thread unrun (not current, not yet due): either reaches the core with
// `finish`, so that the lanes can change meanwhile, as they can between a
// worker's pop and the I/O thread taking its batch of outcomes.
struct running_job {
    held_job job;
    wall_time started;
    finished_job::result what = finished_job::result::ran;
};

// What the input being handled may acknowledge.
struct ack_cause {
    enum { nothing, success, confirm, cancel } what = nothing;
    std::size_t delivery = 0;   // success, cancel: of this delivery
    std::uint64_t publish = 0;  // confirm: of this publish
};

std::array<std::uint64_t, 16> snapshot(const core_counters& c) {
    return {c.received.load(),      c.fast_path.load(),     c.started.load(),        c.succeeded.load(),
            c.handler_failures.load(), c.retried.load(),    c.dead_lettered.load(),  c.parked.load(),
            c.requeued.load(),      c.dropped.load(),       c.copy_failures.load(),  c.late_confirms.load(),
            c.abandoned.load(),     c.channel_losses.load(), c.lane_changes.load(), c.cancelled.load()};
}

// Tombstones, as the model reads them: the ids of deliveries cancelled
// (every copy of such an id has generation 0, so each is covered).
class model_cancels final : public tarry::detail::cancel_oracle {
public:
    bool any() const noexcept override { return !ids.empty(); }
    bool cancelled(std::string_view id, std::uint64_t, wall_time) const override { return ids.count(id) != 0; }
    std::set<std::string, std::less<>> ids;
};

class world {
public:
    explicit world(const subscription_options& o)
        : options_(o),
          cascade_entry_(options_.parking_strategy
                             ? std::optional<std::string>(parking::delay_cascade(*options_.parking_strategy).entry_exchange())
                             : std::nullopt),
          queue_({}, clock_),
          store_(queue_),
          core_(options_, store_, counters_, retry::make_random_source(7), clock_.now(), true, &cancels_),
          start_(clock_.now()),
          wall_start_(clock_.wall_now()),
          older_(options_.effective_channels(), 0),
          last_counters_(snapshot(counters_)) {}

    void run(program& p) {
        for (std::size_t i = 0; i < max_steps && !p.done(); ++i) {
            step(p);
            settle_actions();
            check_state();
        }
        shut_down();
    }

private:
    moment now() const { return {clock_.now(), clock_.wall_now()}; }
    std::size_t lanes() const { return core_.lanes().size(); }
    std::uint32_t current_incarnation(std::size_t lane) const { return core_.lanes().incarnations()->get(lane); }

    void step(program& p) {
        const auto o = p.next() % cp::op_count;
        trace("step %s (steady %+lld ms, wall %+lld ms)", op_names[o],
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - start_).count()),
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(clock_.wall_now() - wall_start_).count()));
        switch (o) {
            case cp::subscribed: core_.subscribed(); break;
            case cp::subscribe_failed: core_.subscribe_failed("declare failed", now()); break;
            case cp::start_open: start_open(p.next()); break;
            case cp::start_consuming: start_done(p.next(), true); break;
            case cp::start_failed: start_done(p.next(), false); break;
            case cp::deliver: {
                const auto what = p.next();
                deliver(what, p.next(), nullptr);
                break;
            }
            case cp::deliver_copy: {
                const auto k = p.next();
                const auto lane = p.next();
                if (!copies_back_.empty()) deliver(lane, 0, &copies_back_[k % copies_back_.size()]);
                break;
            }
            case cp::pop: pop(); break;
            case cp::finish: {
                const auto k = p.next();
                finish(k, p.next());
                break;
            }
            case cp::confirm: confirm(p.next()); break;
            case cp::refuse: {
                const auto k = p.next();
                refuse(k, p.next());
                break;
            }
            case cp::lose_lane: lose_lane(p.next()); break;
            case cp::lose_connection:
                for (std::size_t l = 0; l < lanes(); ++l)
                    if (current_incarnation(l) != 0) older_[l] = current_incarnation(l);
                core_.connection_lost("connection lost", now());
                break;
            case cp::advance: clock_.advance(std::chrono::milliseconds(cp::advance_ms[p.next() % 12])); break;
            case cp::step_wall: {
                const auto ms = cp::wall_step_ms[p.next() % 6];
                stepped_back_ |= ms < 0;
                clock_.step_wall(std::chrono::milliseconds(ms));
                break;
            }
            case cp::tick: core_.tick(now()); break;
            case cp::wake: wake(); break;
            case cp::sweep:
                if (sweep_asked_) {
                    sweep_asked_ = false;
                    core_.sweep(now());
                }
                break;
            case cp::stop: core_.stop(now()); break;
            case cp::give_back:
                if (core_.stopping()) core_.give_back(queue_.drain(), now());
                break;
            case cp::cancel: {
                const auto k = p.next();
                cancels_.ids.insert("d" + std::to_string(k));  // taken already, or to come
                break;
            }
            case cp::broker_cancel: broker_cancel(p.next()); break;
            default: break;
        }
    }

    // ---- lanes --------------------------------------------------------------

    void start_open(std::uint8_t k) {
        if (starts_.empty()) return;
        auto& s = starts_[k % starts_.size()];
        open(s);
    }

    // The driver opens a lane's channel when it is down.
    void open(pending_start& s) {
        if (s.incarnation != 0) return;
        if (current_incarnation(s.lane) != 0) {
            s.incarnation = current_incarnation(s.lane);
            return;
        }
        s.incarnation = core_.lane_opened(s.lane);
        incarnations_[s.incarnation] = {};
    }

    void start_done(std::uint8_t k, bool ok) {
        if (starts_.empty()) return;
        const std::size_t i = k % starts_.size();
        pending_start s = starts_[i];
        starts_.erase(starts_.begin() + static_cast<std::ptrdiff_t>(i));
        if (!ok) {
            core_.lane_start_failed(s.lane, s.incarnation, "basic.consume refused", now());
            return;
        }
        open(s);
        const bool current = core_.lanes().current(s.lane, s.incarnation);
        core_.lane_consuming(s.lane, s.incarnation, "ctag-" + std::to_string(s.incarnation));
        if (current) {
            auto& inc = incarnations_[s.incarnation];
            inc.consuming = inc.had_consumer = true;
            inc.after_cancel = 0;
        }
    }

    void lose_lane(std::uint8_t b) {
        const std::size_t lane = (b & 0x7f) % lanes();
        const std::uint32_t gen = (b & 0x80) ? older_[lane] : current_incarnation(lane);
        if (core_.lanes().current(lane, gen)) older_[lane] = gen;
        core_.lane_lost(lane, gen, "channel closed", now());
    }

    // The broker cancels the lane's consumer: nothing more is delivered on
    // it (none crosses, as with our own cancel); its channel stays open.
    void broker_cancel(std::uint8_t b) {
        const std::size_t lane = b % lanes();
        const std::uint32_t gen = current_incarnation(lane);
        if (gen != 0) {
            auto& inc = incarnations_[gen];
            inc.consuming = false;
            inc.after_cancel = 3;
        }
        core_.consumer_cancelled(lane, gen, "the broker cancelled the consumer", now());
    }

    // ---- deliveries ---------------------------------------------------------

    // The lane a delivery comes on: `want` if its consumer takes deliveries,
    // else the next lane whose consumer does; none when no consumer does.
    // Up to three deliveries cross a basic.cancel.
    std::optional<std::size_t> delivering_lane(std::size_t want) {
        for (std::size_t i = 0; i < lanes(); ++i) {
            const std::size_t lane = (want + i) % lanes();
            const auto gen = current_incarnation(lane);
            if (gen == 0) continue;
            auto& inc = incarnations_[gen];
            if (inc.consuming) return lane;
            if (inc.had_consumer && inc.after_cancel < 3) {
                ++inc.after_cancel;
                return lane;
            }
        }
        return std::nullopt;
    }

    void deliver(std::uint8_t what, std::uint8_t flags, const amqp::message* copy) {
        const std::size_t want = (what / 16) % lanes();
        const unsigned kind = what % 16;
        std::size_t lane = want;
        std::uint32_t gen = 0;
        bool stale = (flags & cp::stale_incarnation) != 0;
        if (!stale) {
            const auto l = delivering_lane(want);
            if (!l) return;  // nothing consumes: the broker delivers nothing
            lane = *l;
            gen = current_incarnation(lane);
        } else {
            gen = older_[lane];  // an earlier incarnation's delivery, read late (0: none)
        }

        amqp::delivery d;
        d.delivery_tag = stale ? 1 : ++incarnations_[gen].next_tag;
        d.redelivered = (flags & cp::redelivered) != 0;
        const std::size_t index = deliveries_.size();
        const std::string id = "d" + std::to_string(index);
        const std::string body = "<" + id + ">";
        if (copy != nullptr) {
            d.msg = *copy;
        } else {
            auto& props = d.msg.properties;
            if (kind >= 1 && kind <= 11) {
                const auto at = clock_.wall_now() + std::chrono::milliseconds(cp::due_offset_ms[kind - 1]);
                contract::write_schedule(props, at, clock_.wall_now());
            } else if (kind == cp::x_delay) {
                props.headers.emplace();
                props.headers->set(std::string(contract::x_delay_header), std::int64_t{1500});
            } else if (kind == cp::bad_header) {
                props.headers.emplace();
                props.headers->set(std::string(contract::perform_job_at_header), std::string("not a time"));
            }
            const unsigned count = (flags >> cp::delivery_count_shift) & 3;
            if (count != 0) {
                if (!props.headers) props.headers.emplace();
                props.headers->set("x-delivery-count", std::int64_t{count - 1});
            }
            constexpr std::int64_t attempts[] = {0, 2, 3, 9};
            if (const auto a = attempts[(flags >> cp::attempt_shift) & 3]; a != 0) {
                if (!props.headers) props.headers.emplace();
                props.headers->set(std::string(contract::attempt_header), a);
            }
            if (flags & cp::short_expiration) props.expiration = "1";
            if (kind == cp::unreadable_properties) {
                props = {};  // did not decode: nothing of them (but the id, below)
                d.unreadable = amqp::unreadable_content{
                    amqp::wire::make_error_code(amqp::wire::errc::table_too_deep),
                    "properties do not decode: field table nested deeper than 32",
                    std::vector<std::uint8_t>{0x20, 0x00, 0x00, 0x00, 0x00, 0x08},
                    body.size(), false};
            } else if (kind == cp::unreadable_body) {
                d.unreadable = amqp::unreadable_content{
                    amqp::wire::make_error_code(amqp::wire::errc::body_too_large),
                    "body of 300000 bytes above max_body_size 1000, not kept", std::nullopt, 300000, true};
            }
        }
        d.msg.properties.message_id = id;
        if (kind != cp::unreadable_body || copy != nullptr) d.msg.body.assign(body.begin(), body.end());
        else d.msg.body.clear();

        const bool current = core_.lanes().current(lane, gen);
        // A copy carries its original's id: the tombstone of that one covers it.
        const std::string covering_id = d.msg.properties.message_id.value_or("");
        const bool covered = !d.unreadable && !core_.stopping() && cancels_.ids.count(covering_id) != 0;
        trace("  delivery d%zu: lane %zu gen %u tag %llu kind %u flags %u%s%s", index, lane, gen,
              static_cast<unsigned long long>(d.delivery_tag), kind, flags, copy ? " (a copy)" : "",
              current ? "" : " (not current)");
        if (current) {
            delivery_record r;
            r.lane = lane;
            r.incarnation = gen;
            r.tag = d.delivery_tag;
            deliveries_.push_back(r);
            by_tag_[{gen, d.delivery_tag}] = index;
            ++incarnations_[gen].unsettled;
        }
        if (covered && current) cause_ = {ack_cause::cancel, index, 0};
        core_.delivery(lane, gen, std::move(d), now());
        if (covered && current) {
            settle_actions();
            check(deliveries_[index].settled, "a delivery a tombstone covers was not acked at admission",
                  [&] { return "d" + std::to_string(index); });
            check(deliveries_[index].publishes.empty(), "a copy published for a delivery a tombstone covers",
                  [&] { return "d" + std::to_string(index); });
        }
    }

    // ---- workers ------------------------------------------------------------

    std::size_t record_of(const held_job& j) {
        const auto it = by_tag_.find({j.incarnation, j.delivery_tag});
        check(it != by_tag_.end(), "the store holds a job of no delivery");
        return it->second;
    }

    void pop() {
        auto item = queue_.try_pop();
        if (!item) return;
        trace("  popped lane %u gen %u tag %llu", static_cast<unsigned>(item->value.lane), item->value.incarnation,
              static_cast<unsigned long long>(item->value.delivery_tag));
        check(item->due <= clock_.now(), "a job handed to a worker before its steady due time");
        held_job& j = item->value;
        const std::size_t d = record_of(j);
        if (!core_.lanes().current(j.lane, j.incarnation)) {
            running_.push_back({std::move(j), {}, finished_job::result::not_current});
            return;
        }
        if (clock_.wall_now() < j.due) {
            check(stepped_back_, "a job handed to a worker before its wall due time (the wall clock never stepped back)");
            running_.push_back({std::move(j), {}, finished_job::result::not_yet_due});
            return;
        }
        if (cancelled(d)) {  // the worker's check at release (consumer_workers.cpp)
            running_.push_back({std::move(j), {}, finished_job::result::cancelled});
            return;
        }
        auto& r = deliveries_[d];
        check(!r.settled, "a settled delivery handed to a worker", [&] { return "d" + std::to_string(d); });
        check(r.publishes.empty(), "a delivery replaced by a copy handed to a worker", [&] { return "d" + std::to_string(d); });
        check(r.runs == 0, "a delivery handed to a worker twice", [&] { return "d" + std::to_string(d); });
        ++r.runs;
        running_.push_back({std::move(j), clock_.wall_now()});
    }

    void finish(std::uint8_t k, std::uint8_t how) {
        if (running_.empty()) return;
        const std::size_t i = k % running_.size();
        running_job r = std::move(running_[i]);
        running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
        const std::size_t d = record_of(r.job);
        if (cancelled(d)) cause_ = {ack_cause::cancel, d, 0};
        if (r.what != finished_job::result::ran) {  // handed back unrun
            core_.finished({std::move(r.job), r.what, std::nullopt, {}}, now());
            return;
        }
        job_outcome outcome = job_outcome::success();
        switch (how % cp::outcome_count) {
            case cp::success: cause_ = {ack_cause::success, d, 0}; break;
            case cp::failure: outcome = job_outcome::failure("boom"); break;
            case cp::failure_soon: outcome = job_outcome::failure("boom", 10ms); break;
            case cp::failure_late: outcome = job_outcome::failure("boom", 1h); break;
            case cp::reject: outcome = job_outcome::reject("bad input"); break;
            default: outcome = job_outcome::requeue(); break;
        }
        core_.finished({std::move(r.job), finished_job::result::ran, std::move(outcome), r.started}, now());
    }

    // ---- copies -------------------------------------------------------------

    void confirm(std::uint8_t k) {
        if (awaiting_.empty()) return;
        const std::size_t i = k % awaiting_.size();
        publish_out p = std::move(awaiting_[i]);
        awaiting_.erase(awaiting_.begin() + static_cast<std::ptrdiff_t>(i));
        if (p.redeliverable) {
            if (copies_back_.size() >= 32) copies_back_.erase(copies_back_.begin());
            copies_back_.push_back(std::move(p.message));
        }
        cause_ = {ack_cause::confirm, 0, p.id};
        core_.copy_confirmed(p.id, now());
    }

    void refuse(std::uint8_t k, std::uint8_t why) {
        if (awaiting_.empty()) return;
        const std::size_t i = k % awaiting_.size();
        const std::uint64_t id = awaiting_[i].id;
        awaiting_.erase(awaiting_.begin() + static_cast<std::ptrdiff_t>(i));
        const auto ec = why % 8 == 7 ? amqp::make_error_code(amqp::errc::header_too_large)
                                     : amqp::make_error_code(amqp::errc::publish_nacked);
        core_.copy_refused(id, ec, 4096, now());
    }

    void wake() {
        if (const auto at = core_.next_wake(); at && *at > clock_.now()) clock_.advance(*at - clock_.now());
        core_.tick(now());
    }

    // The delivery a copy was made of: its message_id, else (a dead letter
    // of unreadable properties, which has properties of its own) the
    // original body at the end of its body.
    // "d<index>" -> index, for a delivery taken so far.
    std::optional<std::size_t> index_of(std::string_view s) const {
        if (s.size() < 2 || s.size() > 12 || s[0] != 'd') return std::nullopt;
        std::size_t v = 0;
        for (const char c : s.substr(1)) {
            if (c < '0' || c > '9') return std::nullopt;
            v = v * 10 + static_cast<std::size_t>(c - '0');
        }
        if (v >= deliveries_.size()) return std::nullopt;
        return v;
    }

    // The delivery a copy was made of: its message_id, else (a dead letter
    // of unreadable properties, which has properties of its own) the
    // original body at the end of its body.
    std::optional<std::size_t> original_of(const amqp::message& m) const {
        if (m.properties.message_id)
            if (auto v = index_of(*m.properties.message_id)) return v;
        const std::string_view body(reinterpret_cast<const char*>(m.body.data()), m.body.size());
        const auto lt = body.rfind('<');
        if (lt == std::string_view::npos || body.back() != '>') return std::nullopt;
        return index_of(body.substr(lt + 1, body.size() - lt - 2));
    }

    // ---- the driver ---------------------------------------------------------

    void settle_actions() {
        std::vector<core_action> out;
        for (;;) {
            core_.take_actions(out);
            if (out.empty()) break;
            for (auto& a : out) execute(a);
        }
        cause_ = {};
    }

    void execute(core_action& a) {
        if (tracing()) trace_action(a);
        if (const auto* x = std::get_if<action::ack>(&a)) {
            settle(x->lane, x->incarnation, x->tag, x->multiple, true);
        } else if (const auto* x = std::get_if<action::nack>(&a)) {
            settle(x->lane, x->incarnation, x->tag, x->multiple, false);
        } else if (auto* x = std::get_if<action::publish>(&a)) {
            published(*x);
        } else if (const auto* x = std::get_if<action::start_lane>(&a)) {
            check(x->lane < lanes(), "start_lane of no lane");
            starts_.push_back({x->lane, 0});
        } else if (const auto* x = std::get_if<action::cancel_lane>(&a)) {
            if (core_.lanes().current(x->lane, x->incarnation)) incarnations_[x->incarnation].consuming = false;
        } else if (std::holds_alternative<action::sweep>(a)) {
            sweep_asked_ = true;
        } else if (const auto* x = std::get_if<action::emit>(&a)) {
            if (x->event.what == job_event::kind::dropped) dropped(x->event);
        }
        // close_lane, subscribe, wake_workers, report: nothing to model.
    }

    void trace_action(const core_action& a) const {
        if (const auto* x = std::get_if<action::ack>(&a)) {
            trace("  ack lane %zu gen %u tag %llu%s", x->lane, x->incarnation, static_cast<unsigned long long>(x->tag),
                  x->multiple ? " multiple" : "");
        } else if (const auto* x = std::get_if<action::nack>(&a)) {
            trace("  nack lane %zu gen %u tag %llu%s", x->lane, x->incarnation, static_cast<unsigned long long>(x->tag),
                  x->multiple ? " multiple" : "");
        } else if (const auto* x = std::get_if<action::publish>(&a)) {
            trace("  publish %llu to '%s' '%s' (id %s)", static_cast<unsigned long long>(x->publish_id),
                  x->exchange.c_str(), x->routing_key.c_str(), x->message.properties.message_id.value_or("-").c_str());
        } else if (const auto* x = std::get_if<action::start_lane>(&a)) {
            trace("  start_lane %zu", x->lane);
        } else if (const auto* x = std::get_if<action::cancel_lane>(&a)) {
            trace("  cancel_lane %zu gen %u", x->lane, x->incarnation);
        } else if (const auto* x = std::get_if<action::close_lane>(&a)) {
            trace("  close_lane %zu", x->lane);
        } else if (std::holds_alternative<action::sweep>(a)) {
            trace("  sweep asked");
        } else if (std::holds_alternative<action::subscribe>(a)) {
            trace("  subscribe");
        } else if (const auto* x = std::get_if<action::emit>(&a)) {
            static constexpr const char* kinds[] = {"run", "succeeded", "parked", "dead", "retry",
                                                    "requeued", "dropped", "failed", "abandoned", "cancelled"};
            trace("  event %s %s: %s", kinds[static_cast<int>(x->event.what)], x->event.id.c_str(),
                  x->event.reason.c_str());
        }
    }

    void settle(std::size_t lane, std::uint32_t gen, std::uint64_t tag, bool multiple, bool ack) {
        // The driver sends nothing for an incarnation that is no longer current.
        if (!core_.lanes().current(lane, gen)) return;
        const auto it = by_tag_.find({gen, tag});
        check(it != by_tag_.end() && deliveries_[it->second].lane == lane,
              ack ? "an ack of a tag never delivered on its incarnation" : "a nack of a tag never delivered on its incarnation");
        check(!deliveries_[it->second].settled, ack ? "a delivery acked after it was settled" : "a delivery nacked after it was settled",
              [&] { return "d" + std::to_string(it->second) + " tag " + std::to_string(tag); });
        if (!multiple) {
            settle_one(it->second, ack);
            return;
        }
        for (auto i = by_tag_.lower_bound({gen, 0}); i != by_tag_.end() && i->first.first == gen && i->first.second <= tag; ++i)
            if (!deliveries_[i->second].settled) settle_one(i->second, ack);
    }

    void settle_one(std::size_t d, bool ack) {
        auto& r = deliveries_[d];
        if (ack) {
            const bool by_success = (cause_.what == ack_cause::success || cause_.what == ack_cause::cancel) &&
                                    cause_.delivery == d;
            const bool by_copy = cause_.what == ack_cause::confirm &&
                                 std::find(r.publishes.begin(), r.publishes.end(), cause_.publish) != r.publishes.end();
            check(by_success || by_copy, "an ack neither of a success nor of the confirm of its copy",
                  [&] { return "d" + std::to_string(d); });
            check(by_copy || r.publishes.empty(), "an ack of a delivery replaced by a copy not confirmed",
                  [&] { return "d" + std::to_string(d); });
        }
        r.settled = true;
        --incarnations_[r.incarnation].unsettled;
        copy_pending_.erase(d);
    }

    void published(action::publish& x) {
        check(publish_ids_.insert(x.publish_id).second, "a publish id used twice");
        const auto d = original_of(x.message);
        check(d.has_value(), "a copy of no delivery");
        auto& r = deliveries_[*d];
        check(core_.lanes().current(r.lane, r.incarnation), "a copy published for a delivery no longer current",
              [&] { return "d" + std::to_string(*d) + " to '" + x.routing_key + "'"; });
        check(!r.settled, "a copy published for a settled delivery", [&] { return "d" + std::to_string(*d); });
        r.publishes.push_back(x.publish_id);
        copy_pending_.insert(*d);
        // To the work queue or a wait queue, or parked through the cascade
        // (which takes it back to the work queue): it comes back.
        const bool back = (x.exchange.empty() && x.routing_key != options_.dead_letter_queue_name()) ||
                          (cascade_entry_ && x.exchange == *cascade_entry_);
        awaiting_.push_back({x.publish_id, back, std::move(x.message)});
    }

    void dropped(const job_event& e) {
        const auto d = index_of(e.id);
        check(d.has_value(), "dropped: an event of no delivery", e.id);
        auto& r = deliveries_[*d];
        check(!core_.lanes().current(r.lane, r.incarnation), "a delivery dropped while current", e.id);
        copy_pending_.erase(*d);
    }

    bool cancelled(std::size_t d) const { return cancels_.ids.count("d" + std::to_string(d)) != 0; }

    // ---- checks -------------------------------------------------------------

    void check_state() {
        const auto c = snapshot(counters_);
        for (std::size_t i = 0; i < c.size(); ++i)
            check(c[i] >= last_counters_[i], "a counter decreased", [&] { return "counter " + std::to_string(i); });
        last_counters_ = c;
        check(core_.copies_pending() == copy_pending_.size(), "copies_pending() differs from the copies published",
              [&] { return std::to_string(core_.copies_pending()) + " vs " + std::to_string(copy_pending_.size()); });
        bool any_unsettled = false;
        for (std::size_t l = 0; l < lanes(); ++l) {
            const auto gen = current_incarnation(l);
            if (gen == 0) continue;
            const auto& lane = core_.lanes()[l];
            check(lane.unsettled == incarnations_[gen].unsettled, "a lane's unsettled count is not its deliveries'",
                  [&] {
                      return "lane " + std::to_string(l) + ": " + std::to_string(lane.unsettled) + " vs " +
                             std::to_string(incarnations_[gen].unsettled);
                  });
            check(lane.holding <= lane.unsettled, "a lane holds more than it has unsettled");
            any_unsettled = any_unsettled || lane.unsettled > 0;
        }
        check(core_.oldest_unsettled().has_value() == any_unsettled,
              "oldest_unsettled() disagrees with the lanes' unsettled counts");
    }

    // As the driver's stop(): no more deliveries, the handlers finish, the
    // jobs not started go back, the copies in flight are confirmed.
    void shut_down() {
        trace("shut down");
        core_.stop(now());
        settle_actions();
        while (!running_.empty()) {
            finish(static_cast<std::uint8_t>(running_.size() - 1), cp::success);
            settle_actions();
        }
        core_.give_back(queue_.drain(), now());
        settle_actions();
        if (sweep_asked_) {
            sweep_asked_ = false;
            core_.sweep(now());
            settle_actions();
        }
        for (int round = 0; round < 64 && (core_.copies_pending() > 0 || !awaiting_.empty()); ++round) {
            while (!awaiting_.empty()) {
                confirm(0);
                settle_actions();
            }
            wake();
            settle_actions();
        }
        check_state();
        check(core_.copies_pending() == 0, "copies still pending after stop and every confirm");
        for (std::size_t d = 0; d < deliveries_.size(); ++d) {
            const auto& r = deliveries_[d];
            if (core_.lanes().current(r.lane, r.incarnation))
                check(r.settled, "a delivery of a current lane left unsettled at the end of stop", [&] { return "d" + std::to_string(d); });
        }
    }

    subscription_options options_;
    std::optional<std::string> cascade_entry_;  // parking through a cascade: its entry exchange
    model_cancels cancels_;
    fake_clock clock_;
    delay_queue<held_job, fake_clock> queue_;
    tarry::detail::delay_queue_store<fake_clock> store_;
    core_counters counters_;
    consumer_core core_;
    steady_time start_;
    wall_time wall_start_;

    std::vector<delivery_record> deliveries_;
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::size_t> by_tag_;  // (incarnation, tag)
    std::map<std::uint32_t, incarnation> incarnations_;
    std::vector<std::uint32_t> older_;  // per lane: its last incarnation that was lost
    std::vector<pending_start> starts_;
    std::vector<running_job> running_;
    std::vector<publish_out> awaiting_;             // published, not yet confirmed or refused
    std::vector<amqp::message> copies_back_;        // confirmed copies the broker may deliver
    std::set<std::uint64_t> publish_ids_;
    std::set<std::size_t> copy_pending_;            // deliveries with a copy in the core's table
    std::array<std::uint64_t, 16> last_counters_;
    ack_cause cause_;
    bool sweep_asked_ = false;
    bool stepped_back_ = false;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const auto options = options_of(data[0], data[1]);
    if (validate(options)) return 0;
    program p(std::span<const std::uint8_t>(data + 2, size - 2));
    world w(options);
    w.run(p);
    return 0;
}
