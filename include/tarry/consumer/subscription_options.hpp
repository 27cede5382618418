// What a consumer subscribes to and how it holds jobs: plain values with
// documented defaults, checked once by validate() before anything starts.
#pragma once

#include "tarry/amqp/queue_kind.hpp"
#include "tarry/parking/delay_cascade.hpp"
#include "tarry/retry/backoff.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>

namespace tarry {

/// The kind of queue the consumer declares (see subscription_options::queue_type).
using queue_kind = amqp::queue_kind;

/// How the consumer runs handlers (see subscription_options::handlers).
enum class handler_kind {
    threads,     ///< a job_handler on `workers` threads
    coroutines,  ///< an async_job_handler, up to `max_in_flight` at once
};

/// What a consumer subscribes to and how it holds, parks, retries and
/// dead-letters jobs. A plain value; each field says its default;
/// validate() checks it before anything starts.
struct subscription_options {
    /// The work queue. Required.
    std::string queue;
    /// true: declare it durable when absent (no arguments but its
    /// queue_type); false: only check that it exists (passive), for a queue
    /// declared elsewhere (with other arguments: a declare that differs from
    /// the queue's own fails with 406).
    bool declare_queue = true;
    /// The queues tarry declares: the work queue (when declare_queue), the
    /// wait queues and the dead-letter queue. Quorum wait queues dead-letter
    /// at least once (x-dead-letter-strategy at-least-once, which needs
    /// x-overflow reject-publish): a job expiring from a wait queue stays
    /// there until the work queue has it. Every process on a queue must
    /// agree on this. Default classic.
    queue_kind queue_type = queue_kind::classic;
    /// true (default): declare the wait queues and the dead-letter queue;
    /// false: only check that each exists (passive), for a topology set up
    /// by someone else. Start fails, naming the queue, when one is missing.
    bool declare_own_queues = true;
    /// The work queue's delivery limit (a quorum queue's x-delivery-limit:
    /// a message returned more often is dropped or dead-lettered by the
    /// broker; the limit cannot be read over AMQP). Empty (default):
    /// derived from the broker's version at each connect: RabbitMQ 4.0 and
    /// later give every quorum queue a limit of 20, so 20 is assumed there
    /// (and for a broker whose version does not read); none before 4.0.
    /// 0: none (a queue whose limit a policy lifted; a queue whose
    /// x-delivery-limit is 0 allows no return at all: tell 1, the
    /// closest); N: N. With a limit L in force, a delivery whose
    /// x-delivery-count has reached L - max(1, L / 4) (15 of 20; a margin:
    /// one fault can return a job twice) is replaced as it arrives by a confirmed copy (no count) and acked
    /// (event `requeued`, reason `delivery-limit`), so the broker's own
    /// returns (a closed channel, a killed worker) cannot drop it either;
    /// one at the limit is never given back by a nack (a confirmed copy
    /// and an ack instead), and a refused copy of it is published again
    /// until confirmed or until stop(). Classic queues send no count:
    /// nothing changes there. docs/compatibility.md.
    std::optional<std::uint32_t> delivery_limit;
    /// true (default): read the queue's control stream (docs/control.md) and
    /// honour its tombstones: a job they cover is acknowledged without
    /// running (event `cancelled`), checked when it is admitted and again
    /// when it falls due. Before it consumes, the consumer reads the stream
    /// up to its end (a marker it appends); a queue with no control stream
    /// yet is looked at again every second. false: cancels are ignored.
    bool read_control_stream = true;
    /// How long a tombstone counts after it was written (by its own
    /// timestamp): at most 7 days, what the stream keeps
    /// (control::stream_max_age).
    std::chrono::milliseconds tombstone_retention = std::chrono::hours(7 * 24);
    /// Checkpoints of the control stream (docs/control.md, "Checkpoints"):
    /// once this many entries followed the newest checkpoint (or 12 hours
    /// passed since it), an attached consumer writes the tables it read as
    /// a new one to `<queue>.tarry.checkpoints`, and a consumer that starts
    /// restores the newest one and reads the control stream only after it.
    /// 0: this consumer writes none (it still restores them).
    std::size_t control_checkpoint_every = 20'000;
    /// How long a start (and a reconnect) waits to read the control stream
    /// up to its end (the marker it appends) before it consumes anyway: a
    /// cancel written before the end is then honoured only once it is
    /// read. A consumer writes no checkpoint before it has read the end.
    /// Also how long (at least 5 s) an attached consumer waits to read
    /// anything after an entry it appended (a marker, a run claim) was
    /// confirmed: then it takes its subscription to the stream for stalled
    /// and subscribes again from the last entry read. Positive.
    std::chrono::milliseconds control_catch_up_timeout = std::chrono::seconds(10);
    /// Worker threads running handlers (synchronous handlers).
    std::size_t workers = 4;
    /// Asynchronous handlers (tarry/consumer/async_job_handler.hpp): how
    /// many run at once, at least 1.
    std::size_t max_in_flight = 1000;
    /// Which handlers run: set by the consumer's constructor from the
    /// handler it is given (job_handler: threads, async_job_handler:
    /// coroutines); one consumer runs one kind.
    handler_kind handlers = handler_kind::threads;
    /// Delay of a message with neither perform_job_at nor x-delay (0 = at once).
    std::chrono::milliseconds default_delay{0};
    /// Largest delay accepted, counted from arrival; above it a message is
    /// dead-lettered `delay-exceeds-max`. Nothing = no limit.
    std::optional<std::chrono::milliseconds> max_delay;
    /// Jobs due within this are held unacknowledged in memory; later ones
    /// are parked in the broker. Must leave backlog_margin() before
    /// broker_consumer_timeout, so held jobs are never given back as they
    /// fall due.
    std::chrono::milliseconds hold_horizon = std::chrono::minutes(15);
    /// The broker's consumer_timeout (RabbitMQ 3.10: 30 min): a delivery
    /// unacknowledged for longer makes it close the channel. A due job that
    /// has not started backlog_margin() before it (counted from its
    /// delivery) is given back (nack, requeue: event `requeued`, reason
    /// `backlog`). A handler that itself runs longer cannot be saved: the
    /// broker closes the channel and redelivers the job (docs/consumer.md).
    std::chrono::milliseconds broker_consumer_timeout = std::chrono::minutes(30);
    /// true: basic.consume carries x-consumer-timeout =
    /// broker_consumer_timeout, so that the broker times a delivery out
    /// exactly when tarry plans for it (RabbitMQ 4.3 honours a consumer's
    /// own timeout; docs/compatibility.md says what older versions do).
    /// Default false: the broker's configured consumer_timeout applies.
    bool consumer_timeout_argument = false;
    /// Bounds of what is held: jobs, and their bytes (each job's body and
    /// encoded properties, the body alone for one due at arrival, plus 128
    /// bytes). When full, the job due last is parked. Default 10 000 jobs,
    /// 64 MiB.
    ///@{
    std::size_t max_held = 10000;
    std::size_t max_held_bytes = std::size_t{64} << 20;
    ///@}
    /// Consuming channels ("lanes"). RabbitMQ finds the delivery tag of each
    /// acknowledgement by walking its channel's unacknowledged deliveries
    /// from the oldest, and held jobs are the oldest: on one channel holding
    /// 10 000 jobs every park or ack walks past all of them. So once the
    /// newest lane holds max_held / channels jobs, a lane not consuming yet
    /// starts too; the old one goes on consuming (never cancelled while it
    /// holds jobs: a quorum queue strands a cancelled consumer's deliveries
    /// when its node loses the leader) and settles its jobs there. Lanes
    /// are opened as needed. 0 = derived: one per 50 of max_held, 1 to 200.
    std::size_t channels = 0;
    /// basic.qos prefetch of each lane. 0 = derived: twice what a
    /// lane holds before handing over, plus capacity() + 64, so there is room
    /// for a job due sooner than everything held while the next lane takes
    /// over; at least 1 000, so that parking's publish-confirm-ack round
    /// trips do not throttle the intake; at most 65 535. Never unlimited:
    /// when a lane's share needs more, more lanes are opened (see
    /// effective_channels()).
    std::uint16_t prefetch = 0;
    /// Jobs due at arrival that may wait for a worker at once. When that
    /// many wait, every lane stops taking deliveries (basic.cancel) until
    /// half of them have started; the broker keeps the rest. 0 =
    /// derived: 64 per unit of capacity(), at least 512 (one socket read can carry a
    /// few hundred deliveries; a smaller bound would pause between reads).
    std::size_t max_due_waiting = 0;
    /// Parking: the shortest wait queue's TTL. Wait queues
    /// `<queue>.wait.<ttl ms>` have TTLs doubling from this up to the hold
    /// horizon; a parked job returns from the largest TTL that brings it
    /// back before it is due. 0 = min(1 s, hold_horizon / 2).
    std::chrono::milliseconds min_park_ttl{0};
    /// A parked job comes back at least this long before it is due.
    std::chrono::milliseconds park_margin = std::chrono::milliseconds(250);
    /// The parking strategy: nothing (default) parks in the wait ladder
    /// above; a delay cascade's spec (binary or powers-of-N,
    /// tarry/parking/delay_cascade.hpp) parks through that cascade, which
    /// delivers each parked job back to the work queue at least park_margin
    /// before it is due (its wait rounded down to whole units; a job due in
    /// less than min_park_ttl or one unit is held). The consumer declares
    /// the cascade and the work queue's delivery queue (declare_own_queues;
    /// else it only checks that they exist), and no wait ladder. Every
    /// process on the queue should agree (docs/cascades.md, "Parking").
    std::optional<parking::cascade_spec> parking_strategy;
    /// Dead letters go here (declared durable). Empty: `<queue>.dead`.
    std::string dead_letter_queue;
    /// When set, dead letters go to this exchange instead (routing key: the
    /// work queue's name); tarry does not declare it, and an unroutable dead
    /// letter is not acknowledged (mandatory publish).
    std::string dead_letter_exchange;
    /// Retries of failed jobs (an exception, or job_outcome::failure()): a
    /// copy with x-tarry-attempt + 1 and perform_job_at = now + delay is
    /// confirmed, then the original is acknowledged. Default:
    /// backoff_policy::job_defaults() (1 s doubling to 1 h, equal jitter, 10
    /// attempts in all). Nothing: a failure is dead-lettered at once.
    std::optional<retry::backoff_policy> retry = retry::backoff_policy::job_defaults();
    /// Failures never worth retrying: an exception for which this returns
    /// true is dead-lettered `rejected: <what()>` at once (so are exceptions
    /// derived from tarry::permanent_error, always). Called on worker
    /// threads. Empty: only permanent_error. What it throws means "not
    /// permanent", and is counted (consumer_stats::hook_exceptions) and told
    /// to consumer_hooks::on_connection.
    std::function<bool(const std::exception_ptr&)> is_permanent;
    /// When a copy (retry, parked job, dead letter) is refused or never
    /// confirmed, its original stays unacknowledged and is given back
    /// (basic.nack, requeue) after this pause, n = refusals in a row across
    /// the consumer (a confirmed copy starts the count again), so a cause that
    /// lasts (a full queue, an alarm) is not hammered. Default: 1 s doubling
    /// to 30 s. Its attempt and time limits are not used.
    retry::backoff_policy republish_backoff =
        retry::backoff_policy::exponential(std::chrono::seconds(1), 2.0, std::chrono::seconds(30));
    /// Seed of the retry jitter's random source (0: from std::random_device).
    std::uint64_t retry_seed = 0;
    /// A copy (retry, parked job, dead letter) whose confirm does not come
    /// within this counts as refused (event `failed`; its original stays
    /// unacknowledged). Should it be confirmed later after all, it is
    /// counted in consumer_stats::late_confirms: a possible duplicate,
    /// never a loss. Also the copies' publisher's confirm_timeout: a
    /// channel on which a copy waited this long is closed and replaced
    /// (run claims and markers: 5 s; docs/consumer.md).
    std::chrono::milliseconds copy_confirm_timeout = std::chrono::seconds(30);
    /// On stop(): how long running jobs may take to finish and copies in
    /// flight to be confirmed. stop() returns within shutdown_grace plus the
    /// connection's close_timeout; a handler still running then is abandoned
    /// (event `abandoned`; not acknowledged, so the broker redelivers it).
    std::chrono::milliseconds shutdown_grace = std::chrono::seconds(10);
    /// Lifecycle events (docs/events.md). true: every job event, of every
    /// kind, is also published as tarry::to_json(event, queue) to
    /// events_exchange with routing key `<event>.<queue>` (e.g.
    /// `retry.emails`), content type application/json, transient
    /// (delivery_mode 1), timestamp = the event's time. Best effort: no
    /// confirms, no mandatory, on a channel of its own on the copies
    /// connection (never on the consuming one). The threads that make events
    /// (workers, the I/O thread) hand them over without waiting, so events
    /// never block or slow a job; an event is dropped instead, and counted
    /// (consumer_stats::events_dropped), when max_events_waiting are already
    /// waiting, while the broker blocks the copies connection (a resource
    /// alarm), and while the events channel is down (it is opened again
    /// within a second). One consumer's events leave in the order on_event
    /// sees them (each kind's, with events_per_message above 1); none is
    /// promised across consumers, and events handed to
    /// the socket may still be lost with the connection. Default false.
    bool publish_events = false;
    /// Where lifecycle events go: a topic exchange the consumer declares
    /// (durable) when publish_events is on; a declare that finds it of
    /// another type fails start().
    std::string events_exchange = "tarry.events";
    /// Most lifecycle events waiting to be published (handed over and not
    /// yet written to the socket); beyond it new events are dropped.
    std::size_t max_events_waiting = 10000;
    /// Lifecycle events in one message, 1 to 1000. 1 (the default): one
    /// event a message, its body one JSON object. Above 1: the events of one
    /// kind that wait together (an event waits up to 5 ms for others) leave
    /// in messages of up to this many, each
    /// body a JSON array of their objects, oldest first (routing key and
    /// properties as above, the timestamp the first event's): a busy worker
    /// then costs the broker a message per batch instead of two or more per
    /// job. Each kind's events keep their order; of the events that waited
    /// together, one kind's leave before the next kind's (docs/events.md).
    std::size_t events_per_message = 1;
    /// The largest events_per_message validate() accepts.
    static constexpr std::size_t max_events_per_message = 1000;

