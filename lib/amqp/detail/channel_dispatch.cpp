// The connection machine: frames arriving on channels 1..channel_max.
#include "connection_machine.hpp"

namespace tarry::amqp::detail {
namespace {

constexpr auto unexpected_frame = static_cast<std::uint16_t>(reply_code::unexpected_frame);
constexpr auto channel_error = static_cast<std::uint16_t>(reply_code::channel_error);
constexpr auto syntax_error = static_cast<std::uint16_t>(reply_code::syntax_error);
constexpr auto command_invalid = static_cast<std::uint16_t>(reply_code::command_invalid);

std::string on_channel(std::uint16_t n) { return " on channel " + std::to_string(n); }

}  // namespace

void connection_machine::on_channel_frame(const wire::frame_view& f) {
    const auto it = channels_.find(f.channel);
    if (it == channels_.end()) {
        protocol_failure(channel_error, std::string("a ") + wire::to_string(f.type) +
                                            " frame" + on_channel(f.channel) +
                                            ", which is not open");
        return;
    }
    channel_state& ch = *it->second;

    if (f.type != wire::frame_type::method) {
        if (ch.state == channel_state::phase::closing) return;
        if (auto ec = ch.assembler.on_frame(f)) {
            protocol_failure(unexpected_frame,
                             "bad content" + on_channel(f.channel) + ": " + ch.assembler.detail());
            return;
        }
        if (ch.assembler.ready()) on_content_complete(ch);
        return;
    }

    if (ch.assembler.in_progress() && ch.state != channel_state::phase::closing) {
        protocol_failure(unexpected_frame, "a method frame" + on_channel(f.channel) +
                                               " in the middle of a content");
        return;
    }
    wire::method m;
    std::string detail;
    if (auto ec = wire::decode_method(f.payload, m, &detail)) {
        protocol_failure(syntax_error, "undecodable method" + on_channel(f.channel) + ": " + detail);
        return;
    }

    if (ch.state == channel_state::phase::closing) {
        // After our channel.close only close / close-ok matter.
        if (std::holds_alternative<wire::channel_close_ok>(m)) {
            op_id op = 0;
            if (ch.in_flight) op = ch.in_flight->op;
            ch.in_flight.reset();
            drop_channel(ch.ref.number, errc::channel_closed, "the channel was closed by the client",
                         std::nullopt);
            complete(op, {});
        } else if (std::holds_alternative<wire::channel_close>(m)) {
            write_method(ch.ref.number, wire::channel_close_ok{});
        }
        return;
    }
    on_channel_method(ch, m);
}

void connection_machine::on_channel_method(channel_state& ch, wire::method& m) {
    const std::uint16_t n = ch.ref.number;

    if (auto* d = std::get_if<wire::basic_deliver>(&m)) {
        ch.pending_content = std::move(*d);
        (void)ch.assembler.expect_content();
        return;
    }
    if (auto* r = std::get_if<wire::basic_return>(&m)) {
        ch.pending_content = std::move(*r);
        (void)ch.assembler.expect_content();
        return;
    }
    if (auto* a = std::get_if<wire::basic_ack>(&m)) {
        std::vector<op_id> done;
        if (!ch.confirm_mode || !ch.confirms.settle(a->delivery_tag, a->multiple, done)) {
            protocol_failure(command_invalid, "basic.ack for publish " +
                                                  std::to_string(a->delivery_tag) + on_channel(n) +
                                                  ", which was never sent in confirm mode");
            return;
        }
        for (const auto op : done) complete(op, {});
        return;
    }
    if (auto* k = std::get_if<wire::basic_nack>(&m)) {
        std::vector<op_id> done;
        if (!ch.confirm_mode || !ch.confirms.settle(k->delivery_tag, k->multiple, done)) {
            protocol_failure(command_invalid, "basic.nack for publish " +
                                                  std::to_string(k->delivery_tag) + on_channel(n) +
                                                  ", which was never sent in confirm mode");
            return;
        }
        for (const auto op : done) {
            complete(op, errc::publish_nacked, "the broker refused the publish (basic.nack)");
        }
        return;
    }
    if (auto* c = std::get_if<wire::basic_cancel>(&m)) {
        // The broker cancels a consumer whose queue went away.
        if (!c->no_wait) write_method(n, wire::basic_cancel_ok{c->consumer_tag});
        if (auto it = ch.consumers.find(c->consumer_tag); it != ch.consumers.end()) {
            events_.push_back(
                ev_consumer_ended{ch.ref, it->second, it->first, make_error_code(errc::consumer_cancelled)});
            ch.consumers.erase(it);
        }
        return;
    }
    if (auto* c = std::get_if<wire::channel_close>(&m)) {
        on_server_channel_close(ch, *c);
        return;
    }
    if (auto* fl = std::get_if<wire::channel_flow>(&m)) {
        write_method(n, wire::channel_flow_ok{fl->active});
        events_.push_back(ev_flow{ch.ref, fl->active});
        return;
    }

    const auto [cid, mid] = ids_of(m);
    if (ch.in_flight && ch.in_flight->reply.matches(cid, mid)) {
        on_reply(ch, m);
        return;
    }
    if (std::holds_alternative<wire::basic_cancel_ok>(m)) {
        // Our basic.cancel crossed the broker's (its queue was deleted):
        // RabbitMQ 3.10 may answer it twice, and nothing waits for the
        // second. Harmless: the consumer is over either way.
        return;
    }
    protocol_failure(command_invalid, "unexpected " + std::string(wire::method_name(m)) +
                                          on_channel(n));
}

void connection_machine::on_reply(channel_state& ch, wire::method& m) {
    outgoing item = std::move(*ch.in_flight);
    ch.in_flight.reset();

    if (auto* g = std::get_if<wire::basic_get_ok>(&m)) {
        ch.pending_content = std::move(*g);
        ch.content_op = item.op;
        (void)ch.assembler.expect_content();
        flush(ch);
        return;
    }
    if (std::holds_alternative<wire::channel_open_ok>(m)) {
        ch.state = channel_state::phase::open;
    } else if (std::holds_alternative<wire::confirm_select_ok>(m)) {
        ch.confirm_mode = true;
    } else if (auto* c = std::get_if<wire::basic_consume_ok>(&m)) {
        ch.consumers[c->consumer_tag] = item.consumer;
    } else if (auto* c = std::get_if<wire::basic_cancel_ok>(&m)) {
        if (auto it = ch.consumers.find(c->consumer_tag); it != ch.consumers.end()) {
            events_.push_back(ev_consumer_ended{ch.ref, it->second, it->first, {}});
            ch.consumers.erase(it);
        }
    }
    if (item.op) {
        ev_op_done done;
        done.id = item.op;
        done.channel = ch.ref;
        done.reply = std::move(m);
        events_.push_back(std::move(done));
    }
    flush(ch);
}

void connection_machine::on_content_complete(channel_state& ch) {
    wire::message_content content = ch.assembler.take();
    if (!ch.pending_content) return;
    content_method pending = std::move(*ch.pending_content);
    ch.pending_content.reset();

    if (auto* d = std::get_if<wire::basic_deliver>(&pending)) {
        op_id consumer = 0;
        if (auto it = ch.consumers.find(d->consumer_tag); it != ch.consumers.end()) {
            consumer = it->second;
        }
        events_.push_back(ev_delivery{ch.ref, consumer, std::move(*d), std::move(content)});
    } else if (auto* r = std::get_if<wire::basic_return>(&pending)) {
        if (content.unreadable) {
            // A return is matched to its publish by its properties and body;
            // one that cannot be read would leave its publish counted as
            // routed. Failing the connection fails that publish instead.
            protocol_failure(unexpected_frame, "a returned message" + on_channel(ch.ref.number) +
                                                   " that cannot be read: " +
                                                   content.unreadable->detail);
            return;
        }
        events_.push_back(ev_return{ch.ref, std::move(*r), std::move(content)});
    } else if (auto* g = std::get_if<wire::basic_get_ok>(&pending)) {
        ev_op_done done;
        done.id = ch.content_op;
        done.channel = ch.ref;
        done.reply = std::move(*g);
        done.content = std::move(content);
        ch.content_op = 0;
        if (done.id) events_.push_back(std::move(done));
    }
}

void connection_machine::on_server_channel_close(channel_state& ch, const wire::channel_close& c) {
    const std::uint16_t n = ch.ref.number;
    write_method(n, wire::channel_close_ok{});
    broker_reply reply{c.reply_code, c.reply_text, c.failing_class_id, c.failing_method_id};
    std::string detail = "the broker closed channel " + std::to_string(n) + ": " + reply.to_string();
    drop_channel(n, broker_error(c.reply_code), detail, reply);
}

void connection_machine::drop_channel(std::uint16_t number, std::error_code ec,
                                      const std::string& detail,
                                      const std::optional<broker_reply>& reply) {
    const auto it = channels_.find(number);
    if (it == channels_.end()) return;
    std::unique_ptr<channel_state> ch = std::move(it->second);
    channels_.erase(it);

    // The channel's fate first, so the driver records why before any
    // operation of the channel completes.
    events_.push_back(ev_channel_closed{ch->ref, ec, detail, reply});
    // Every operation pending on it ends with this close, the broker's
    // reply included (this channel closes only once).
    if (ch->in_flight) complete(ch->in_flight->op, ec, detail, reply);
    if (ch->content_op) complete(ch->content_op, ec, detail, reply);
    for (const auto& item : ch->held) complete(item.op, ec, detail, reply);
    for (const auto op : ch->confirms.drain()) complete(op, ec, detail, reply);
    for (const auto& [tag, consumer] : ch->consumers) {
        events_.push_back(ev_consumer_ended{ch->ref, consumer, tag, ec});
    }
}

}  // namespace tarry::amqp::detail
