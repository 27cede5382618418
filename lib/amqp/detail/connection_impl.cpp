// The Asio driver: sessions, the read/write loop, timers, events, and the
// connection's life (connection_lifecycle's inputs and actions).
#include "connection_impl.hpp"

#include "op_diagnostics.hpp"

#include "tarry/amqp/url.hpp"

#include <boost/asio/connect.hpp>

#include <deque>

namespace tarry::amqp::detail {

namespace asio = boost::asio;
using clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t read_chunk = 64 * 1024;
/// How long a finished session may take to write its last frames (a
/// close-ok) before its socket is closed anyway.
constexpr auto final_write_grace = std::chrono::seconds(1);

std::string where(const broker_address& a) { return a.host + ":" + std::to_string(a.port); }

}  // namespace

struct connection_impl::session {
    session(const asio::any_io_executor& ex, asio::ssl::context* tls, machine_config mc,
            std::uint64_t n, broker_address addr)
        : number(n),
          address(std::move(addr)),
          stream(ex, tls),
          resolver(ex),
          machine(std::move(mc)),
          deadline(ex),
          connect_timer(ex) {}

    std::uint64_t number;  // 1 for the first, counting each reconnect
    broker_address address;  // where this session connects (its port effective)
    transport stream;
    asio::ip::tcp::resolver resolver;
    connection_machine machine;
    asio::steady_timer deadline;
    std::optional<time_point> armed;
    asio::steady_timer connect_timer;
    std::vector<std::uint8_t> write_buf;
    const char* step = "resolving the host name";
    bool writing = false;
    bool reading = false;
    bool socket_closed = false;
    bool was_open = false;
    bool refused = false;  // the TCP connect was refused (nothing listens)
    bool ended = false;
    time_point finished_at{};
};

connection_impl::connection_impl(asio::any_io_executor ex, connection_config config,
                                 connection_hooks hooks)
    : executor_(ex),
      strand_(asio::make_strand(ex)),
      config_(std::move(config)),
      hooks_(std::move(hooks)),
      addresses_(config_.addresses()),
      lifecycle_(config_, retry::make_random_source()),
      reconnect_timer_(strand_) {
    if (config_.tls) {
        tls_context_.emplace(asio::ssl::context::tls_client);
        boost::system::error_code ec;
        const auto& t = config_.tls_options;
        if (!t.ca_file.empty()) {
            tls_context_->load_verify_file(t.ca_file, ec);
            if (ec) tls_setup_error_ = "cannot load CA file '" + t.ca_file + "': " + ec.message();
        } else {
            tls_context_->set_default_verify_paths(ec);
        }
        if (!ec && !t.cert_file.empty()) {
            tls_context_->use_certificate_chain_file(t.cert_file, ec);
            if (ec) tls_setup_error_ = "cannot load certificate '" + t.cert_file + "': " + ec.message();
        }
        if (!ec && !t.key_file.empty()) {
            tls_context_->use_private_key_file(t.key_file, asio::ssl::context::pem, ec);
            if (ec) tls_setup_error_ = "cannot load key '" + t.key_file + "': " + ec.message();
        }
    }
}

// ---- snapshots ---------------------------------------------------------------

diagnostics connection_impl::last_error() const {
    std::lock_guard lock(mutex_);
    return last_error_;
}

std::optional<connection_info> connection_impl::info() const {
    std::lock_guard lock(mutex_);
    return info_;
}

connection_usage connection_impl::usage() const noexcept {
    return {bytes_sent_.load(), bytes_received_.load(), connects_.load(), failed_attempts_.load(),
            connections_lost_.load()};
}

void connection_impl::set_last_error(const diagnostics& d) {
    std::lock_guard lock(mutex_);
    last_error_ = d;
}

// ---- entry points -------------------------------------------------------------------

void connection_impl::connect(void_handler h) {
    asio::post(strand_, [self = shared_from_this(), h = std::move(h)]() mutable {
        self->connect_waiters_.push_back(std::move(h));
        self->feed(life::input::connect_requested{});
    });
}

void connection_impl::close(void_handler h) {
    asio::post(strand_, [self = shared_from_this(), h = std::move(h)]() mutable {
        if (h) self->close_waiters_.push_back(std::move(h));
        self->feed(life::input::close_requested{});
    });
}

void connection_impl::shutdown() { close(void_handler{}); }

