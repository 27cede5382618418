// Finding the newest complete checkpoint (checkpoint.hpp) in a checkpoint
// stream, read backwards from its end one range of offsets at a time, so
// that a start reads about one checkpoint, not the stream. Sans-I/O: the
// driver reads each range next() asks for (a consumer from `from` until an
// entry at `to` - 1 or later), hands every entry in, then says the range
// was read. A stream's offsets have gaps (RabbitMQ gives each segment's
// first offset to an entry of its own, never delivered): the search never
// takes a missing offset for the stream's start, which the driver tells it.
//
// Promises:
// - found() is the complete checkpoint (every part, once each) whose last
//   part is at the highest offset below `end` among the complete ones the
//   search reached; parts in order.
// - A checkpoint with a missing part (its writer died while writing it; a
//   part beyond retention) is passed over for an older one; a malformed
//   part is reported in skipped() and its checkpoint passed over.
// - It ends (done()) once found, at the stream's first entry, or after
//   `max_entries` entries read without one; never asks for a range twice.
// Not thread-safe; a value.
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/control/checkpoint.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tarry::control {

/// The search for the newest complete checkpoint, sans-I/O (see this
/// header's opening comment). Not thread-safe; a value.
class checkpoint_search {
public:
    /// Offsets [from, to) of the stream.
    struct range {
        std::int64_t from = 0;  ///< the first offset to read
        std::int64_t to = 0;    ///< one past the last
        /// Equal when both ends are.
        friend bool operator==(const range&, const range&) = default;
    };
    /// A complete checkpoint: its parts in order and what they say.
    struct result {
        std::string id;                   ///< the checkpoint's (its parts' message_id)
        std::int64_t covers = 0;          ///< the control stream's offset it reflects
        std::vector<amqp::message> parts; ///< part 0 first
    };

    /// Searches the entries in [first, end): `end` the offset of the
    /// reader's own marker, say, `first` the stream's first entry's (it
    /// begins there); gives up after `max_entries` entries.
    checkpoint_search(std::int64_t first, std::int64_t end, std::size_t max_entries = 20'000);

    /// The range to read next; nothing once done().
    std::optional<range> next() const;
    /// An entry read (any type; markers too) at `offset`. Entries at or
    /// after the end of what was read so far are ignored.
    void entry(std::int64_t offset, amqp::message m);
    /// The range next() asked for was read.
    void range_read();

    /// Whether the search ended: found, at the stream's start, or out of budget.
    bool done() const noexcept { return done_; }
    /// The checkpoint found, once done(); nothing when there is none.
    const std::optional<result>& found() const noexcept { return found_; }
    /// Moves the checkpoint found out (found() is empty after).
    std::optional<result> take_found() noexcept { return std::exchange(found_, std::nullopt); }
    /// Why nothing was found, for a log line (empty when found or not done).
    const std::string& why_none() const noexcept { return why_none_; }
    /// What was wrong with the malformed parts met (each passed over).
    const std::vector<std::string>& skipped() const noexcept { return skipped_; }
    /// Entries read so far.
    std::size_t entries_read() const noexcept { return read_; }

private:
    struct gathering {
        std::uint32_t parts = 0;
        std::int64_t covers = 0;
        std::map<std::uint32_t, amqp::message> have;
        std::optional<std::int64_t> last_part_at;  // offset of part parts-1
        bool broken = false;                      // a malformed or contradicting part
    };
    void decide();
    void finish(std::string why);

    std::int64_t first_;         // the stream's first offset
    std::int64_t read_down_to_;  // every entry in [read_down_to_, end) was read
    std::size_t max_entries_;
    std::size_t read_ = 0;
    std::int64_t step_ = 1;
    std::optional<range> next_;
    bool done_ = false;
    std::map<std::string, gathering> seen_;
    std::set<std::string> passed_over_;
    std::optional<result> found_;
    std::string why_none_;
    std::vector<std::string> skipped_;
};

}  // namespace tarry::control
