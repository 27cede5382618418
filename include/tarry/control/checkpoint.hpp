// A checkpoint: what a queue's control stream says, up to one of its
// offsets, in a few large entries instead of one entry per command. A
// consumer writes one now and then to the queue's checkpoint stream
// (checkpoint_stream.hpp); a starting consumer restores the newest one and
// reads the control stream only after the offset it covers
// (docs/control.md, "Checkpoints").
//
// On the wire a checkpoint is one or more parts, each an entry of the
// checkpoint stream: type "tarry.checkpoint", message_id the checkpoint's
// id, and the headers x-tarry-part (0-based), x-tarry-parts (how many) and
// x-tarry-covers (the control stream's offset of the last entry it
// reflects). A part's body is the format version (one byte, 1), then
// records, big-endian as AMQP's own types:
//   't' tombstone:     shortstr job id, u64 generation, i64 written (µs)
//   's' supersession:  shortstr schedule id, u64 generation, i64 written
//   'c' run claim:     longstr occurrence id, longstr copy, i64 written
// A supersession is what an upsert or a removal of a schedule leaves: its
// older occurrences are dropped. Pure values and functions; any thread.
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/control/schedule_entry.hpp"
#include "tarry/control/tombstone.hpp"
#include "tarry/time/time_points.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tarry::control {

/// The `type` property of a checkpoint's part.
inline constexpr std::string_view checkpoint_type = "tarry.checkpoint";
/// A part's body stays under this many bytes (one record more at most):
/// RabbitMQ 4.0 refuses messages over 16 MiB by default.
inline constexpr std::size_t checkpoint_part_bytes = 1 << 20;

/// Builds a checkpoint's parts from its records, added one by one. Not
/// thread-safe; a value.
class checkpoint_builder {
public:
    /// Parts of about `part_bytes` (at least 64).
    explicit checkpoint_builder(std::size_t part_bytes = checkpoint_part_bytes);

    /// A live tombstone (tombstone_table's entry for its job id).
    void add_tombstone(const tombstone& t);
    /// A schedule's supersession: `t.job_id` is the schedule id.
    void add_supersession(const tombstone& t);
    /// The winning claim of an occurrence.
    void add_claim(std::string_view occurrence_id, std::string_view copy, wall_time written);
    /// Records added so far.
    std::size_t records() const noexcept { return records_; }

    /// The parts (at least one, also with no record), each a persistent
    /// message with the headers above: `id` names the checkpoint, `covers`
    /// is the control stream's offset it reflects, `written` its timestamp.
    std::vector<amqp::message> finish(const std::string& id, std::int64_t covers, wall_time written) &&;

private:
    std::vector<std::uint8_t>& open_part();
    // A record of an id, a generation and a written time ('t' or 's').
    void add_keyed(std::uint8_t kind, const tombstone& t);

    std::size_t part_bytes_;
    std::vector<std::vector<std::uint8_t>> bodies_;
    std::size_t records_ = 0;
};

/// A part's place in its checkpoint, from its properties.
struct checkpoint_part {
    std::string id;            ///< the checkpoint's (message_id)
    std::uint32_t part = 0;    ///< 0-based
    std::uint32_t parts = 0;   ///< how many it has, at least 1
    std::int64_t covers = 0;   ///< the control stream's offset it reflects

    /// Equal when every field is.
    friend bool operator==(const checkpoint_part&, const checkpoint_part&) = default;
};

/// Reads an entry as a checkpoint's part. Nothing when it is none: `why` is
/// then empty for an entry of another type and says what is wrong with a
/// malformed part (no id, a part number out of range, a negative offset).
/// Never throws on any properties.
std::optional<checkpoint_part> read_checkpoint_part(const amqp::basic_properties& props, std::string& why);

/// What a checkpoint's records are handed to; an empty member skips them.
struct checkpoint_visitor {
    std::function<void(const tombstone&)> on_tombstone;     ///< a live tombstone
    std::function<void(const tombstone&)> on_supersession;  ///< job_id: the schedule id
    std::function<void(const run_claim&)> on_claim;         ///< occurrence_id, copy and written set
};

/// Reads one part's body, handing each record to `v` in order. False, with
/// `why`, on a malformed body (an unknown version or record, a truncated
/// or empty id); the records before the fault were handed on, so check
/// every part (with an empty visitor) before applying any.
bool read_checkpoint_records(std::span<const std::uint8_t> body, const checkpoint_visitor& v, std::string& why);

/// The `type` of the control-stream entry that announces a checkpoint.
inline constexpr std::string_view checkpointed_type = "tarry.checkpointed";

/// "Checkpoint `id`, covering the control stream up to offset `covers`, was
/// written to the checkpoint stream": an entry of the control stream, so
/// that every consumer counts the entries after it.
struct checkpointed {
    std::string id;           ///< the checkpoint's (message_id)
    std::int64_t covers = 0;  ///< the control stream's offset it reflects
    wall_time written{};  ///< kept to whole seconds

    /// Equal when every field is.
    friend bool operator==(const checkpointed&, const checkpointed&) = default;
};

/// The entry for `c` (persistent, empty body; message_id, x-tarry-covers,
/// timestamp).
amqp::message to_entry(const checkpointed& c);
/// Reads an entry as an announcement: nothing, with `why` empty, for
/// another type; with `why`, for a malformed one. Never throws.
std::optional<checkpointed> read_checkpointed(const amqp::basic_properties& props, std::string& why);

}  // namespace tarry::control
