// Replaying dead letters (see tarry/consumer/replay.hpp).
#include "tarry/consumer/replay.hpp"

#include "message_copies.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/use_future.hpp>

#include <stdexcept>

namespace tarry {

namespace {
using boost::asio::use_future;

[[noreturn]] void fail(const std::string& what, std::error_code ec, const amqp::channel& ch) {
    const auto detail = ch.last_error().message;
    throw std::runtime_error("replay: " + what + ": " + ec.message() + (detail.empty() ? "" : " - " + detail));
}

std::string reason_of(const amqp::message& m) {
    const auto* v = m.properties.headers ? m.properties.headers->find(contract::reason_header) : nullptr;
    const auto* s = v ? v->get_if<std::string>() : nullptr;
    return s ? *s : std::string();
}
}  // namespace

replay_result replay_dead_letters(amqp::connection& conn, const replay_options& o) {
    if (o.queue.empty()) throw std::invalid_argument("replay: the work queue is required");
    const std::string dead = o.dead_letter_queue.empty() ? o.queue + ".dead" : o.dead_letter_queue;
    auto [open_error, ch] = conn.async_open_channel(use_future).get();
    if (open_error) throw std::runtime_error("replay: cannot open a channel: " + conn.last_error().message);
    amqp::queue_options check;
    check.name = dead;
    check.passive = true;
    auto [declare_error, info] = ch.async_declare_queue(check, use_future).get();
    if (declare_error) fail("no dead-letter queue '" + dead + "'", declare_error, ch);
    check.name = o.queue;
    if (auto [e, i] = ch.async_declare_queue(check, use_future).get(); e) fail("no queue '" + o.queue + "'", e, ch);

    publisher pub(conn);
    replay_result r;
    // Each message present at the start is looked at once: skipped ones stay
    // unacknowledged until the channel closes, which puts them back.
    for (std::uint32_t seen = 0; seen < info.message_count; ++seen) {
        auto [get_error, got] = ch.async_get(dead, {}, use_future).get();
        if (get_error) fail("basic.get from '" + dead + "'", get_error, ch);
        if (!got) break;
        const auto& d = got->item;
        // An unreadable message, or the dead letter of one, holds no job to
        // run again (its properties are bytes in its body, or its body is gone).
        const std::string reason = d.unreadable ? std::string() : reason_of(d.msg);
        const bool match = !d.unreadable && reason.rfind("unreadable:", 0) != 0 &&
                           reason.rfind(o.reason_prefix, 0) == 0;
        if (!match || r.moved >= o.limit) {
            ++r.skipped;
            continue;
        }
        if (auto e = pub.async_publish_as_is("", o.queue, detail::replay_copy(d.msg), use_future).get())
            throw std::runtime_error("replay: republishing to '" + o.queue + "' failed: " + e.message());
        if (auto e = ch.async_ack(d.delivery_tag, {}, use_future).get()) fail("ack", e, ch);
        ++r.moved;
    }
    ch.async_close(use_future).wait();
    return r;
}

}  // namespace tarry
