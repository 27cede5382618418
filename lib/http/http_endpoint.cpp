// tarry::http_endpoint: the listening socket, its sessions, and the samples
// behind the status page's chart. Everything runs on one strand; completions
// of other executors come back through the mailbox, which stop() closes.
#include "endpoint_impl.hpp"
#include "http_session.hpp"

#include "tarry/amqp/error.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>

#include <future>
#include <sstream>

namespace tarry {

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

constexpr std::size_t history_samples = 180;           // 15 minutes ...
constexpr std::chrono::seconds history_every{5};       // ... every 5 s

[[noreturn]] void refuse(const std::string& why) {
    throw error("tarry http_endpoint", amqp::diagnostics::from(std::make_error_code(std::errc::invalid_argument), why));
}

tcp::endpoint endpoint_of(const http_endpoint_options& o) {
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(o.host, ec);
    if (ec) refuse("host '" + o.host + "' is not an IP address");
    if (o.max_messages == 0) refuse("max_messages must be at least 1");
    if (o.max_connections == 0) refuse("max_connections must be at least 1");
    if (o.max_header_bytes == 0 || o.max_body_bytes == 0) refuse("the header and body limits must be above 0");
    if (o.request_timeout <= std::chrono::milliseconds::zero()) refuse("request_timeout must be above 0");
    if (o.token && o.token->empty()) refuse("an empty token would let anyone publish; leave it unset instead");
    return {address, o.port};
}

}  // namespace

http_endpoint::impl::impl(asio::any_io_executor executor, consumer& c, amqp::connection* gateway,
                          http_endpoint_options options)
    : own_context_(executor ? nullptr : std::make_unique<asio::io_context>(1)),
      strand_(asio::make_strand(executor ? executor : own_context_->get_executor())),
      consumer_(c),
      options_(std::move(options)),
      wanted_(endpoint_of(options_)),
      box_(std::make_shared<http_detail::mailbox>(strand_)),
      parked_(std::make_shared<http_detail::parked_counts>(gateway, c.wait_queues(), options_.parked_cache,
                                                            std::chrono::seconds(2), box_, strand_)),
      history_(history_samples),
      acceptor_(strand_),
      history_timer_(strand_) {
    if (gateway)
        gateway_.emplace(*gateway, c.options().queue, c.options().default_delay, c.options().max_delay, box_,
                         strand_);
}

void http_endpoint::impl::start() {
    if (started_) refuse("start() was called before");
    started_ = true;
    boost::system::error_code ec;
    acceptor_.open(wanted_.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(wanted_, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) bound_ = acceptor_.local_endpoint(ec);
    if (ec) {
        stopped_ = true;  // nothing runs: stop() has nothing to wait for
        box_->close();
        acceptor_.close();
        std::ostringstream where;
        where << wanted_;
        throw error("tarry http_endpoint: cannot listen on " + where.str(),
                    amqp::diagnostics::from(ec, ec.message()));
    }
    if (own_context_) {
        own_thread_ = std::thread([ctx = own_context_.get()] {
            auto guard = asio::make_work_guard(*ctx);
            ctx->run();
        });
    }
    asio::dispatch(strand_, [self = shared_from_this()] {
        self->accept();
        self->sample_history();
    });
}

void http_endpoint::impl::accept() {
    if (stopped_ || accepting_ || open_sessions_ >= options_.max_connections) return;
    accepting_ = true;
    acceptor_.async_accept(strand_,
                           asio::bind_executor(strand_, [self = shared_from_this()](boost::system::error_code ec,
                                                                                    tcp::socket socket) {
        self->accepting_ = false;
        if (self->stopped_) return;
        if (!ec) {
            // The socket's executor is the strand: the stream's own timer
            // runs there too.
            auto session = std::make_shared<http_detail::http_session>(std::move(socket), self);
            ++self->open_sessions_;
            std::erase_if(self->sessions_, [](const auto& w) { return w.expired(); });
            self->sessions_.push_back(session);
            session->start();
        }
        self->accept();
    }));
}

void http_endpoint::impl::session_ended() {
    // Called from a session's destructor, which runs on the strand (its
    // last handler) or at stop().
    if (open_sessions_ > 0) --open_sessions_;
    if (!stopped_) asio::post(strand_, [self = shared_from_this()] { self->accept(); });
}

void http_endpoint::impl::sample_history() {
    if (stopped_) return;
    parked_->get([self = shared_from_this()](const std::vector<http_detail::parked_count>&) {
        if (!self->stopped_)
            self->history_.add({std::chrono::system_clock::now(), self->consumer_.stats().held, self->parked_->total()});
    });
    history_timer_.expires_after(history_every);
    history_timer_.async_wait(asio::bind_executor(strand_, [self = shared_from_this()](boost::system::error_code ec) {
        if (!ec) self->sample_history();
    }));
}

void http_endpoint::impl::ping_consumer(std::chrono::milliseconds patience, std::function<void(bool)> done) {
    struct probe {
        std::function<void(bool)> done;
        asio::steady_timer timer;
        void answer(bool ok) {
            if (!done) return;
            timer.cancel();
            auto d = std::move(done);
            done = nullptr;
            d(ok);
        }
    };
    auto p = std::make_shared<probe>(probe{std::move(done), asio::steady_timer(strand_)});
    p->timer.expires_after(patience);
    p->timer.async_wait(asio::bind_executor(strand_, [p](boost::system::error_code ec) {
        if (!ec) p->answer(false);
    }));
    consumer_.async_ping(http_detail::via(box_, [p] { p->answer(true); }));
}

void http_endpoint::impl::close_all() {
    stopped_ = true;
    box_->close();
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    history_timer_.cancel();
    parked_->close();
    for (auto& w : sessions_)
        if (auto s = w.lock()) s->close();
    sessions_.clear();
}

void http_endpoint::impl::stop() {
    if (!started_ || stopped_) {
        stopped_ = true;
        box_->close();
        return;
    }
    std::promise<void> closed;
    asio::post(strand_, [self = shared_from_this(), &closed] {
        self->close_all();
        closed.set_value();
    });
    closed.get_future().wait();
    if (own_context_) {
        own_context_->stop();
        if (own_thread_.joinable()) own_thread_.join();
        // What is left (handlers of closed sockets and timers) is destroyed
        // with the context, while this object is still alive.
        own_context_->restart();
        own_context_->poll();
    }
}

http_endpoint::http_endpoint(consumer& c, amqp::connection* gateway, http_endpoint_options options)
    : impl_(std::make_shared<impl>(asio::any_io_executor(), c, gateway, std::move(options))) {}

http_endpoint::http_endpoint(asio::any_io_executor executor, consumer& c, amqp::connection* gateway,
                             http_endpoint_options options)
    : impl_(std::make_shared<impl>(std::move(executor), c, gateway, std::move(options))) {}

http_endpoint::~http_endpoint() {
    if (impl_) impl_->stop();
}

void http_endpoint::start() { impl_->start(); }
void http_endpoint::stop() { impl_->stop(); }
tcp::endpoint http_endpoint::local_endpoint() const { return impl_->local_endpoint(); }

}  // namespace tarry
