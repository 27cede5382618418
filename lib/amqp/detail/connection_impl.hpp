// The Asio driver: runs a connection_machine over a socket, on a strand.
//
// Everything here runs on the strand except the entry points that post to
// it (run_op and the connection/channel front ends) and the snapshot
// accessors (atomics or the mutex). One `session` per transport connection:
// its socket, its machine and its timers; a reconnect makes a new session,
// and a stale session's late completions are ignored. When to make an
// attempt, reconnect or give up, and whom to tell, is connection_lifecycle's
// to decide: the driver feeds it what happened and does what it answers.
#pragma once

#include "channel_shared.hpp"
#include "connection_lifecycle.hpp"
#include "connection_machine.hpp"
#include "transport.hpp"
#include "unique_function.hpp"

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/completion.hpp"
#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/connection_config.hpp"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tarry::amqp::detail {

/// Every operation completes through its op_handler (completion.hpp):
/// std::move(h).complete(strand(), diagnostics, values...), which runs the
/// handler through its associated executor (the strand by default, i.e.
/// inline when already on it) after writing the diagnostics, if asked for.
using void_handler = op_handler<>;

class connection_impl : public std::enable_shared_from_this<connection_impl> {
public:
    using strand_type = boost::asio::strand<boost::asio::any_io_executor>;

    connection_impl(boost::asio::any_io_executor ex, connection_config config,
                    connection_hooks hooks);

    const strand_type& strand() const noexcept { return strand_; }
    boost::asio::any_io_executor executor() const noexcept { return executor_; }
    const connection_config& config() const noexcept { return config_; }

    // ---- entry points (any thread) ----------------------------------------------
    void connect(void_handler h);
    void close(void_handler h);
    /// Closes without a waiter (the owner went away).
    void shutdown();
    void open_channel(op_handler<channel> h);
    void wait_unblocked(void_handler h);

    /// Posts: registers `h` as an operation (with its cancellation slot),
    /// then calls start(*this, id) on the strand. `convert(h, ev_op_done&&)`
    /// completes h from the machine's answer.
    template <class Handler, class Convert, class Start>
    void run_op(Handler h, Convert convert, Start start) {
        boost::asio::post(strand_, [self = shared_from_this(), h = std::move(h),
                                    convert = std::move(convert),
                                    start = std::move(start)]() mutable {
            const op_id id = self->add_op(std::move(h), std::move(convert));
            start(*self, id);
            self->pump_current();
        });
    }

    /// On the strand: the machine of the session `ch` belongs to, if that
    /// session is current and open; otherwise fails `op` and returns null.
    connection_machine* machine_for(const channel_shared& ch, op_id op);
    /// On the strand: publishes of `ch` awaiting a confirm.
    std::size_t unconfirmed_of(const channel_shared& ch) const;
    /// On the strand: fails an operation that never reached the machine.
    void fail_op(op_id op, std::error_code ec, std::string detail);
    /// On the strand: a fresh id for a consumer, and its handlers.
    op_id add_consumer(std::shared_ptr<channel_shared> ch, consumer_handlers handlers);
    void remove_consumer(op_id consumer);

    // ---- snapshots (any thread) ----------------------------------------------
    bool is_open() const noexcept { return open_.load(); }
    bool blocked() const noexcept { return blocked_.load(); }
    diagnostics last_error() const;
    std::optional<connection_info> info() const;
    connection_usage usage() const noexcept;

private:
    struct session;

    template <class Handler, class Convert>
    op_id add_op(Handler h, Convert convert) {
        const op_id id = next_op_++;
        auto slot = boost::asio::get_associated_cancellation_slot(h);
        if (slot.is_connected()) {
            slot.assign([w = weak_from_this(), id](boost::asio::cancellation_type) {
                if (auto self = w.lock()) {
                    boost::asio::post(self->strand_, [self, id] { self->cancel_op(id); });
                }
            });
        }
        ops_.emplace(id, [h = std::move(h), convert = std::move(convert)](ev_op_done&& ev) mutable {
            auto s = boost::asio::get_associated_cancellation_slot(h);
            if (s.is_connected()) s.clear();
            convert(std::move(h), std::move(ev));
        });
        return id;
    }
    void cancel_op(op_id id);

    /// A new session, connecting to addresses_[address].
    void start_attempt(std::size_t address);
    void begin_amqp(const std::shared_ptr<session>& s);
    void fail_attempt(const std::shared_ptr<session>& s, std::error_code ec, std::string detail);
    void start_read(const std::shared_ptr<session>& s);
    void pump(const std::shared_ptr<session>& s);
    void pump_current();
    void arm_deadline(const std::shared_ptr<session>& s);
    void close_socket(const std::shared_ptr<session>& s);

    void handle(const std::shared_ptr<session>& s, event& e);
    void on_open(const std::shared_ptr<session>& s, ev_connection_open& e);
    void on_closed(const std::shared_ptr<session>& s, ev_connection_closed& e);
    void set_last_error(const diagnostics& d);

    /// Feeds `in` to lifecycle_ and does what it answers, in order.
    void feed(life::any_input in);
    void perform(life::any_action& a);
    /// Ends the current session: abandons its attempt, or closes it cleanly.
    void close_session();
    /// Completes and forgets every waiter in `waiters`, with `why`.
    void complete_all(std::vector<void_handler>& waiters, const diagnostics& why);

    boost::asio::any_io_executor executor_;
    strand_type strand_;
    connection_config config_;
    connection_hooks hooks_;
    std::optional<boost::asio::ssl::context> tls_context_;
    std::string tls_setup_error_;
    std::vector<broker_address> addresses_;  // config_.addresses(), as the lifecycle numbers them

    // Strand only.
    connection_lifecycle lifecycle_;
    std::shared_ptr<session> session_;
    std::uint64_t sessions_started_ = 0;
    op_id next_op_ = 1;
    std::unordered_map<op_id, unique_function<void(ev_op_done&&)>> ops_;
    std::unordered_map<std::uint64_t, std::shared_ptr<channel_shared>> channels_;  // by serial
    struct consumer_entry {
        std::shared_ptr<channel_shared> channel;
        consumer_handlers handlers;
    };
    std::unordered_map<op_id, consumer_entry> consumers_;
    std::vector<void_handler> connect_waiters_;
    std::vector<void_handler> close_waiters_;
    std::vector<void_handler> unblock_waiters_;
    boost::asio::steady_timer reconnect_timer_;

    // Any thread.
    std::atomic<bool> open_{false};
    std::atomic<bool> blocked_{false};
    std::atomic<std::uint64_t> bytes_sent_{0}, bytes_received_{0}, connects_{0},
        failed_attempts_{0}, connections_lost_{0};
    mutable std::mutex mutex_;
    diagnostics last_error_;
    std::optional<connection_info> info_;
};

}  // namespace tarry::amqp::detail
