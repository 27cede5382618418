// A checkpoint's parts, to and from entries (see tarry/control/checkpoint.hpp).
#include "tarry/control/checkpoint.hpp"

#include "entry_stamp.hpp"

#include "tarry/amqp/wire/byte_reader.hpp"
#include "tarry/amqp/wire/byte_writer.hpp"
#include "tarry/amqp/wire/properties.hpp"
#include "tarry/time/epoch_text.hpp"

#include <algorithm>
#include <limits>

namespace tarry::control {

namespace {

constexpr std::uint8_t format_version = 1;
constexpr std::uint8_t tombstone_record = 't';
constexpr std::uint8_t supersession_record = 's';
constexpr std::uint8_t claim_record = 'c';

constexpr std::string_view part_header = "x-tarry-part";
constexpr std::string_view parts_header = "x-tarry-parts";
constexpr std::string_view covers_header = "x-tarry-covers";

}  // namespace

checkpoint_builder::checkpoint_builder(std::size_t part_bytes) : part_bytes_(std::max<std::size_t>(part_bytes, 64)) {}

std::vector<std::uint8_t>& checkpoint_builder::open_part() {
    if (bodies_.empty() || bodies_.back().size() >= part_bytes_) {
        bodies_.emplace_back();
        bodies_.back().reserve(std::min<std::size_t>(part_bytes_ + 600, 1 << 16));
        bodies_.back().push_back(format_version);
    }
    ++records_;
    return bodies_.back();
}

void checkpoint_builder::add_keyed(std::uint8_t kind, const tombstone& t) {
    amqp::wire::byte_writer w(open_part());
    w.u8(kind);
    w.shortstr(t.job_id);
    w.u64(t.generation);
    w.i64(epoch_microseconds(t.written));
}

void checkpoint_builder::add_tombstone(const tombstone& t) { add_keyed(tombstone_record, t); }

void checkpoint_builder::add_supersession(const tombstone& t) { add_keyed(supersession_record, t); }

void checkpoint_builder::add_claim(std::string_view occurrence_id, std::string_view copy, wall_time written) {
    amqp::wire::byte_writer w(open_part());
    w.u8(claim_record);
    w.longstr(occurrence_id);
    w.longstr(copy);
    w.i64(epoch_microseconds(written));
}

std::vector<amqp::message> checkpoint_builder::finish(const std::string& id, std::int64_t covers, wall_time written) && {
    if (bodies_.empty()) bodies_.push_back({format_version});
    std::vector<amqp::message> parts;
    parts.reserve(bodies_.size());
    const auto n = static_cast<std::int64_t>(bodies_.size());
    for (std::int64_t i = 0; i < n; ++i) {
        amqp::message m;
        detail::stamp(m.properties, checkpoint_type, id, written);
        auto& h = m.properties.headers.emplace();
        h.set(std::string(part_header), i);
        h.set(std::string(parts_header), n);
        h.set(std::string(covers_header), covers);
        m.body = std::move(bodies_[static_cast<std::size_t>(i)]);
        parts.push_back(std::move(m));
    }
    bodies_.clear();
    return parts;
}

std::optional<checkpoint_part> read_checkpoint_part(const amqp::basic_properties& props, std::string& why) {
    why.clear();
    if (props.type != checkpoint_type) return std::nullopt;
    if (!props.message_id || props.message_id->empty()) {
        why = "a checkpoint part without a message_id (the checkpoint's id)";
        return std::nullopt;
    }
    const auto part = amqp::wire::integer_header(props, part_header);
    const auto parts = amqp::wire::integer_header(props, parts_header);
    const auto covers = amqp::wire::integer_header(props, covers_header);
    if (!part || !parts || !covers) {
        why = "a checkpoint part without integer x-tarry-part, x-tarry-parts and x-tarry-covers";
        return std::nullopt;
    }
    constexpr std::int64_t max_parts = std::numeric_limits<std::uint32_t>::max();
    if (*parts < 1 || *parts > max_parts || *part < 0 || *part >= *parts) {
        why = "a checkpoint part " + std::to_string(*part) + " of " + std::to_string(*parts);
        return std::nullopt;
    }
    if (*covers < 0) {
        why = "a checkpoint covering offset " + std::to_string(*covers);
        return std::nullopt;
    }
    return checkpoint_part{*props.message_id, static_cast<std::uint32_t>(*part), static_cast<std::uint32_t>(*parts),
                           *covers};
}

bool read_checkpoint_records(std::span<const std::uint8_t> body, const checkpoint_visitor& v, std::string& why) {
    why.clear();
    amqp::wire::byte_reader r(body);
    const auto version = r.u8();
    if (!r.ok() || version != format_version) {
        why = r.ok() ? "a checkpoint part of format " + std::to_string(version) + " (this reader knows 1)"
                     : "an empty checkpoint part";
        return false;
    }
    std::size_t index = 0;
    while (!r.at_end()) {
        const auto kind = r.u8();
        if (kind == tombstone_record || kind == supersession_record) {
            tombstone t;
            t.job_id = r.shortstr();
            t.generation = r.u64();
            t.written = from_epoch_microseconds(r.i64());
            if (r.ok() && t.job_id.empty()) r.fail(amqp::wire::errc::truncated, "an empty id");
            if (!r.ok()) break;
            const auto& f = kind == tombstone_record ? v.on_tombstone : v.on_supersession;
            if (f) f(t);
        } else if (kind == claim_record) {
            run_claim c;
            c.occurrence_id = r.longstr();
            c.copy = r.longstr();
            c.written = from_epoch_microseconds(r.i64());
            if (r.ok() && (c.occurrence_id.empty() || c.copy.empty()))
                r.fail(amqp::wire::errc::truncated, "an empty occurrence id or copy");
            if (!r.ok()) break;
            if (v.on_claim) v.on_claim(c);
        } else {
            why = "a checkpoint record of unknown kind " + std::to_string(kind) + " (record " + std::to_string(index) + ")";
            return false;
        }
        ++index;
    }
    if (!r.ok()) {
        why = "a malformed checkpoint record " + std::to_string(index) + ": " + r.detail();
        return false;
    }
    return true;
}

amqp::message to_entry(const checkpointed& c) {
    amqp::message m;
    detail::stamp(m.properties, checkpointed_type, c.id, c.written);
    m.properties.headers.emplace().set(std::string(covers_header), c.covers);
    return m;
}

std::optional<checkpointed> read_checkpointed(const amqp::basic_properties& props, std::string& why) {
    why.clear();
    if (props.type != checkpointed_type) return std::nullopt;
    const auto covers = amqp::wire::integer_header(props, covers_header);
    if (!props.message_id || props.message_id->empty() || !props.timestamp || !covers || *covers < 0) {
        why = "a checkpoint announcement without a message_id, a timestamp or a non-negative x-tarry-covers";
        return std::nullopt;
    }
    return checkpointed{*props.message_id, *covers, from_epoch_whole_seconds(*props.timestamp)};
}

}  // namespace tarry::control
