// The control stream's entries about periodic schedules (docs/periodic.md):
// an upsert (the schedule's latest spec and template), a removal, and a run
// claim (the first claim for an occurrence names the one copy that runs).
//
// On the wire (docs/design.md's entry table), each an entry whose `type`
// says which, `timestamp` when it was written (the writer's clock, whole
// seconds) and message_id the schedule id (upsert, removal) or the
// occurrence id (claim). Pure values and functions; any thread.
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/contract/occurrence_headers.hpp"
#include "tarry/time/time_points.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace tarry::control {

inline constexpr std::string_view upsert_type = "tarry.schedule";     ///< `type` of an upsert
inline constexpr std::string_view removal_type = "tarry.unschedule";  ///< `type` of a removal
inline constexpr std::string_view claim_type = "tarry.claim";         ///< `type` of a run claim

/// A schedule's latest spec: it supersedes the upserts and removals of the
/// same id with a lower generation, and drops their occurrences.
struct schedule_upsert {
    std::string schedule_id;       ///< 1 to 255 bytes
    std::uint64_t generation = 0;  ///< µs since the epoch (x-tarry-generation)
    std::string spec;              ///< periodic::to_string's text (x-tarry-spec)
    /// What each occurrence carries: its body and properties (the entry's
    /// own `type`, message_id and timestamp are the entry's, not the
    /// template's, and the occurrence headers are set per occurrence).
    amqp::message template_message;
    wall_time written{};           ///< when it was written (the entry's timestamp)

    /// Equal when every field is.
    friend bool operator==(const schedule_upsert&, const schedule_upsert&) = default;
};

/// The schedule is gone: its occurrences of a lower generation are dropped.
struct schedule_removal {
    std::string schedule_id;       ///< 1 to 255 bytes
    std::uint64_t generation = 0;  ///< µs since the epoch (x-tarry-generation)
    wall_time written{};           ///< when it was written (the entry's timestamp)

    /// Equal when every field is.
    friend bool operator==(const schedule_removal&, const schedule_removal&) = default;
};

/// "Copy `copy` runs occurrence `occurrence_id`" (x-tarry-schedule and
/// x-tarry-nominal say whose).
struct run_claim {
    std::string occurrence_id;  ///< `<schedule id>@<nominal>`
    std::string schedule_id;    ///< whose occurrence (x-tarry-schedule)
    std::string nominal;        ///< which one (x-tarry-nominal)
    std::string copy;           ///< the copy that runs it (x-tarry-copy)
    wall_time written{};        ///< when it was written (the entry's timestamp)

    /// Equal when every field is.
    friend bool operator==(const run_claim&, const run_claim&) = default;
};

/// One of the control stream's entries about schedules.
using schedule_entry = std::variant<schedule_upsert, schedule_removal, run_claim>;

/// The entry to append (persistent, delivery_mode 2). (Not to_message:
/// that name is the tombstone's, and braces must still pick it.)
///@{
amqp::message to_entry(const schedule_upsert& u);
amqp::message to_entry(const schedule_removal& r);
amqp::message to_entry(const run_claim& c);
///@}

/// Reads a control-stream entry as one of these. Nothing when it is not:
/// `why` is empty for an entry of another type (a tombstone, a marker) and
/// says what is wrong for a malformed one (a missing id, timestamp,
/// generation, spec or copy). Never throws on any message.
std::optional<schedule_entry> read_schedule_entry(const amqp::message& m, std::string& why);

/// An occurrence to publish: `from` (a template, or the occurrence before)
/// with the headers of `o` and message_id o.id(), due at `nominal`
/// (perform_job_at; x-delay removed), generation `generation`, timestamp
/// `now`, persistent; the attempt header and the broker's death headers
/// removed (a successor starts at attempt 1).
amqp::message occurrence_message(const amqp::message& from, const contract::occurrence_headers& o, wall_time nominal,
                                 std::uint64_t generation, wall_time now);

}  // namespace tarry::control