    /// How many jobs run at once: workers (threads) or max_in_flight
    /// (coroutines). The derived bounds below count with it.
    std::size_t capacity() const noexcept;
    /// dead_letter_queue, or `<queue>.dead` when that is empty.
    std::string dead_letter_queue_name() const;
    /// channels, or the derived value when it is 0; raised when needed so
    /// that a lane's derived prefetch stays within 65 535.
    std::size_t effective_channels() const noexcept;
    /// How many held jobs make the newest lane hand over:
    /// ceil(max_held / effective_channels()).
    std::size_t lane_hold() const noexcept;
    /// max_due_waiting, or the derived value when it is 0.
    std::size_t effective_max_due_waiting() const noexcept;
    /// prefetch, or the derived value when it is 0; never 0 (no limit).
    std::uint16_t effective_prefetch() const noexcept;
    /// How long before broker_consumer_timeout a due job that has not
    /// started is given back: max(10 % of it, 2 s), at most half of it.
    std::chrono::milliseconds backlog_margin() const noexcept;
    /// min_park_ttl, or the derived value when it is 0.
    std::chrono::milliseconds effective_min_park_ttl() const noexcept;
};

/// Why options cannot work: the option at fault and a sentence naming it.
struct option_problem {
    std::string option;   ///< the member of subscription_options, e.g. "hold_horizon"
    std::string message;  ///< e.g. "hold_horizon (1800000 ms) must leave 180000 ms before ..."
};

/// The first problem that keeps the options from working, or nothing when
/// they can.
std::optional<option_problem> validate(const subscription_options& o);

}  // namespace tarry
