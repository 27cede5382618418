// The wire contract of periodic occurrences: the headers that make a job an
// occurrence of a schedule (docs/periodic.md, docs/design.md's header
// table). Pure functions over message properties; any thread.
#pragma once

#include "tarry/amqp/wire/properties.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tarry::contract {

inline constexpr std::string_view schedule_header = "x-tarry-schedule";      ///< the schedule id
inline constexpr std::string_view nominal_header = "x-tarry-nominal";        ///< epoch seconds, as text
inline constexpr std::string_view spec_header = "x-tarry-spec";              ///< the schedule in one line
inline constexpr std::string_view occurrence_header = "x-tarry-occurrence";  ///< 1-based number in the chain
inline constexpr std::string_view copy_header = "x-tarry-copy";              ///< unique per published copy

/// What the headers of an occurrence say.
struct occurrence_headers {
    std::string schedule_id;  ///< 1 to 255 bytes with the nominal text and '@'
    std::string nominal;      ///< periodic::format_nominal's text
    std::string spec;         ///< periodic::to_string's text
    std::uint64_t number = 1; ///< 1-based number in the chain
    std::string copy;         ///< this published copy's id (new_copy_id())

    /// `<schedule_id>@<nominal>`: the occurrence's message_id.
    std::string id() const { return schedule_id + "@" + nominal; }
    /// Equal when every header is.
    friend bool operator==(const occurrence_headers&, const occurrence_headers&) = default;
};

/// Writes the five headers (strings, and a signed 64-bit number), replacing
/// earlier ones, and sets message_id to o.id(). Headers are created when
/// absent.
void write_occurrence(amqp::wire::basic_properties& props, const occurrence_headers& o);

/// Reads them. Nothing when there is no x-tarry-schedule (not an
/// occurrence; `why` empty); nothing with `why` set when it is there but
/// the others are missing, of the wrong type or empty (a number below 1).
/// Never throws on any properties.
std::optional<occurrence_headers> read_occurrence(const amqp::wire::basic_properties& props, std::string& why);

/// Turns `props` (a template's, or the occurrence before's) into those of
/// the occurrence `o`: the five headers and message_id o.id(), due at
/// `nominal` (perform_job_at; x-delay removed), `generation`, `timestamp`
/// `now`, persistent; `type`, the attempt and reason headers and the
/// broker's death headers removed (an occurrence starts at attempt 1).
void write_occurrence_copy(amqp::wire::basic_properties& props, const occurrence_headers& o,
                           std::chrono::system_clock::time_point nominal, std::uint64_t generation,
                           std::chrono::system_clock::time_point now);

/// A fresh copy id: 32 hex digits from a random 128-bit value. Any thread.
std::string new_copy_id();

}  // namespace tarry::contract
