// Parked copies and dead letters (see the header).
#include "message_copies.hpp"

#include "tarry/amqp/wire/byte_writer.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/time/epoch_text.hpp"

#include <algorithm>

namespace tarry::detail {

std::string bounded(std::string_view text, std::size_t max_length) {
    if (text.size() <= max_length) return std::string(text);
    const std::size_t keep = max_length > 3 ? max_length - 3 : 0;
    return std::string(text.substr(0, keep)) + "...";
}

namespace {
// A copy is a new message: what the broker wrote on the original's way
// (its deaths, a quorum queue's counts of returns and of acquisitions) is
// not carried over.
amqp::message republishable(const amqp::message& original) {
    amqp::message copy = original;
    contract::strip_broker_death_headers(copy.properties);
    if (copy.properties.headers) {
        copy.properties.headers->erase("x-delivery-count");
        copy.properties.headers->erase("x-acquired-count");  // RabbitMQ 4.3
    }
    copy.properties.expiration.reset();
    return copy;
}
}  // namespace

amqp::message requeue_copy(const amqp::message& original) { return republishable(original); }

amqp::message renewed_copy(const amqp::message& original, wall_time due, wall_time now) {
    amqp::message copy = republishable(original);
    contract::write_schedule(copy.properties, due, now);
    return copy;
}

amqp::message parked_copy(const amqp::message& original, wall_time due, wall_time now) {
    amqp::message copy = republishable(original);
    contract::write_schedule(copy.properties, due, now);
    return copy;
}

amqp::message dead_letter_copy(const amqp::message& original, std::string_view reason,
                               std::uint32_t attempt) {
    amqp::message copy = republishable(original);
    if (!copy.properties.headers) copy.properties.headers.emplace();
    copy.properties.headers->set(std::string(contract::reason_header), bounded(reason));
    copy.properties.headers->set(std::string(contract::attempt_header),
                                 static_cast<std::int64_t>(attempt));
    return copy;
}

}  // namespace tarry::detail

namespace tarry::detail {

namespace {
void set_header(amqp::message& m, std::string_view name, amqp::field_value v) {
    if (!m.properties.headers) m.properties.headers.emplace();
    m.properties.headers->set(std::string(name), std::move(v));
}
void note_failure(amqp::message& m, const failure_note& note) {
    set_header(m, first_attempt_header, epoch_seconds_number(note.first_attempt));
    set_header(m, last_error_header, bounded(note.error));
}
}  // namespace

wall_time first_attempt_of(const amqp::message& m, wall_time fallback) {
    const auto* h = amqp::wire::header_of(m.properties, first_attempt_header);
    const double* d = h ? h->get_if<double>() : nullptr;
    // Within what a nanosecond wall_time holds (to 2262), or not trusted.
    if (d == nullptr || !(*d >= 0 && *d < 9.2e9)) return fallback;
    return wall_time(std::chrono::duration_cast<wall_time::duration>(
        std::chrono::microseconds(static_cast<std::int64_t>(*d * 1e6 + 0.5))));
}

std::chrono::milliseconds last_delay_of(const amqp::message& m) {
    const auto n = amqp::wire::integer_header(m.properties, last_delay_header);
    return std::chrono::milliseconds(n && *n > 0 ? *n : 0);
}

amqp::message retry_copy(const amqp::message& original, const failure_note& note, wall_time due,
                         std::chrono::milliseconds delay, wall_time now) {
    amqp::message copy = republishable(original);
    contract::write_schedule(copy.properties, due, now);
    set_header(copy, contract::attempt_header, static_cast<std::int64_t>(note.attempt) + 1);
    set_header(copy, last_delay_header, static_cast<std::int64_t>(delay.count()));
    note_failure(copy, note);
    return copy;
}

amqp::message failed_dead_letter_copy(const amqp::message& original, std::string_view reason,
                                      const failure_note& note) {
    amqp::message copy = dead_letter_copy(original, reason, note.attempt);
    note_failure(copy, note);
    return copy;
}

amqp::message replay_copy(const amqp::message& dead_letter, wall_time now) {
    amqp::message copy = dead_letter;
    contract::strip_broker_death_headers(copy.properties);
    if (copy.properties.headers) {
        auto& entries = copy.properties.headers->entries();
        std::erase_if(entries, [](const amqp::wire::field_entry& e) { return e.name.rfind("x-tarry-", 0) == 0; });
    }
    contract::write_generation(copy.properties, contract::next_generation(now));
    return copy;
}

}  // namespace tarry::detail

