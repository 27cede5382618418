// Reading a control stream once, up to a marker of our own.
#include "tarry/control/stream_reading.hpp"

#include "stream_declare.hpp"

#include "tarry/amqp/channel.hpp"
#include "tarry/control/control_stream.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>

namespace tarry::control::detail {

namespace {

struct read_op : std::enable_shared_from_this<read_op> {
    read_op(amqp::connection& c, std::string q, entry_callback e, amqp::detail::op_handler<> h)
        : conn(c), stream(stream_name(q)), on_entry(std::move(e)), done(std::move(h)),
          ex(c.get_executor()), timer(c.get_executor()) {}

    void finish(amqp::diagnostics why) {
        if (!done) return;
        timer.cancel();
        on_entry = nullptr;
        if (ch.is_open()) ch.async_close([](std::error_code) {});
        std::move(done).complete(ex, std::move(why));
    }

    void start(std::chrono::milliseconds timeout) {
        timer.expires_after(timeout);
        timer.async_wait([self = shared_from_this(), timeout](boost::system::error_code ec) {
            if (ec) return;
            self->finish(amqp::diagnostics::from(std::make_error_code(std::errc::timed_out),
                                                 "the control stream '" + self->stream + "' was not read to its end within " +
                                                     std::to_string(timeout.count()) + " ms"));
        });
        open_for_reading(conn, stream, 1000, diag, [self = shared_from_this()](std::error_code ec, amqp::channel c) {
            self->ch = c;
            if (ec) return self->finish(std::move(self->diag));
            self->consume();
        });
    }

    void consume() {
        amqp::consume_options co;
        co.queue = stream;
        co.arguments.set("x-stream-offset", std::string("first"));
        std::weak_ptr<read_op> w = shared_from_this();
        amqp::consumer_handlers handlers{
            [w](amqp::delivery d) {
                if (auto self = w.lock()) self->entry(std::move(d));
            },
            [w](std::error_code) {
                if (auto self = w.lock())
                    self->finish(amqp::diagnostics::from(amqp::errc::consumer_cancelled,
                                                         "the broker cancelled the reader of '" + self->stream + "'"));
            }};
        ch.async_consume(std::move(co), std::move(handlers), diag,
                         [self = shared_from_this()](std::error_code ec, const std::string&) {
                             if (ec) return self->finish(std::move(self->diag));
                             // Appended after everything there now: read up to it.
                             self->ch.async_publish("", self->stream, self->end.marker(), {},
                                                    self->diag, [self](std::error_code ec) {
                                                        if (ec) self->finish(std::move(self->diag));
                                                    });
                         });
    }

    void entry(amqp::delivery d) {
        if (!done) return;
        ch.async_ack(d.delivery_tag, {}, [](std::error_code) {});
        const auto& p = d.msg.properties;
        if (is_marker(p)) {
            if (end.is_end(p)) finish({});
            return;
        }
        if (on_entry) on_entry(d.msg);
    }

    amqp::connection& conn;
    const std::string stream;
    entry_callback on_entry;
    amqp::detail::op_handler<> done;
    amqp::connection::executor_type ex;
    boost::asio::steady_timer timer;
    amqp::channel ch;
    amqp::diagnostics diag;
    const stream_end end{"list"};
};

}  // namespace

void read_stream(amqp::connection& conn, std::string queue, entry_callback on_entry, std::chrono::milliseconds timeout,
                 amqp::detail::op_handler<> h) {
    auto op = std::make_shared<read_op>(conn, std::move(queue), std::move(on_entry), std::move(h));
    boost::asio::dispatch(conn.get_executor(), [op, timeout] { op->start(timeout); });
}

}  // namespace tarry::control::detail
