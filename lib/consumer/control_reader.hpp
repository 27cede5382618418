// The consumer's reader of its queue's control stream (docs/control.md):
// on the consuming connection it reads every entry from the first (after a
// loss, from the last offset read + 1), puts the tombstones in the table
// and the run claims in theirs (telling `on_claims` after each claim), and
// tells when it has read up to the end. Once attached, run claims are in
// force (run_claims::enforce). Streams have no end-of-stream
// signal, so "the end" is a marker it appends itself (type tarry.marker,
// an id of its own) and then reads back.
//
// A queue without a control stream yet: attach() says so at once, and the
// reader looks again every `poll` until the stream appears. A channel the
// broker closes, or a consumer it cancels, is attached again after `poll`.
// A subscription that goes quiet without either (the broker delivers
// nothing more, and says nothing) is found by what this process appends:
// an entry confirmed, nothing at all read within `stall_timeout` after it,
// and the entry still waited for (its marker, or `tables.awaits_entry`);
// the reader then attaches again from the last entry read.
// Threads: the I/O thread only (the connection's executor); the table is
// thread-safe for the workers that read it.
#pragma once

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/connection.hpp"
#include "cancellations.hpp"
#include "checkpoint_writer.hpp"
#include "tarry/control/control_stream.hpp"
#include "run_claims.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace tarry::detail {

class control_reader : public std::enable_shared_from_this<control_reader> {
public:
    struct settings {
        std::string queue;
        std::chrono::milliseconds poll = std::chrono::seconds(1);
        /// How long attach() waits to read its marker back.
        std::chrono::milliseconds catch_up_timeout = std::chrono::seconds(10);
        std::uint16_t prefetch = 1000;
        /// Entries after the newest checkpoint before this reader writes
        /// one (checkpoint_writer); 0: never.
        std::size_t checkpoint_every = 20'000;
        /// The writer's random wait before it writes (of several readers
        /// one writes).
        std::chrono::milliseconds checkpoint_jitter = std::chrono::seconds(2);
        /// How long a start looks for the newest checkpoint.
        std::chrono::milliseconds find_timeout = std::chrono::seconds(10);
        /// How long after an entry of this process was confirmed (see
        /// appended()) the reader waits to read anything before it takes
        /// its subscription for stalled.
        std::chrono::milliseconds stall_timeout = std::chrono::seconds(10);
    };
    /// What the reader tells: attached (caught up) or a failure, in words.
    using report = std::function<void(bool attached, const std::string& detail)>;

    /// `conn` and `marks` (a publisher on any connection, for the markers
    /// and the checkpoints) must outlive the reader. `tables.claims` may be
    /// null (claims are then ignored); `tables.on_claims` runs on the I/O
    /// thread.
    control_reader(amqp::connection& conn, publisher& marks, settings s, control_tables tables, report tell);

    /// Attaches (unless attached already) and reads up to the end. True
    /// once caught up; false when the stream does not exist or cannot be
    /// read now (it then tries again every `poll` on its own). After a
    /// marker that does not come back within catch_up_timeout it reports
    /// that and returns true (it reads on, and counts as caught up, for the
    /// checkpoint writer, only once the marker is read).
    boost::asio::awaitable<bool> attach();
    /// An entry this process appended to the stream (a run claim, a
    /// marker) was confirmed: there is at least one more entry to read.
    /// When nothing at all is read within stall_timeout and the entry is
    /// still waited for (attach()'s marker, or `tables.awaits_entry()`;
    /// one read before this call is not), the reader tells so and attaches
    /// again from the last entry read.
    void appended();
    /// The consuming connection is gone, and the channel with it.
    void detached();
    /// No more attaching or polling (stop()).
    void close();
    bool attached() const noexcept { return consuming_; }
    /// Offset of the last entry read, if any.
    std::optional<std::int64_t> last_offset() const noexcept { return last_offset_; }

private:
    /// Before the first read: the newest checkpoint into the tables, and
    /// the offset it covers as the last one read. Says what it restored
    /// (empty when nothing).
    boost::asio::awaitable<std::string> restore();
    boost::asio::awaitable<bool> attach_once(std::string restored);
    /// What the consumer of channel incarnation `incarnation` does with an
    /// entry and with the broker's cancel (nothing, once it is stale).
    amqp::consumer_handlers handlers_for(std::uint64_t incarnation);
    void on_entry(amqp::delivery d);
    void retry_later();
    /// appended()'s wait ran out with nothing read and an entry waited
    /// for: a fresh channel and consumer from the last entry read (the old
    /// channel is let go).
    void attach_again_stalled();
    /// Consuming, and the marker of the last attach read back (even after
    /// attach() stopped waiting for it): what the checkpoint writer counts
    /// as caught up.
    bool read_to_end() const noexcept { return consuming_ && !awaited_end_; }
    void expire_now_and_then();

    amqp::connection& conn_;
    publisher& marks_;
    const settings settings_;
    const control_tables tables_;
    const report tell_;
    const std::shared_ptr<checkpoint_writer> writer_;

    amqp::channel channel_;
    bool consuming_ = false;
    bool attaching_ = false;
    bool closed_ = false;
    std::uint64_t incarnation_ = 0;  // of channel_: a stale close handler finds another
    std::optional<std::int64_t> last_offset_;
    std::optional<control::stream_end> awaited_end_;  // the marker attach() waits for
    boost::asio::steady_timer caught_up_;  // cancelled when the marker is read
    boost::asio::steady_timer retry_;
    boost::asio::steady_timer expiry_;
    bool expiry_armed_ = false;
    /// What appended() watches: entries read (markers included), and how
    /// many had been when its timer was armed.
    struct stall_watch {
        explicit stall_watch(const boost::asio::any_io_executor& ex) : timer(ex) {}
        boost::asio::steady_timer timer;
        bool armed = false;
        std::uint64_t reads = 0;
        std::uint64_t reads_when_armed = 0;
    };
    stall_watch stall_;
};

}  // namespace tarry::detail
