// The checkpoint stream's name and arguments, its declare, and the driver
// of checkpoint_search over it (see tarry/control/checkpoint_stream.hpp).
#include "tarry/control/checkpoint_stream.hpp"

#include "stream_declare.hpp"

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/wire/properties.hpp"
#include "tarry/control/control_stream.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>

namespace tarry::control {

std::string checkpoint_stream_name(std::string_view queue) {
    std::string name(queue);
    name += ".tarry.checkpoints";
    return name;
}

amqp::wire::field_table checkpoint_stream_arguments() {
    const auto days = std::chrono::duration_cast<std::chrono::days>(checkpoint_stream_max_age).count();
    return {
        {"x-queue-type", std::string("stream")},
        {"x-max-age", std::to_string(days) + "D"},
        {"x-stream-max-segment-size-bytes", std::int64_t{8'000'000}},
    };
}

namespace detail {

void declare_checkpoint_stream(amqp::connection& conn, std::string queue, amqp::detail::op_handler<> h) {
    amqp::queue_options q;
    q.name = checkpoint_stream_name(queue);
    q.durable = true;
    q.arguments = checkpoint_stream_arguments();
    declare_on_own_channel(conn, std::move(q), std::move(h));
}

namespace {

// Parts are up to 1 MiB: a small window.
constexpr std::uint16_t find_prefetch = 16;

// Reads the stream's end (a marker of its own, consumed from "last"), then
// each range the search asks for, one consumer per range.
struct find_op : std::enable_shared_from_this<find_op> {
    find_op(amqp::connection& c, std::string q, amqp::detail::op_handler<checkpoint_found> h)
        : conn(c), stream(checkpoint_stream_name(q)), done(std::move(h)), ex(c.get_executor()),
          timer(c.get_executor()) {}

    void finish(amqp::diagnostics why) {
        if (!done) return;
        timer.cancel();
        if (ch.is_open()) ch.async_close([](std::error_code) {});
        checkpoint_found out;
        if (search && !why.code) {
            out.checkpoint = search->take_found();
            out.why_none = search->why_none();
            out.skipped = search->skipped();
            out.entries_read = search->entries_read();
        }
        if (!search && !why.code) out.why_none = none_yet;
        std::move(done).complete(ex, std::move(why), std::move(out));
    }

    void start(std::chrono::milliseconds timeout) {
        timer.expires_after(timeout);
        timer.async_wait([self = shared_from_this(), timeout](boost::system::error_code ec) {
            if (ec) return;
            self->finish(amqp::diagnostics::from(std::make_error_code(std::errc::timed_out),
                                                 "no checkpoint found in '" + self->stream + "' within " +
                                                     std::to_string(timeout.count()) + " ms"));
        });
        open_for_reading(conn, stream, find_prefetch, diag, [self = shared_from_this()](std::error_code ec, amqp::channel c) {
            self->ch = c;
            if (ec == amqp::reply_code::not_found) {
                self->none_yet = "no checkpoint stream '" + self->stream + "' yet";
                return self->finish({});
            }
            if (ec) return self->finish(std::move(self->diag));
            self->find_end();
        });
    }

    // Consumes from the last chunk and appends a marker: its offset is the
    // end. Then the first entry's offset: where the stream begins (offsets
    // have gaps, so no range read tells it).
    void find_end() {
        consume("last", [](find_op& self, std::int64_t offset, amqp::message& m) {
            if (!self.end.is_end(m.properties)) return false;
            self.end_at = offset;
            return true;
        }, &find_op::find_first);
        ch.async_publish("", stream, end.marker(), {}, diag, [self = shared_from_this()](std::error_code ec) {
            if (ec) self->finish(std::move(self->diag));
        });
    }

    void find_first() {
        consume("first", [](find_op& self, std::int64_t offset, amqp::message&) {
            self.search.emplace(offset, self.end_at);
            return true;
        }, &find_op::next_range);
    }

    void next_range() {
        const auto r = search->next();
        if (!r) return finish({});
        consume(r->from, [r = *r](find_op& self, std::int64_t offset, amqp::message& m) {
            if (offset < r.to) self.search->entry(offset, std::move(m));
            if (offset < r.to - 1) return false;
            self.search->range_read();
            return true;
        }, &find_op::next_range);
    }

    // One consumer from `from`, handing each delivery to `on_entry` until it
    // says the step is over; then the consumer is cancelled and `then` runs.
    template <class From, class OnEntry>
    void consume(From from, OnEntry on_entry, void (find_op::*then)()) {
        const std::uint64_t my_step = ++step;
        amqp::consume_options co;
        co.queue = stream;
        co.arguments.set("x-stream-offset", from);
        std::weak_ptr<find_op> w = shared_from_this();
        amqp::consumer_handlers handlers{
            [w, my_step, on_entry, then](amqp::delivery d) {
                auto self = w.lock();
                if (!self || !self->done) return;
                self->ch.async_ack(d.delivery_tag, {}, [](std::error_code) {});
                if (self->step != my_step) return;  // a range already read
                const auto offset = amqp::wire::integer_header(d.msg.properties, "x-stream-offset");
                if (!offset) {
                    return self->finish(amqp::diagnostics::from(
                        amqp::errc::protocol_error,
                        "a delivery of '" + self->stream + "' without x-stream-offset (is it a stream?)"));
                }
                if (!on_entry(*self, *offset, d.msg)) return;
                ++self->step;
                self->ch.async_cancel(self->tag, [](std::error_code) {});
                ((*self).*then)();
            },
            [w](std::error_code) {
                if (auto self = w.lock())
                    self->finish(amqp::diagnostics::from(amqp::errc::consumer_cancelled,
                                                         "the broker cancelled the reader of '" + self->stream + "'"));
            }};
        ch.async_consume(std::move(co), std::move(handlers), diag,
                         [self = shared_from_this(), my_step](std::error_code ec, const std::string& t) {
                             if (ec) return self->finish(std::move(self->diag));
                             if (self->step == my_step) self->tag = t;
                             else self->ch.async_cancel(t, [](std::error_code) {});
                         });
    }

    amqp::connection& conn;
    const std::string stream;
    amqp::detail::op_handler<checkpoint_found> done;
    amqp::connection::executor_type ex;
    boost::asio::steady_timer timer;
    amqp::channel ch;
    amqp::diagnostics diag;
    const stream_end end{"checkpoint"};
    std::int64_t end_at = 0;
    std::optional<checkpoint_search> search;
    std::uint64_t step = 0;
    std::string tag;
    std::string none_yet;
};

}  // namespace

void find_checkpoint(amqp::connection& conn, std::string queue, std::chrono::milliseconds timeout,
                     amqp::detail::op_handler<checkpoint_found> h) {
    auto op = std::make_shared<find_op>(conn, std::move(queue), std::move(h));
    boost::asio::dispatch(conn.get_executor(), [op, timeout] { op->start(timeout); });
}

}  // namespace detail

}  // namespace tarry::control
