// The input language of fuzz_consumer_core.cpp, shared with make_corpus.cpp
// (which writes its seeds): a few bytes of options, then a program, one
// step per opcode byte (taken modulo the number of steps) and its argument
// bytes. Bytes past the end read as 0, so every input is a program.
//
//   byte 0   bits 0-1: channels (1, 2, 3, 4); bits 2-3: max_held (2, 3, 4,
//            8); bits 4-5: max_due_waiting (2, 3, 4, 6); bit 6: a
//            delivery_limit; bit 7: with bit 6, that limit is 3 (else 1),
//            without it, parking through a delay cascade (4 binary levels
//            of 500 ms) instead of the wait-queue ladder
//   byte 1   bits 0-1: retry (none, 2 attempts, 3 attempts, 3 attempts
//            with a 1 s time limit); bit 2: broker_consumer_timeout 60 s
//            (else 5 s); bit 3: dead letters to an exchange; bit 4:
//            max_delay 30 s; bits 5-6: copy_confirm_timeout (1 s, 3 s,
//            30 s, 200 ms); bit 7: default_delay 500 ms (else 0)
//   then     steps (op below, then its arguments)
#pragma once

#include <cstdint>

namespace tarry_fuzz::core_program {

enum op : std::uint8_t {
    subscribed,        ///< the topology is declared: core.subscribed()
    subscribe_failed,  ///< core.subscribe_failed()
    start_open,        ///< [k] a pending start_lane's channel opens (lane_opened) if it is down
    start_consuming,   ///< [k] a pending start_lane's basic.consume succeeds (lane_consuming)
    start_failed,      ///< [k] a pending start_lane fails (lane_start_failed)
    deliver,           ///< [what, flags] a delivery; see below
    deliver_copy,      ///< [k, where] a confirmed copy to the work or a wait queue comes back as a
                       ///< delivery (on lane where / 16, modulo the lanes)
    pop,               ///< a worker pops a due job: runs it, or is to hand it back (not current / not yet due)
    finish,            ///< [k, outcome] a popped job reaches the core: its handler's outcome (% 6,
                       ///< below), or handed back unrun
    confirm,           ///< [k] the broker confirms a publish not yet answered
    refuse,            ///< [k, why] the broker refuses it (why % 8 == 7: header_too_large, else nacked)
    lose_lane,         ///< [lane, stale] the lane's channel closes (its current or an older incarnation)
    lose_connection,   ///< the consuming connection is lost
    advance,           ///< [amount] both clocks move forward (amount % 12: advance_ms below)
    step_wall,         ///< [amount] the wall clock alone steps (amount % 6: wall_step_ms below)
    tick,              ///< core.tick()
    wake,              ///< advance to next_wake() (when there is one), then tick
    sweep,             ///< the driver runs the sweep it was asked for
    stop,              ///< core.stop()
    give_back,         ///< when stopping: the store's jobs, drained, given back
    cancel,            ///< [k] a tombstone for delivery k (modulo those taken) is read: its copies
                       ///< (incarnation 0 here) are cancelled from now on
    broker_cancel,     ///< [lane] the broker cancels the lane's consumer (its queue deleted, RabbitMQ
                       ///< 4.3's consumer timeout): consumer_cancelled; no delivery comes on it after
    op_count
};

/// deliver's first argument: lane = what / 16 (modulo the lanes), kind = what % 16.
enum delivery_kind : std::uint8_t {
    no_header = 0,  ///< neither header: default_delay
    // 1..11: perform_job_at = now + due_offset_ms[kind - 1]
    x_delay = 12,       ///< x-delay 1500 (from arrival)
    bad_header = 13,    ///< perform_job_at "not a time": dead-lettered
    unreadable_properties = 14,  ///< properties that did not decode (raw bytes kept)
    unreadable_body = 15,        ///< a body above max_body_size (dropped)
};
inline constexpr std::int64_t due_offset_ms[11] = {-1000, 0, 1, 50, 500, 1000, 1999, 2000, 2500, 10000, 3600000};

/// deliver's second argument.
enum delivery_flag : std::uint8_t {
    redelivered = 1,
    delivery_count_shift = 1,  ///< bits 1-2: x-delivery-count none, 0, 1, 2
    stale_incarnation = 8,      ///< on an earlier incarnation of the lane (or none): not current
    attempt_shift = 4,         ///< bits 4-5: x-tarry-attempt none, 2, 3, 9
    short_expiration = 64,     ///< expiration "1" (ms): a job due later is dead-lettered
};

/// finish's outcome.
enum outcome : std::uint8_t { success, failure, failure_soon, failure_late, reject, requeue, outcome_count };

inline constexpr std::int64_t advance_ms[12] = {1, 10, 100, 200, 500, 999, 1000, 2000, 3000, 5000, 30000, 3600000};
inline constexpr std::int64_t wall_step_ms[6] = {-500, -3600000, -1, 1000, 3600000, -2500};

}  // namespace tarry_fuzz::core_program