void connection_impl::wait_unblocked(void_handler h) {
    asio::post(strand_, [self = shared_from_this(), h = std::move(h)]() mutable {
        if (!self->lifecycle_.connection_up()) {
            std::move(h).complete(
                self->strand_,
                op_diagnostics("wait for unblocked",
                               diagnostics::from(errc::not_connected, "the connection is not open")));
        } else if (!self->blocked_) {
            std::move(h).complete(self->strand_, diagnostics{});
        } else {
            self->unblock_waiters_.push_back(std::move(h));
        }
    });
}

void connection_impl::open_channel(op_handler<channel> h) {
    run_op(
        std::move(h),
        [this](auto h, ev_op_done&& ev) {
            if (ev.ec || !session_) {
                if (!ev.ec) {
                    ev.ec = errc::not_connected;
                    ev.detail = "the connection is not open";
                }
                std::move(h).complete(strand_, op_diagnostics(wire::channel_open::name, ev), channel{});
                return;
            }
            auto shared = std::make_shared<channel_shared>(
                shared_from_this(), session_->number, ev.channel,
                session_->machine.limits().frame_max);
            channels_[ev.channel.serial] = shared;
            std::move(h).complete(strand_, diagnostics{}, channel(std::move(shared)));
        },
        [](connection_impl& self, op_id id) {
            if (!self.session_ || !self.session_->machine.is_open()) {
                self.fail_op(id, errc::not_connected, "the connection is not open");
                return;
            }
            self.session_->machine.open_channel(id);
        });
}

std::size_t connection_impl::unconfirmed_of(const channel_shared& ch) const {
    if (!session_ || session_->number != ch.session) return 0;
    return session_->machine.unconfirmed(ch.ref);
}

connection_machine* connection_impl::machine_for(const channel_shared& ch, op_id op) {
    if (!session_ || session_->number != ch.session || session_->machine.finished()) {
        fail_op(op, errc::channel_closed,
                "channel " + std::to_string(ch.ref.number) +
                    " belonged to a connection that is gone");
        return nullptr;
    }
    return &session_->machine;
}

void connection_impl::fail_op(op_id op, std::error_code ec, std::string detail) {
    auto it = ops_.find(op);
    if (it == ops_.end()) return;
    auto f = std::move(it->second);
    ops_.erase(it);
    ev_op_done ev;
    ev.id = op;
    ev.ec = ec;
    ev.detail = std::move(detail);
    f(std::move(ev));
}

void connection_impl::cancel_op(op_id id) {
    fail_op(id, errc::operation_cancelled, "cancelled by the caller");
}

op_id connection_impl::add_consumer(std::shared_ptr<channel_shared> ch,
                                    consumer_handlers handlers) {
    const op_id id = next_op_++;
    consumers_.emplace(id, consumer_entry{std::move(ch), std::move(handlers)});
    return id;
}

void connection_impl::remove_consumer(op_id consumer) { consumers_.erase(consumer); }

// ---- connecting ------------------------------------------------------------------------

