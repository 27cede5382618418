// Declaring a delay cascade and reading its descriptor (see
// tarry/parking/cascade_declaration.hpp): each a chain of channel
// operations kept alive by its own state.
#include "tarry/parking/cascade_declaration.hpp"

#include <boost/asio/steady_timer.hpp>

#include <memory>

namespace tarry::parking::detail {

namespace {

using namespace std::chrono_literals;

// Declares the topology's parts one after the other, then runs `then`
// (with the first failure, or an empty code).
struct declaring : std::enable_shared_from_this<declaring> {
    declaring(boost::asio::any_io_executor e, amqp::channel c, cascade_topology top,
              std::function<void(amqp::diagnostics)> th)
        : ex(std::move(e)), ch(std::move(c)), t(std::move(top)), then(std::move(th)) {}

    boost::asio::any_io_executor ex;
    amqp::channel ch;
    cascade_topology t;
    std::function<void(amqp::diagnostics)> then;
    std::size_t next = 0;
    amqp::diagnostics diag;
    std::string doing;

    void step() {
        const std::size_t xs = t.exchanges.size(), qs = t.queues.size(), bs = t.bindings.size();
        if (next == xs + qs + bs) return then({});
        auto after = [self = shared_from_this()](std::error_code) {
            if (self->diag.code) {
                self->diag.message = self->doing + ": " + self->diag.message;
                return self->then(std::move(self->diag));
            }
            ++self->next;
            self->step();
        };
        const std::size_t i = next;
        if (i < xs) {
            doing = "declaring exchange '" + t.exchanges[i].name + "'";
            ch.async_declare_exchange(t.exchanges[i], diag, std::move(after));
        } else if (i < xs + qs) {
            doing = "declaring queue '" + t.queues[i - xs].name + "'";
            ch.async_declare_queue(t.queues[i - xs], diag,
                                   [after = std::move(after)](std::error_code ec, const amqp::queue_info&) mutable {
                                       after(ec);
                                   });
        } else {
            const cascade_binding& b = t.bindings[i - xs - qs];
            doing = "binding '" + b.destination + "' to '" + b.source + "' with '" + b.routing_key + "'";
            if (b.to_exchange)
                ch.async_bind_exchange(b.destination, b.source, b.routing_key, {}, diag, std::move(after));
            else
                ch.async_bind_queue(b.destination, b.source, b.routing_key, {}, diag, std::move(after));
        }
    }
};

// basic.get on the descriptor queue, a few times while another reader
// holds the message; then nack (requeue) and read it.
struct reading : std::enable_shared_from_this<reading> {
    reading(boost::asio::any_io_executor e, amqp::channel c, std::string p, description_handler hd)
        : timer(e), ex(std::move(e)), ch(std::move(c)), prefix(std::move(p)), h(std::move(hd)) {}

    boost::asio::steady_timer timer;
    boost::asio::any_io_executor ex;
    amqp::channel ch;
    std::string prefix;
    description_handler h;
    amqp::diagnostics diag;
    int tries_left = 50;  // 50 × 20 ms

    std::string queue() const { return prefix + ".topology"; }

    void fail(amqp::diagnostics why) { std::move(h).complete(ex, std::move(why), cascade_spec{}); }

    void get() {
        ch.async_get(queue(), {}, diag,
                     [self = shared_from_this()](std::error_code, std::optional<amqp::get_result> got) {
                         self->got(std::move(got));
                     });
    }

    void got(std::optional<amqp::get_result> got) {
        if (diag.code) {
            diag.message = "reading the descriptor queue '" + queue() + "': " + diag.message +
                           " (is the cascade declared? tarry topology declare)";
            return fail(std::move(diag));
        }
        if (!got) {
            if (--tries_left > 0) {
                timer.expires_after(20ms);
                return timer.async_wait([self = shared_from_this()](std::error_code) { self->get(); });
            }
            return fail(amqp::diagnostics::from(
                std::make_error_code(std::errc::no_message_available),
                "the descriptor queue '" + queue() +
                    "' holds no message: declare the cascade (tarry topology declare) to write one"));
        }
        amqp::diagnostics why;
        auto spec = delay_cascade::read_description(got->item.msg, prefix, why);
        // Given back whatever it says, so that the next reader sees it too.
        ch.async_nack(got->item.delivery_tag, {}, [](std::error_code) {});
        if (!spec) return fail(std::move(why));
        std::move(h).complete(ex, {}, std::move(*spec));
    }
};

}  // namespace

void declare_topology(boost::asio::any_io_executor ex, amqp::channel ch, cascade_topology t, declared_handler h) {
    auto shared = std::make_shared<declared_handler>(std::move(h));
    auto s = std::make_shared<declaring>(ex, std::move(ch), std::move(t), [ex, shared](amqp::diagnostics why) {
        std::move(*shared).complete(ex, std::move(why));
    });
    s->step();
}

void declare_cascade(boost::asio::any_io_executor ex, amqp::channel ch, delay_cascade c, declared_handler h) {
    auto shared = std::make_shared<declared_handler>(std::move(h));
    auto diag = std::make_shared<amqp::diagnostics>();
    const auto finish = [ex, shared, diag](std::string doing) {
        if (diag->code) diag->message = doing + ": " + diag->message;
        std::move(*shared).complete(ex, std::move(*diag));
    };
    auto topology = c.topology();
    auto s = std::make_shared<declaring>(
        ex, ch, std::move(topology), [ex, ch, c = std::move(c), shared, diag, finish](amqp::diagnostics why) {
            if (why.code) return std::move(*shared).complete(ex, std::move(why));
            ch.async_confirm_select(*diag, [ch, c, diag, finish](std::error_code ec) {
                if (ec) return finish("confirm.select");
                ch.async_publish("", c.descriptor_queue(), c.describe(), {}, *diag, [finish, c](std::error_code) {
                    finish("publishing the descriptor to '" + c.descriptor_queue() + "'");
                });
            });
        });
    s->step();
}

void read_description(boost::asio::any_io_executor ex, amqp::channel ch, std::string prefix, description_handler h) {
    std::make_shared<reading>(std::move(ex), std::move(ch), std::move(prefix), std::move(h))->get();
}

}  // namespace tarry::parking::detail