namespace tarry::detail {

namespace {
// Room kept for the reason's own words when it quotes a detail: the byte
// counts that say how to read the letter's body are never cut off.
constexpr std::size_t max_quoted_detail = 600;

amqp::message letter_with(amqp::basic_properties p, std::string_view reason, std::uint32_t attempt) {
    amqp::message m;
    m.properties = std::move(p);
    m.properties.headers.emplace();
    m.properties.headers->set(std::string(contract::reason_header), bounded(reason));
    m.properties.headers->set(std::string(contract::attempt_header), static_cast<std::int64_t>(attempt));
    return m;
}

// "N bytes of <what>, then the M-byte body" (no body part when it is empty).
std::string body_layout(std::size_t block, std::string_view what, std::size_t body) {
    std::string s = "the dead letter's body: " + std::to_string(block) + " bytes of " + std::string(what);
    if (body > 0) s += ", then the " + std::to_string(body) + "-byte body";
    return s;
}
}  // namespace

unreadable_letter unreadable_dead_letter(const amqp::message& read, const amqp::unreadable_content& why,
                                         std::uint32_t attempt) {
    unreadable_letter out;
    const std::string detail = bounded(why.detail, max_quoted_detail);
    if (!why.raw_properties) {
        // Only the body was over the limit: the properties travel as they are.
        out.reason = "unreadable: " + detail;
        out.copy = dead_letter_copy(read, out.reason, attempt);
        return out;
    }
    const auto& raw = *why.raw_properties;
    out.reason = "unreadable: " + detail + " (" + body_layout(raw.size(), "raw properties", read.body.size()) + ")";
    amqp::basic_properties p;
    p.delivery_mode = 2;  // kept until someone looks, like every dead letter's original
    out.copy = letter_with(std::move(p), out.reason, attempt);
    out.copy.body.reserve(raw.size() + read.body.size());
    out.copy.body.assign(raw.begin(), raw.end());
    out.copy.body.insert(out.copy.body.end(), read.body.begin(), read.body.end());
    return out;
}

unreadable_letter unfit_dead_letter(const amqp::message& original, std::string_view copy_name,
                                    std::uint32_t frame_max, std::uint32_t attempt) {
    std::vector<std::uint8_t> block;
    amqp::wire::byte_writer w(block);
    amqp::wire::encode_properties(w, original.properties);
    if (!w.ok()) block.clear();  // decoded properties always encode; never send half of them

    unreadable_letter out;
    out.reason = "unreadable: its properties do not fit one frame" +
                 (frame_max > 0 ? " (frame_max " + std::to_string(frame_max) + ")" : std::string()) + " in its " +
                 std::string(copy_name) + " (" +
                 body_layout(block.size(), "its properties as encoded", original.body.size()) + ")";
    const auto& o = original.properties;
    amqp::basic_properties p;
    p.message_id = o.message_id;
    p.correlation_id = o.correlation_id;
    p.type = o.type;
    p.app_id = o.app_id;
    p.timestamp = o.timestamp;
    p.delivery_mode = o.delivery_mode;
    p.priority = o.priority;
    out.copy = letter_with(std::move(p), out.reason, attempt);
    out.copy.body = std::move(block);
    out.copy.body.insert(out.copy.body.end(), original.body.begin(), original.body.end());
    return out;
}

}  // namespace tarry::detail