void connection_impl::start_attempt(std::size_t address) {
    auto s = std::make_shared<session>(strand_, tls_context_ ? &*tls_context_ : nullptr,
                                       machine_config(config_), ++sessions_started_,
                                       addresses_.at(address));
    session_ = s;

    if (!tls_setup_error_.empty()) {
        fail_attempt(s, errc::tls_handshake_failed, tls_setup_error_);
        return;
    }
    if (config_.connection_timeout.count() > 0) {
        s->connect_timer.expires_after(config_.connection_timeout);
        s->connect_timer.async_wait(
            asio::bind_executor(strand_, [self = shared_from_this(), s](boost::system::error_code ec) {
                if (ec || s->was_open || s->machine.finished()) return;
                self->fail_attempt(s, errc::connect_timeout,
                                   "no connection to " + where(s->address) + " within " +
                                       std::to_string(self->config_.connection_timeout.count()) +
                                       " ms (" + s->step + ")");
            }));
    }
    s->resolver.async_resolve(
        s->address.host, std::to_string(s->address.port),
        asio::bind_executor(strand_, [self = shared_from_this(), s](
                                         boost::system::error_code ec,
                                         asio::ip::tcp::resolver::results_type results) {
            if (s->machine.finished()) return;
            if (ec) {
                self->fail_attempt(s, errc::connect_failed,
                                   "cannot resolve '" + s->address.host + "': " + ec.message());
                return;
            }
            s->step = "connecting over TCP";
            asio::async_connect(
                s->stream.tcp(), results,
                asio::bind_executor(self->strand_, [self, s](boost::system::error_code ec,
                                                             const asio::ip::tcp::endpoint&) {
                    if (s->machine.finished()) return;
                    if (ec) {
                        s->refused = ec == asio::error::connection_refused;
                        self->fail_attempt(s, errc::connect_failed,
                                           "cannot connect to " + where(s->address) + ": " +
                                               ec.message());
                        return;
                    }
                    boost::system::error_code ignored;
                    s->stream.tcp().set_option(asio::ip::tcp::no_delay(true), ignored);
                    if (!s->stream.is_tls()) {
                        self->begin_amqp(s);
                        return;
                    }
                    s->step = "TLS handshake";
                    const auto& t = self->config_.tls_options;
                    s->stream.async_tls_handshake(
                        t.server_name.empty() ? s->address.host : t.server_name, t.verify_peer,
                        asio::bind_executor(self->strand_, [self, s](boost::system::error_code ec) {
                            if (s->machine.finished()) return;
                            if (ec) {
                                self->fail_attempt(s, errc::tls_handshake_failed,
                                                   "TLS handshake with " + where(s->address) +
                                                       " failed: " + ec.message());
                                return;
                            }
                            self->begin_amqp(s);
                        }));
                }));
        }));
}

void connection_impl::begin_amqp(const std::shared_ptr<session>& s) {
    s->step = "AMQP handshake";
    const auto now = clock::now();
    std::optional<time_point> deadline;
    if (config_.connection_timeout.count() > 0) deadline = now + config_.connection_timeout;
    s->machine.start(now, deadline);
    start_read(s);
    pump(s);
}

void connection_impl::fail_attempt(const std::shared_ptr<session>& s, std::error_code ec,
                                   std::string detail) {
    if (s->machine.finished()) return;
    s->machine.abort(ec, std::move(detail));
    pump(s);
}

// ---- the I/O loop ----------------------------------------------------------------------

void connection_impl::start_read(const std::shared_ptr<session>& s) {
    if (s->reading || s->socket_closed || s->machine.finished()) return;
    s->reading = true;
    const auto buf = s->machine.prepare_read(read_chunk);
    s->stream.async_read_some(
        asio::buffer(buf.data(), buf.size()),
        asio::bind_executor(strand_, [self = shared_from_this(), s](boost::system::error_code ec,
                                                                    std::size_t n) {
            s->reading = false;
            if (s->machine.finished()) {
                self->pump(s);
                return;
            }
            if (n > 0) {
                self->bytes_received_ += n;
                s->machine.commit_read(n, clock::now());
            }
            if (ec) {
                const std::string detail =
                    ec == asio::error::eof
                        ? "the broker closed the TCP connection without connection.close"
                        : "reading from " + where(s->address) + " failed: " + ec.message();
                s->machine.on_transport_error(errc::connection_lost, detail, clock::now());
            } else {
                self->start_read(s);
            }
            self->pump(s);
        }));
}

void connection_impl::pump_current() {
    if (session_) pump(session_);
}

void connection_impl::pump(const std::shared_ptr<session>& s) {
    for (;;) {
        if (!s->writing && !s->socket_closed && s->machine.has_output()) {
            s->machine.take_output(s->write_buf, clock::now());
            s->writing = true;
            bytes_sent_ += s->write_buf.size();
            s->stream.async_write(
                asio::buffer(s->write_buf),
                asio::bind_executor(strand_, [self = shared_from_this(), s](
                                                 boost::system::error_code ec, std::size_t) {
                    s->writing = false;
                    s->write_buf.clear();
                    if (ec && !s->machine.finished()) {
                        s->machine.on_transport_error(
                            errc::connection_lost,
                            "writing to " + where(s->address) + " failed: " + ec.message(),
                            clock::now());
                    }
                    self->pump(s);
                }));
        }
        if (!s->machine.has_events()) break;
        std::deque<event> events;
        s->machine.take_events(events);
        for (auto& e : events) handle(s, e);
    }
    if (s->machine.finished()) {
        if (s->finished_at == time_point{}) s->finished_at = clock::now();
        if (!s->writing && !s->socket_closed) close_socket(s);
    }
    arm_deadline(s);
}

