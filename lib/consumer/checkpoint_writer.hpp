// The consumer's writer of checkpoints (docs/control.md, "Checkpoints"):
// once `every` control-stream entries followed the newest checkpoint it
// knows of (restored, or announced by any consumer in the control stream),
// or `at_least_every` passed since it was written, it waits a random
// moment (so that of several consumers one writes), looks again, then
// writes the tables the reader filled as a checkpoint to the checkpoint
// stream and announces it in the control stream. It writes only while the
// reader is attached (its tables are whole). One write at a time; a failed
// write is reported and tried again at the next entry or tick.
// Threads: the I/O thread only (the connection's executor).
#pragma once

#include "cancellations.hpp"
#include "run_claims.hpp"

#include "tarry/amqp/connection.hpp"
#include "tarry/control/checkpoint.hpp"
#include "tarry/publisher/publisher.hpp"
#include "tarry/time/time_points.hpp"

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tarry::detail {

/// What the control-stream reader fills: the tables of cancellations and
/// (when claims are read) of run claims, who to tell after each claim, and
/// whether an entry this process appended is still waited for (the
/// reader's stall check asks; on the I/O thread).
struct control_tables {
    std::shared_ptr<cancellations> cancels;
    std::shared_ptr<run_claims> claims;     ///< may be null: claims ignored
    std::function<void()> on_claims;        ///< may be empty
    std::function<bool()> awaits_entry;     ///< may be empty: never
};

class checkpoint_writer : public std::enable_shared_from_this<checkpoint_writer> {
public:
    struct settings {
        std::string queue;
        std::size_t every = 20'000;  ///< entries after the newest checkpoint; 0: never write
        std::chrono::milliseconds at_least_every = std::chrono::hours(12);
        std::chrono::milliseconds jitter = std::chrono::seconds(2);
    };
    /// Tells a failure, in words.
    using report = std::function<void(const std::string& detail)>;

    /// `conn` (for the declare) and `parts` (the publisher of the parts and
    /// the announcement) must outlive the writer.
    checkpoint_writer(amqp::connection& conn, publisher& parts, settings s, control_tables tables, report tell);

    /// The newest checkpoint known: it covers up to `covers`, written at
    /// `written`. Older ones are ignored.
    void known(std::int64_t covers, wall_time written);
    /// The reader read up to `offset` at `now`; `attached`: it has caught up.
    void read_up_to(std::int64_t offset, bool attached, wall_time now);
    /// Now and then (every minute): a checkpoint may be due by age.
    void tick(bool attached, wall_time now);
    /// No more writing.
    void close();

private:
    bool due(wall_time now) const;
    void arm();
    void write();
    /// The tables as a checkpoint's parts, named and dated as `as`.
    std::vector<amqp::message> snapshot(const control::checkpointed& as) const;

    amqp::connection& conn_;
    publisher& parts_;
    const settings settings_;
    const control_tables tables_;
    const report tell_;
    boost::asio::steady_timer jitter_;
    std::optional<std::int64_t> read_up_to_;
    std::optional<std::int64_t> known_covers_;
    wall_time known_written_{};
    bool attached_ = false;
    bool armed_ = false;
    bool writing_ = false;
    bool declared_ = false;
    bool closed_ = false;
};

}  // namespace tarry::detail
