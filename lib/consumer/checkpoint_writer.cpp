// Writing the reader's tables as checkpoints (see checkpoint_writer.hpp).
#include "checkpoint_writer.hpp"

#include "tarry/contract/random_id.hpp"
#include "tarry/control/checkpoint.hpp"
#include "tarry/control/checkpoint_stream.hpp"
#include "tarry/control/control_stream.hpp"

#include <random>

namespace tarry::detail {

checkpoint_writer::checkpoint_writer(amqp::connection& conn, publisher& parts, settings s, control_tables tables,
                                     report tell)
    : conn_(conn),
      parts_(parts),
      settings_(std::move(s)),
      tables_(std::move(tables)),
      tell_(std::move(tell)),
      jitter_(conn.get_executor()) {}

void checkpoint_writer::known(std::int64_t covers, wall_time written) {
    if (known_covers_ && covers <= *known_covers_) return;
    known_covers_ = covers;
    known_written_ = written;
}

void checkpoint_writer::read_up_to(std::int64_t offset, bool attached, wall_time now) {
    read_up_to_ = offset;
    tick(attached, now);
}

void checkpoint_writer::tick(bool attached, wall_time now) {
    attached_ = attached;
    if (due(now)) arm();
}

void checkpoint_writer::close() {
    closed_ = true;
    jitter_.cancel();
}

bool checkpoint_writer::due(wall_time now) const {
    if (closed_ || writing_ || !attached_ || !read_up_to_ || settings_.every == 0) return false;
    const std::int64_t after = known_covers_.value_or(-1);
    if (*read_up_to_ - after >= static_cast<std::int64_t>(settings_.every)) return true;
    // A quiet stream: the newest checkpoint is written again before the
    // checkpoint stream's retention takes it.
    return known_covers_ && now - known_written_ >= settings_.at_least_every;
}

void checkpoint_writer::arm() {
    if (armed_) return;
    armed_ = true;
    thread_local std::mt19937_64 rng(std::random_device{}());
    const auto spread = std::max<std::int64_t>(settings_.jitter.count(), 0);
    jitter_.expires_after(std::chrono::milliseconds(std::uniform_int_distribution<std::int64_t>(0, spread)(rng)));
    jitter_.async_wait([w = weak_from_this()](boost::system::error_code ec) {
        auto self = w.lock();
        if (ec || !self) return;
        self->armed_ = false;
        // Another consumer's announcement may have come meanwhile.
        if (self->due(std::chrono::system_clock::now())) self->write();
    });
}

std::vector<amqp::message> checkpoint_writer::snapshot(const control::checkpointed& as) const {
    // The tables as the reader left them after the entry at read_up_to_:
    // both change on this thread only.
    control::checkpoint_builder b;
    tables_.cancels->jobs->for_each(as.written, [&b](const control::tombstone& t) { b.add_tombstone(t); });
    tables_.cancels->schedules->for_each(as.written, [&b](const control::tombstone& t) { b.add_supersession(t); });
    if (tables_.claims)
        tables_.claims->table.for_each(as.written, [&b](std::string_view occurrence, std::string_view copy, wall_time at) {
            b.add_claim(occurrence, copy, at);
        });
    return std::move(b).finish(as.id, as.covers, as.written);
}

void checkpoint_writer::write() {
    writing_ = true;
    if (!declared_) {
        auto diag = std::make_shared<amqp::diagnostics>();
        control::async_declare_checkpoint_stream(conn_, settings_.queue, *diag,
                                                 [w = weak_from_this(), diag](std::error_code ec) {
            auto self = w.lock();
            if (!self) return;
            if (ec) {
                self->writing_ = false;
                return self->tell_("cannot declare the checkpoint stream '" +
                                   control::checkpoint_stream_name(self->settings_.queue) + "': " + diag->message);
            }
            self->declared_ = true;
            if (!self->closed_) self->write();
        });
        return;
    }
    const control::checkpointed announcement{"cp-" + contract::random_hex_id(), *read_up_to_,
                                             std::chrono::system_clock::now()};
    auto parts = snapshot(announcement);

    struct progress {
        std::size_t waiting = 0;
        std::error_code failed;
    };
    auto p = std::make_shared<progress>(progress{parts.size(), {}});
    const auto stream = control::checkpoint_stream_name(settings_.queue);
    for (auto& part : parts) {
        parts_.async_publish_as_is("", stream, std::move(part), [w = weak_from_this(), p, announcement](std::error_code ec) {
            auto self = w.lock();
            if (!self) return;
            if (ec && !p->failed) p->failed = ec;
            if (--p->waiting > 0) return;
            if (p->failed) {
                self->writing_ = false;
                // A stop while writing leaves a half for the next search to pass over.
                if (self->closed_) return;
                return self->tell_("cannot write a checkpoint: " + p->failed.message());
            }
            // Every part is confirmed: announce it.
            self->parts_.async_publish_as_is("", control::stream_name(self->settings_.queue),
                                             control::to_entry(announcement),
                                             [w, announcement](std::error_code ec) {
                auto self = w.lock();
                if (!self) return;
                self->writing_ = false;
                if (ec && self->closed_) return;
                if (ec) return self->tell_("cannot announce checkpoint '" + announcement.id + "': " + ec.message());
                self->known(announcement.covers, announcement.written);
            });
        });
    }
}

}  // namespace tarry::detail