void connection_impl::arm_deadline(const std::shared_ptr<session>& s) {
    if (s->socket_closed) return;
    std::optional<time_point> dl = s->machine.next_deadline();
    if (s->machine.finished()) dl = s->finished_at + final_write_grace;
    if (!dl) return;
    if (s->armed && *s->armed <= *dl) return;  // an earlier wake-up is armed (early is harmless)
    s->armed = *dl;
    s->deadline.expires_at(*dl);
    s->deadline.async_wait(
        asio::bind_executor(strand_, [self = shared_from_this(), s](boost::system::error_code ec) {
            if (ec == asio::error::operation_aborted) return;
            s->armed.reset();
            if (s->socket_closed) return;
            if (s->machine.finished()) {
                self->close_socket(s);
                return;
            }
            s->machine.on_timer(clock::now());
            self->pump(s);
        }));
}

void connection_impl::close_socket(const std::shared_ptr<session>& s) {
    s->socket_closed = true;
    s->stream.close();
    s->resolver.cancel();
    s->connect_timer.cancel();
    s->deadline.cancel();
}

// ---- events -----------------------------------------------------------------------------

void connection_impl::handle(const std::shared_ptr<session>& s, event& e) {
    std::visit(
        [&](auto& ev) {
            using E = std::decay_t<decltype(ev)>;
            if constexpr (std::is_same_v<E, ev_op_done>) {
                auto it = ops_.find(ev.id);
                if (it == ops_.end()) return;  // cancelled earlier
                auto f = std::move(it->second);
                ops_.erase(it);
                f(std::move(ev));
            } else if constexpr (std::is_same_v<E, ev_connection_open>) {
                on_open(s, ev);
            } else if constexpr (std::is_same_v<E, ev_connection_closed>) {
                on_closed(s, ev);
            } else if constexpr (std::is_same_v<E, ev_channel_closed>) {
                auto it = channels_.find(ev.channel.serial);
                if (it == channels_.end()) return;
                auto ch = std::move(it->second);
                channels_.erase(it);
                diagnostics d{ev.ec, ev.detail, ev.reply};
                ch->open = false;
                {
                    std::lock_guard lock(ch->mutex);
                    ch->last_error = d;
                }
                if (auto f = std::move(ch->on_close)) f(d);
                ch->on_return = nullptr;
            } else if constexpr (std::is_same_v<E, ev_delivery>) {
                auto it = consumers_.find(ev.consumer);
                if (it == consumers_.end() || !it->second.handlers.on_delivery) return;
                delivery d;
                d.consumer_tag = std::move(ev.method.consumer_tag);
                d.delivery_tag = ev.method.delivery_tag;
                d.redelivered = ev.method.redelivered;
                d.exchange = std::move(ev.method.exchange);
                d.routing_key = std::move(ev.method.routing_key);
                d.msg = message(std::move(ev.content.properties), std::move(ev.content.body));
                d.unreadable = std::move(ev.content.unreadable);
                it->second.handlers.on_delivery(std::move(d));
            } else if constexpr (std::is_same_v<E, ev_consumer_ended>) {
                auto it = consumers_.find(ev.consumer);
                if (it == consumers_.end()) return;
                auto on_cancelled = std::move(it->second.handlers.on_cancelled);
                consumers_.erase(it);
                if (ev.ec && on_cancelled) on_cancelled(ev.ec);
            } else if constexpr (std::is_same_v<E, ev_return>) {
                auto it = channels_.find(ev.channel.serial);
                if (it == channels_.end() || !it->second->on_return) return;
                returned_message r;
                r.reply = broker_reply{ev.method.reply_code, ev.method.reply_text, 60, 40};
                r.exchange = std::move(ev.method.exchange);
                r.routing_key = std::move(ev.method.routing_key);
                r.msg = message(std::move(ev.content.properties), std::move(ev.content.body));
                it->second->on_return(std::move(r));
            } else if constexpr (std::is_same_v<E, ev_blocked>) {
                blocked_ = ev.blocked;
                if (ev.blocked) {
                    if (hooks_.on_blocked) hooks_.on_blocked(ev.reason);
                } else {
                    if (hooks_.on_unblocked) hooks_.on_unblocked();
                    complete_all(unblock_waiters_, diagnostics{});
                }
            } else if constexpr (std::is_same_v<E, ev_flow>) {
                // Already answered by the machine; RabbitMQ uses connection.blocked instead.
            }
        },
        e);
}

