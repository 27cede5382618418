// Reading the queue's control stream into the tombstone table (see
// control_reader.hpp).
#include "control_reader.hpp"

#include "tarry/control/checkpoint.hpp"
#include "tarry/control/checkpoint_stream.hpp"
#include "tarry/control/control_stream.hpp"
#include "tarry/control/schedule_entry.hpp"
#include "tarry/time/epoch_text.hpp"
#include "tarry/control/tombstone.hpp"

#include <boost/asio/as_tuple.hpp>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>


namespace tarry::detail {

namespace asio = boost::asio;
using asio::use_awaitable;

namespace {

// How often expired tombstones are freed.
constexpr std::chrono::minutes expiry_interval{1};

checkpoint_writer::settings writer_settings(const control_reader::settings& s) {
    checkpoint_writer::settings w;
    w.queue = s.queue;
    w.every = s.checkpoint_every;
    w.jitter = s.checkpoint_jitter;
    return w;
}

}  // namespace

control_reader::control_reader(amqp::connection& conn, publisher& marks, settings s, control_tables tables,
                               report tell)
    : conn_(conn),
      marks_(marks),
      settings_(std::move(s)),
      tables_(std::move(tables)),
      tell_(std::move(tell)),
      writer_(std::make_shared<checkpoint_writer>(
          conn, marks, writer_settings(settings_), tables_,
          [this](const std::string& detail) { tell_(false, detail); })),
      caught_up_(conn.get_executor()),
      retry_(conn.get_executor()),
      expiry_(conn.get_executor()),
      stall_(conn.get_executor()) {}

asio::awaitable<bool> control_reader::attach() {
    if (closed_) co_return false;
    if (consuming_) co_return true;
    if (attaching_) co_return false;  // the other attach goes on
    attaching_ = true;
    std::string restored;
    if (!last_offset_) restored = co_await restore();
    const bool caught_up = !closed_ && co_await attach_once(std::move(restored));
    if (caught_up) writer_->tick(read_to_end(), std::chrono::system_clock::now());  // a checkpoint may be due already
    attaching_ = false;
    co_return caught_up;
}

// g++ 12 warns, wrongly, that Asio's coroutine frame is freed by another
// function than allocated it (it follows the inlined aligned_alloc of the
// frame's operator new, not the matching operator delete of the same class).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
asio::awaitable<std::string> control_reader::restore() {
    amqp::diagnostics diag;
    auto [ec, found] = co_await control::async_find_checkpoint(conn_, settings_.queue, settings_.find_timeout, diag,
                                                               asio::as_tuple(use_awaitable));
    if (ec) {
        tell_(false, "cannot search the checkpoint stream (reading the control stream from its first entry): " +
                         diag.message);
        co_return std::string();
    }
    for (const auto& why : found.skipped) tell_(false, "skipped a checkpoint part: " + why);
    if (!found.checkpoint) {
        // Said only when there is a checkpoint stream: a queue that never
        // had one needs no word.
        if (found.entries_read > 0) co_return "from its first entry (" + found.why_none + ")";
        co_return std::string();
    }
    if (closed_ || last_offset_) co_return std::string();
    auto& cp = *found.checkpoint;
    const auto now = std::chrono::system_clock::now();
    std::size_t records = 0;
    const control::checkpoint_visitor into_tables{
        [&](const control::tombstone& t) { records += tables_.cancels->jobs->add(t, now) ? 1 : 0; },
        [&](const control::tombstone& t) { records += tables_.cancels->schedules->add(t, now) ? 1 : 0; },
        [&](const control::run_claim& c) {
            if (tables_.claims) records += tables_.claims->table.add(c, now) ? 1 : 0;
        }};
    std::string why;
    for (auto& part : cp.parts) {
        control::read_checkpoint_records(part.body, into_tables, why);  // checked by the search
        std::vector<std::uint8_t>().swap(part.body);  // let go of each part as it is read
    }
#if defined(__GLIBC__)
    // The parts were held whole while the search made sure of them (tens of
    // MB for 10^6 entries): hand the freed pages back to the system.
    malloc_trim(0);
#endif
    last_offset_ = cp.covers;
    writer_->known(cp.covers, from_epoch_whole_seconds(cp.parts.front().properties.timestamp.value_or(0)));
    co_return "from checkpoint '" + cp.id + "' (" + std::to_string(records) + " live entries up to offset " +
        std::to_string(cp.covers) + ", " + std::to_string(found.entries_read) + " entries of the checkpoint stream read)";
}

asio::awaitable<bool> control_reader::attach_once(std::string restored) {
    expire_now_and_then();
    const std::string stream = control::stream_name(settings_.queue);
    amqp::diagnostics diag;
    auto [oe, ch] = co_await conn_.async_open_channel(diag, use_awaitable);
    if (oe) {
        tell_(false, "cannot open a channel for the control stream '" + stream + "': " + diag.message);
        retry_later();
        co_return false;
    }
    amqp::queue_options q;
    q.name = stream;
    q.passive = true;
    auto [de, info] = co_await ch.async_declare_queue(std::move(q), diag, use_awaitable);
    if (de) {
        // 404: no command has written to it yet; the broker closed the channel.
        if (de != amqp::reply_code::not_found)
            tell_(false, "cannot find the control stream '" + stream + "': " + diag.message);
        if (ch.is_open()) co_await ch.async_close(use_awaitable);
        retry_later();
        co_return false;
    }
    if (auto qe = co_await ch.async_qos({settings_.prefetch, 0, false}, diag, use_awaitable)) {
        tell_(false, "cannot set the control stream's prefetch: " + diag.message);
        if (ch.is_open()) co_await ch.async_close(use_awaitable);
        retry_later();
        co_return false;
    }
    const std::uint64_t incarnation = ++incarnation_;
    ch.set_close_handler([w = weak_from_this(), incarnation](const amqp::diagnostics& why) {
        auto self = w.lock();
        if (!self || self->incarnation_ != incarnation) return;
        self->consuming_ = false;
        self->channel_ = {};
        self->caught_up_.cancel();  // attach() waits no longer
        if (self->closed_ || why.code == amqp::errc::channel_closed) return;  // ours
        if (why.code != amqp::errc::connection_lost && why.code != amqp::errc::connection_closed)
            self->tell_(false, "the control stream's channel closed: " + why.message);
        self->retry_later();
    });
    amqp::consume_options co;
    co.queue = stream;
    if (last_offset_) co.arguments.set("x-stream-offset", *last_offset_ + 1);
    else co.arguments.set("x-stream-offset", std::string("first"));
    auto [ce, tag] = co_await ch.async_consume(std::move(co), handlers_for(incarnation), diag, use_awaitable);
    if (ce) {
        tell_(false, "cannot read the control stream '" + stream + "': " + diag.message);
        if (ch.is_open()) co_await ch.async_close(use_awaitable);
        retry_later();
        co_return false;
    }
    channel_ = ch;
    consuming_ = true;

    // Read up to the end: append a marker, wait until it comes back.
    awaited_end_.emplace("marker");
    caught_up_.expires_after(settings_.catch_up_timeout);
    amqp::diagnostics mark_diag;
    const auto me = co_await marks_.async_publish_as_is("", stream, awaited_end_->marker(), mark_diag, use_awaitable);
    if (me) {
        tell_(false, "cannot append a marker to the control stream (read on without knowing the end): " +
                         mark_diag.message);
        awaited_end_.reset();
        co_return true;
    }
    appended();
    if (awaited_end_) {
        auto [we] = co_await caught_up_.async_wait(asio::as_tuple(use_awaitable));
        if (!we && awaited_end_) {
            // Still awaited: no checkpoint until it is read (tables not whole).
            tell_(false, "the control stream's marker did not come back within " +
                             std::to_string(settings_.catch_up_timeout.count()) + " ms (read on)");
            co_return true;
        }
    }
    if (consuming_) {
        if (tables_.claims) tables_.claims->enforce();
        tell_(true, restored);
    }
    co_return consuming_;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

amqp::consumer_handlers control_reader::handlers_for(std::uint64_t incarnation) {
    return {[w = weak_from_this(), incarnation](amqp::delivery d) {
                // A channel let go as stalled may deliver late: its tags
                // mean nothing on the current one.
                if (auto self = w.lock(); self && self->incarnation_ == incarnation) self->on_entry(std::move(d));
            },
            [w = weak_from_this(), incarnation](std::error_code) {
                auto self = w.lock();
                if (!self || self->incarnation_ != incarnation || self->closed_) return;
                self->tell_(false, "the broker cancelled the control stream's consumer");
                self->consuming_ = false;
                self->channel_.async_close([](std::error_code) {});
                self->channel_ = {};
                self->retry_later();
            }};
}

void control_reader::on_entry(amqp::delivery d) {
    ++stall_.reads;
    if (const auto off = amqp::wire::integer_header(d.msg.properties, "x-stream-offset")) last_offset_ = *off;
    if (channel_.is_open()) channel_.async_ack(d.delivery_tag, {}, [](std::error_code) {});
    const auto& p = d.msg.properties;
    if (control::is_marker(p)) {
        if (awaited_end_ && awaited_end_->is_end(p)) {
            awaited_end_.reset();
            caught_up_.cancel();
            // Read to the end: a checkpoint may be due (after a catch-up that
            // outlasted catch_up_timeout, nothing else would say so now).
            writer_->tick(read_to_end(), std::chrono::system_clock::now());
        }
        return;
    }
    std::string why;
    const auto now = std::chrono::system_clock::now();
    if (last_offset_) writer_->read_up_to(*last_offset_, read_to_end(), now);
    if (auto t = control::read_tombstone(p, why)) {
        tables_.cancels->jobs->add(*t, now);
        return;
    }
    if (auto c = control::read_checkpointed(p, why)) {
        writer_->known(c->covers, c->written);
        return;
    }
    if (why.empty()) {
        // An upsert or a removal drops the older occurrences of its
        // schedule, as a tombstone of its generation keyed by the schedule.
        auto e = control::read_schedule_entry(d.msg, why);
        if (const auto* u = e ? std::get_if<control::schedule_upsert>(&*e) : nullptr)
            tables_.cancels->schedules->add({u->schedule_id, u->generation, u->written}, now);
        else if (const auto* r = e ? std::get_if<control::schedule_removal>(&*e) : nullptr)
            tables_.cancels->schedules->add({r->schedule_id, r->generation, r->written}, now);
        else if (const auto* c = e ? std::get_if<control::run_claim>(&*e) : nullptr; c && tables_.claims) {
            tables_.claims->table.add(*c, now);
            if (tables_.on_claims) tables_.on_claims();
        }
    }
    if (!why.empty()) tell_(false, "skipped an entry of the control stream: " + why);
}

void control_reader::retry_later() {
    if (closed_) return;
    retry_.expires_after(settings_.poll);
    retry_.async_wait([w = weak_from_this()](boost::system::error_code ec) {
        auto self = w.lock();
        // Disconnected: the subscribe after the reconnect attaches.
        if (ec || !self || self->closed_ || !self->conn_.is_open()) return;
        asio::co_spawn(self->conn_.get_executor(),
                       [self]() -> asio::awaitable<void> { co_await self->attach(); }, asio::detached);
    });
}

void control_reader::appended() {
    if (closed_ || !consuming_ || stall_.armed) return;
    stall_.armed = true;
    stall_.reads_when_armed = stall_.reads;
    stall_.timer.expires_after(settings_.stall_timeout);
    stall_.timer.async_wait([w = weak_from_this()](boost::system::error_code ec) {
        auto self = w.lock();
        if (ec || !self) return;  // cancelled by detached(): the flag is reset there
        self->stall_.armed = false;
        if (self->closed_ || !self->consuming_ || self->stall_.reads != self->stall_.reads_when_armed) return;
        // Nothing read: stalled only if what was appended is still waited
        // for (it may have been read before its confirm came).
        const bool awaited = self->awaited_end_ || (self->tables_.awaits_entry && self->tables_.awaits_entry());
        if (awaited) self->attach_again_stalled();
    });
}

void control_reader::attach_again_stalled() {
    const std::string from = last_offset_ ? "offset " + std::to_string(*last_offset_ + 1) : "its first entry";
    tell_(false, "the control stream's consumer delivered nothing within " +
                     std::to_string(settings_.stall_timeout.count()) +
                     " ms of an entry appended here being confirmed: attaching again from " + from);
    auto stalled = channel_;
    detached();  // the stalled channel's handlers are stale from here on
    // Not waited for: a channel the broker no longer serves may never answer.
    if (stalled.is_open()) stalled.async_close([](std::error_code) {});
    retry_later();
}

void control_reader::expire_now_and_then() {
    if (expiry_armed_ || closed_) return;
    expiry_armed_ = true;
    const auto now = std::chrono::system_clock::now();
    tables_.cancels->jobs->expire(now);
    tables_.cancels->schedules->expire(now);
    if (tables_.claims) tables_.claims->table.expire(now);
    writer_->tick(read_to_end(), now);
    expiry_.expires_after(expiry_interval);
    expiry_.async_wait([w = weak_from_this()](boost::system::error_code ec) {
        auto self = w.lock();
        if (ec || !self) return;
        self->expiry_armed_ = false;
        self->expire_now_and_then();
    });
}

void control_reader::detached() {
    ++incarnation_;
    consuming_ = false;
    channel_ = {};
    awaited_end_.reset();
    caught_up_.cancel();
    retry_.cancel();
    stall_.timer.cancel();
    stall_.armed = false;
}

void control_reader::close() {
    closed_ = true;
    writer_->close();
    detached();
    expiry_.cancel();
}

}  // namespace tarry::detail
