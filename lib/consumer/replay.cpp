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

// What failed, with that operation's own diagnostics.
[[noreturn]] void fail(const std::string& what, const amqp::diagnostics& d) { throw tarry::error("replay: " + what, d); }

std::string reason_of(const amqp::message& m) {
    const auto* s = amqp::wire::text_header(m.properties, contract::reason_header);
    return s ? *s : std::string();
}
}  // namespace

replay_result replay_dead_letters(amqp::connection& conn, const replay_options& o) {
    if (o.queue.empty())
        fail("options", amqp::diagnostics::from(std::make_error_code(std::errc::invalid_argument), "the work queue is required"));
    const std::string dead = o.dead_letter_queue.empty() ? o.queue + ".dead" : o.dead_letter_queue;
    amqp::diagnostics diag;
    auto [open_error, ch] = conn.async_open_channel(diag, use_future).get();
    if (open_error) fail("cannot open a channel", diag);
    amqp::queue_options check;
    check.name = dead;
    check.passive = true;
    auto [declare_error, info] = ch.async_declare_queue(check, diag, use_future).get();
    if (declare_error) fail("no dead-letter queue '" + dead + "'", diag);
    check.name = o.queue;
    if (auto [e, i] = ch.async_declare_queue(check, diag, use_future).get(); e) fail("no queue '" + o.queue + "'", diag);

    publisher pub(conn);
    replay_result r;
    // Each message present at the start is looked at once: skipped ones stay
    // unacknowledged until the end, when one multiple nack (requeue) puts
    // them all back before the function returns (moved ones are acked, so
    // the nack covers the skipped ones only).
    std::uint64_t last_skipped = 0;
    for (std::uint32_t seen = 0; seen < info.message_count; ++seen) {
        auto [get_error, got] = ch.async_get(dead, {}, diag, use_future).get();
        if (get_error) fail("basic.get from '" + dead + "'", diag);
        if (!got) break;
        const auto& d = got->item;
        // An unreadable message, or the dead letter of one, holds no job to
        // run again (its properties are bytes in its body, or its body is gone).
        const std::string reason = d.unreadable ? std::string() : reason_of(d.msg);
        const bool match = !d.unreadable && reason.rfind("unreadable:", 0) != 0 &&
                           reason.rfind(o.reason_prefix, 0) == 0;
        if (!match || r.moved >= o.limit) {
            ++r.skipped;
            last_skipped = d.delivery_tag;
            continue;
        }
        if (pub.async_publish_as_is("", o.queue, detail::replay_copy(d.msg, std::chrono::system_clock::now()), diag, use_future).get())
            fail("republishing to '" + o.queue + "'", diag);
        if (ch.async_ack(d.delivery_tag, {}, diag, use_future).get()) fail("ack", diag);
        ++r.moved;
    }
    if (last_skipped != 0 &&
        ch.async_nack(last_skipped, {.multiple = true, .requeue = true}, diag, use_future).get())
        fail("giving back the skipped dead letters", diag);
    ch.async_close(use_future).wait();
    return r;
}

}  // namespace tarry