void connection_impl::on_open(const std::shared_ptr<session>& s, ev_connection_open& e) {
    s->was_open = true;
    s->connect_timer.cancel();
    open_ = true;
    blocked_ = false;
    const auto n = ++connects_;
    connection_info info{e.limits.channel_max, e.limits.frame_max, e.limits.heartbeat,
                         std::move(e.server_properties), n};
    {
        std::lock_guard lock(mutex_);
        info_ = std::move(info);
        last_error_ = diagnostics{};
    }
    feed(life::input::opened{});
}

void connection_impl::on_closed(const std::shared_ptr<session>& s, ev_connection_closed& e) {
    if (s->ended) return;
    s->ended = true;
    const bool current = s == session_;
    open_ = false;
    blocked_ = false;
    {
        std::lock_guard lock(mutex_);
        info_.reset();
    }
    diagnostics d{e.ec, e.detail, e.reply};
    set_last_error(d);
    complete_all(unblock_waiters_, op_diagnostics("wait for unblocked", d));
    if (!current) return;
    feed(life::input::ended{std::move(d), s->refused, clock::now()});
}

// ---- the connection's life ----------------------------------------------------------

void connection_impl::feed(life::any_input in) {
    for (auto& a : lifecycle_.on(std::move(in))) perform(a);
}

void connection_impl::perform(life::any_action& a) {
    namespace act = life::action;
    std::visit(
        [&](auto& x) {
            using A = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<A, act::start_attempt>) {
                start_attempt(x.address);
            } else if constexpr (std::is_same_v<A, act::close_session>) {
                close_session();
            } else if constexpr (std::is_same_v<A, act::arm_timer>) {
                reconnect_timer_.expires_after(x.delay);
                reconnect_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
                    if (!ec) self->feed(life::input::timer_fired{});
                });
            } else if constexpr (std::is_same_v<A, act::cancel_timer>) {
                reconnect_timer_.cancel();
            } else if constexpr (std::is_same_v<A, act::complete_connects>) {
                complete_all(connect_waiters_, op_diagnostics("connect", std::move(x.why)));
            } else if constexpr (std::is_same_v<A, act::complete_closes>) {
                complete_all(close_waiters_, diagnostics{});
            } else if constexpr (std::is_same_v<A, act::count_failed_attempt>) {
                ++failed_attempts_;
            } else if constexpr (std::is_same_v<A, act::count_lost>) {
                ++connections_lost_;
            } else if constexpr (std::is_same_v<A, act::set_last_error>) {
                set_last_error(x.diag);
            } else if constexpr (std::is_same_v<A, act::call_on_open>) {
                if (hooks_.on_open) {
                    if (const auto i = info()) hooks_.on_open(*i);
                }
            } else if constexpr (std::is_same_v<A, act::call_on_lost>) {
                if (hooks_.on_lost) hooks_.on_lost(x.diag);
            } else if constexpr (std::is_same_v<A, act::call_on_reconnect_scheduled>) {
                if (hooks_.on_reconnect_scheduled)
                    hooks_.on_reconnect_scheduled(x.attempt, x.delay, x.diag);
            } else if constexpr (std::is_same_v<A, act::call_on_closed>) {
                if (hooks_.on_closed) hooks_.on_closed(x.diag);
            } else if constexpr (std::is_same_v<A, act::release_hooks>) {
                // Nothing will run again: drop the user's callbacks, which may hold
                // channel handles (and through them this connection).
                hooks_ = connection_hooks{};
            }
        },
        a);
}

void connection_impl::close_session() {
    if (!session_ || session_->machine.finished()) return;
    auto& m = session_->machine;
    if (m.current_state() == connection_machine::state::idle) {
        // Still resolving, connecting or in TLS: abandon the attempt.
        m.abort(errc::connection_closed, "closed by the client while connecting");
    } else {
        m.close(0, clock::now());
    }
    pump(session_);
}

void connection_impl::complete_all(std::vector<void_handler>& waiters, const diagnostics& why) {
    auto done = std::move(waiters);
    waiters.clear();
    for (auto& w : done) std::move(w).complete(strand_, why);
}

}  // namespace tarry::amqp::detail
