// The public channel: builds each method, hands it to the driver, and turns
// the broker's reply into the operation's result.
#include "tarry/amqp/channel.hpp"

#include "detail/connection_impl.hpp"
#include "detail/op_diagnostics.hpp"

namespace tarry::amqp {

using detail::channel_shared;
using detail::connection_impl;
using detail::connection_machine;
using detail::ev_op_done;
using detail::op_id;

namespace {

namespace asio = boost::asio;

template <class... Args>
using completion = detail::op_handler<Args...>;

/// Records an operation's failure as the channel's latest (last_error()),
/// unless the channel is closed: then it holds why, with the broker's reply.
void note_error(channel_shared& ch, const diagnostics& why) {
    if (!why.code || why.code == errc::operation_cancelled || !ch.open) return;
    std::lock_guard lock(ch.mutex);
    ch.last_error = why;
}

/// Completes an operation of a default-constructed (null) channel.
template <class... Args>
void complete_unbound(completion<Args...> h, diagnostics why, Args... values) {
    // Never from inside the starting call: hop through the system executor.
    asio::post(asio::system_executor(),
               [h = std::move(h), why = std::move(why), ... v = std::move(values)]() mutable {
                   std::move(h).complete(asio::system_executor(), std::move(why), std::move(v)...);
               });
}

/// Fails `operation` of a default-constructed (null) channel.
template <class... Args>
void fail_unbound(std::string_view operation, completion<Args...> h, Args... values) {
    complete_unbound(std::move(h),
                     detail::op_diagnostics(operation, diagnostics::from(errc::channel_closed,
                                                                         "no channel")),
                     std::move(values)...);
}

/// Completes `operation` with a result of type T drawn from the reply by
/// `extract`; T{} on error.
template <class T, class Extract>
auto value_result(std::shared_ptr<channel_shared> ch, std::string_view operation, Extract extract) {
    return [ch = std::move(ch), operation, extract](auto h, ev_op_done&& ev) {
        if (ev.ec) {
            auto why = detail::op_diagnostics(operation, ev);
            note_error(*ch, why);
            std::move(h).complete(ch->conn->strand(), std::move(why), T{});
            return;
        }
        std::move(h).complete(ch->conn->strand(), diagnostics{}, extract(ev));
    };
}

auto void_result(std::shared_ptr<channel_shared> ch, std::string_view operation) {
    return [ch = std::move(ch), operation](auto h, ev_op_done&& ev) {
        auto why = detail::op_diagnostics(operation, ev);
        note_error(*ch, why);
        ch->unconfirmed = ch->conn->unconfirmed_of(*ch);
        std::move(h).complete(ch->conn->strand(), std::move(why));
    };
}

/// Sends a request (synchronous or not) on the channel.
template <class Handler, class Convert>
void send_request(const std::shared_ptr<channel_shared>& ch, wire::method m, Handler h,
                  Convert convert) {
    ch->conn->run_op(std::move(h), std::move(convert),
                     [ch, m = std::move(m)](connection_impl& c, op_id id) mutable {
                         if (auto* machine = c.machine_for(*ch, id)) {
                             machine->request(ch->ref, std::move(m), id);
                         }
                     });
}

/// Sends method `m` (of type M, which names the operation) that completes
/// with nothing but its outcome.
template <class M, class Handler>
void send_void(const std::shared_ptr<channel_shared>& ch, M m, Handler h) {
    send_request(ch, std::move(m), std::move(h), void_result(ch, M::name));
}

template <class Reply>
const Reply& reply_of(const ev_op_done& ev) {
    return std::get<Reply>(*ev.reply);
}

/// Sends `Bind` when `bind`, else `Unbind`: the two methods have the same
/// fields, named by `fill`.
template <class Bind, class Unbind, class Fill, class Handler>
void send_bind_or_unbind(const std::shared_ptr<channel_shared>& ch, bool bind, Fill fill,
                         Handler h) {
    if (bind) {
        Bind m;
        fill(m);
        send_void(ch, std::move(m), std::move(h));
    } else {
        Unbind m;
        fill(m);
        send_void(ch, std::move(m), std::move(h));
    }
}

}  // namespace

std::uint16_t channel::number() const noexcept { return s_ ? s_->ref.number : 0; }
bool channel::is_open() const noexcept { return s_ && s_->open.load(); }
std::size_t channel::unconfirmed() const noexcept { return s_ ? s_->unconfirmed.load() : 0; }

diagnostics channel::last_error() const {
    if (!s_) return {errc::channel_closed, "no channel", std::nullopt};
    std::lock_guard lock(s_->mutex);
    return s_->last_error;
}

void channel::set_return_handler(std::function<void(returned_message)> f) const {
    if (!s_) return;
    asio::post(s_->conn->strand(), [s = s_, f = std::move(f)]() mutable {
        if (s->open) s->on_return = std::move(f);
    });
}

void channel::set_close_handler(std::function<void(const diagnostics&)> f) const {
    if (!s_) return;
    asio::post(s_->conn->strand(), [s = s_, f = std::move(f)]() mutable {
        if (s->open) {
            s->on_close = std::move(f);
        } else if (f) {
            f(s->last_error);  // closed already: tell at once (on the I/O thread)
        }
    });
}

// ---- exchanges ---------------------------------------------------------------------

void channel::declare_exchange_(exchange_options o, completion<> h) const {
    if (!s_) return fail_unbound(wire::exchange_declare::name, std::move(h));
    wire::exchange_declare m;
    m.exchange = std::move(o.name);
    m.type = std::move(o.type);
    m.passive = o.passive;
    m.durable = o.durable;
    m.auto_delete = o.auto_delete;
    m.internal = o.internal;
    m.arguments = std::move(o.arguments);
    send_void(s_, std::move(m), std::move(h));
}

void channel::delete_exchange_(std::string name, bool if_unused, completion<> h) const {
    if (!s_) return fail_unbound(wire::exchange_delete::name, std::move(h));
    wire::exchange_delete m;
    m.exchange = std::move(name);
    m.if_unused = if_unused;
    send_void(s_, std::move(m), std::move(h));
}

void channel::bind_exchange_(bool bind, std::string d, std::string s, std::string k,
                             field_table a, completion<> h) const {
    if (!s_) {
        return fail_unbound(bind ? wire::exchange_bind::name : wire::exchange_unbind::name,
                            std::move(h));
    }
    send_bind_or_unbind<wire::exchange_bind, wire::exchange_unbind>(
        s_, bind,
        [&](auto& m) {
            m.destination = std::move(d);
            m.source = std::move(s);
            m.routing_key = std::move(k);
            m.arguments = std::move(a);
        },
        std::move(h));
}

// ---- queues -------------------------------------------------------------------------

void channel::declare_queue_(queue_options o, completion<queue_info> h) const {
    if (!s_) return fail_unbound(wire::queue_declare::name, std::move(h), queue_info{});
    wire::queue_declare m;
    m.queue = std::move(o.name);
    m.passive = o.passive;
    m.durable = o.durable;
    m.exclusive = o.exclusive;
    m.auto_delete = o.auto_delete;
    m.arguments = std::move(o.arguments);
    send_request(s_, std::move(m), std::move(h),
                 value_result<queue_info>(s_, wire::queue_declare::name, [](const ev_op_done& ev) {
                     const auto& ok = reply_of<wire::queue_declare_ok>(ev);
                     return queue_info{ok.queue, ok.message_count, ok.consumer_count};
                 }));
}

void channel::delete_queue_(std::string name, queue_delete_options o,
                            completion<std::uint32_t> h) const {
    if (!s_) return fail_unbound(wire::queue_delete::name, std::move(h), std::uint32_t{0});
    wire::queue_delete m;
    m.queue = std::move(name);
    m.if_unused = o.if_unused;
    m.if_empty = o.if_empty;
    send_request(s_, std::move(m), std::move(h),
                 value_result<std::uint32_t>(s_, wire::queue_delete::name, [](const ev_op_done& ev) {
                     return reply_of<wire::queue_delete_ok>(ev).message_count;
                 }));
}

void channel::bind_queue_(bool bind, std::string q, std::string x, std::string k, field_table a,
                          completion<> h) const {
    if (!s_) {
        return fail_unbound(bind ? wire::queue_bind::name : wire::queue_unbind::name, std::move(h));
    }
    send_bind_or_unbind<wire::queue_bind, wire::queue_unbind>(
        s_, bind,
        [&](auto& m) {
            m.queue = std::move(q);
            m.exchange = std::move(x);
            m.routing_key = std::move(k);
            m.arguments = std::move(a);
        },
        std::move(h));
}

void channel::purge_queue_(std::string name, completion<std::uint32_t> h) const {
    if (!s_) return fail_unbound(wire::queue_purge::name, std::move(h), std::uint32_t{0});
    wire::queue_purge m;
    m.queue = std::move(name);
    send_request(s_, std::move(m), std::move(h),
                 value_result<std::uint32_t>(s_, wire::queue_purge::name, [](const ev_op_done& ev) {
                     return reply_of<wire::queue_purge_ok>(ev).message_count;
                 }));
}

// ---- consuming --------------------------------------------------------------------------

void channel::qos_(qos_options o, completion<> h) const {
    if (!s_) return fail_unbound(wire::basic_qos::name, std::move(h));
    send_void(s_, wire::basic_qos{o.prefetch_size, o.prefetch_count, o.global}, std::move(h));
}

void channel::consume_(consume_options o, consumer_handlers c, completion<std::string> h) const {
    if (!s_) return fail_unbound(wire::basic_consume::name, std::move(h), std::string{});
    wire::basic_consume m;
    m.queue = std::move(o.queue);
    m.consumer_tag = std::move(o.consumer_tag);
    m.no_local = o.no_local;
    m.no_ack = o.no_ack;
    m.exclusive = o.exclusive;
    m.arguments = std::move(o.arguments);
    auto consumer = std::make_shared<op_id>(0);
    auto ch = s_;
    ch->conn->run_op(
        std::move(h),
        [ch, consumer](auto h, ev_op_done&& ev) {
            if (ev.ec) {
                // A cancelled wait leaves the consumer running (it may exist).
                if (ev.ec != errc::operation_cancelled && *consumer) {
                    ch->conn->remove_consumer(*consumer);
                }
                auto why = detail::op_diagnostics(wire::basic_consume::name, ev);
                note_error(*ch, why);
                std::move(h).complete(ch->conn->strand(), std::move(why), std::string{});
                return;
            }
            std::move(h).complete(ch->conn->strand(), diagnostics{},
                                  reply_of<wire::basic_consume_ok>(ev).consumer_tag);
        },
        [ch, consumer, m = std::move(m), c = std::move(c)](connection_impl& conn, op_id id) mutable {
            auto* machine = conn.machine_for(*ch, id);
            if (!machine) return;
            *consumer = conn.add_consumer(ch, std::move(c));
            machine->consume(ch->ref, std::move(m), id, *consumer);
        });
}

void channel::cancel_(std::string tag, completion<> h) const {
    if (!s_) return fail_unbound(wire::basic_cancel::name, std::move(h));
    wire::basic_cancel m;
    m.consumer_tag = std::move(tag);
    send_void(s_, std::move(m), std::move(h));
}

void channel::get_(std::string queue, bool no_ack, completion<std::optional<get_result>> h) const {
    if (!s_) return fail_unbound(wire::basic_get::name, std::move(h), std::optional<get_result>{});
    wire::basic_get m;
    m.queue = std::move(queue);
    m.no_ack = no_ack;
    send_request(s_, std::move(m), std::move(h),
                 value_result<std::optional<get_result>>(s_, wire::basic_get::name, [](ev_op_done& ev) {
                     std::optional<get_result> out;
                     auto* ok = std::get_if<wire::basic_get_ok>(&*ev.reply);
                     if (!ok || !ev.content) return out;
                     out.emplace();
                     out->item.delivery_tag = ok->delivery_tag;
                     out->item.redelivered = ok->redelivered;
                     out->item.exchange = std::move(ok->exchange);
                     out->item.routing_key = std::move(ok->routing_key);
                     out->item.msg = message(std::move(ev.content->properties),
                                             std::move(ev.content->body));
                     out->item.unreadable = std::move(ev.content->unreadable);
                     out->message_count = ok->message_count;
                     return out;
                 }));
}

void channel::ack_(std::uint64_t tag, bool multiple, completion<> h) const {
    if (!s_) return fail_unbound(wire::basic_ack::name, std::move(h));
    send_void(s_, wire::basic_ack{tag, multiple}, std::move(h));
}

void channel::nack_(std::uint64_t tag, bool multiple, bool requeue, completion<> h) const {
    if (!s_) return fail_unbound(wire::basic_nack::name, std::move(h));
    send_void(s_, wire::basic_nack{tag, multiple, requeue}, std::move(h));
}

void channel::reject_(std::uint64_t tag, bool requeue, completion<> h) const {
    if (!s_) return fail_unbound(wire::basic_reject::name, std::move(h));
    send_void(s_, wire::basic_reject{tag, requeue}, std::move(h));
}

void channel::recover_(bool requeue, completion<> h) const {
    if (!s_) return fail_unbound(wire::basic_recover::name, std::move(h));
    send_void(s_, wire::basic_recover{requeue}, std::move(h));
}

// ---- publishing -------------------------------------------------------------------------

void channel::confirm_select_(completion<> h) const {
    if (!s_) return fail_unbound(wire::confirm_select::name, std::move(h));
    send_void(s_, wire::confirm_select{}, std::move(h));
}

channel::encoded_publish channel::encode_publish_(std::string_view exchange,
                                                  std::string_view routing_key,
                                                  const message& msg, publish_options o) const {
    encoded_publish e;
    if (!s_) {
        e.error = errc::channel_closed;
        return e;
    }
    wire::basic_publish m;
    m.exchange = std::string(exchange);
    m.routing_key = std::string(routing_key);
    m.mandatory = o.mandatory;
    e.error = connection_machine::encode_publish(e.frames, s_->ref.number, m, msg.properties,
                                                 msg.body, s_->frame_max, &e.detail);
    return e;
}

void channel::publish_(encoded_publish f, completion<> h) const {
    if (!s_) return fail_unbound(wire::basic_publish::name, std::move(h));
    auto ch = s_;
    if (f.error) {
        ch->conn->run_op(std::move(h), void_result(ch, wire::basic_publish::name),
                         [err = f.error, detail = std::move(f.detail)](connection_impl& c, op_id id) {
                             c.fail_op(id, err, detail);
                         });
        return;
    }
    ch->conn->run_op(std::move(h), void_result(ch, wire::basic_publish::name),
                     [ch, frames = std::move(f.frames)](connection_impl& c, op_id id) mutable {
                         if (auto* machine = c.machine_for(*ch, id)) {
                             machine->publish_encoded(ch->ref, std::move(frames), id);
                             ch->unconfirmed = machine->unconfirmed(ch->ref);
                         }
                     });
}

void channel::flow_(bool active, completion<bool> h) const {
    if (!s_) return fail_unbound(wire::channel_flow::name, std::move(h), false);
    send_request(s_, wire::channel_flow{active}, std::move(h),
                 value_result<bool>(s_, wire::channel_flow::name, [](const ev_op_done& ev) {
                     return reply_of<wire::channel_flow_ok>(ev).active;
                 }));
}

void channel::close_(completion<> h) const {
    if (!s_) return complete_unbound(std::move(h), diagnostics{});  // nothing to close
    auto ch = s_;
    ch->conn->run_op(std::move(h),
                     [ch](auto h, ev_op_done&& ev) {
                         std::move(h).complete(ch->conn->strand(),
                                               detail::op_diagnostics(wire::channel_close::name, ev));
                     },
                     [ch](connection_impl& c, op_id id) {
                         if (!ch->open) {
                             c.fail_op(id, {}, {});
                             return;
                         }
                         if (auto* machine = c.machine_for(*ch, id)) {
                             machine->close_channel(ch->ref, id);
                         }
                     });
}

}  // namespace tarry::amqp
