// Schedule upserts, removals and run claims to and from control-stream entries.
#include "tarry/control/schedule_entry.hpp"

#include "entry_stamp.hpp"

#include "tarry/contract/occurrence_headers.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/time/epoch_text.hpp"

#include <algorithm>

namespace tarry::control {

namespace {

namespace wire = amqp::wire;
using detail::stamp;

void set_text(amqp::basic_properties& p, std::string_view name, const std::string& value) {
    if (!p.headers) p.headers.emplace();
    p.headers->set(std::string(name), value);
}

std::optional<std::string> text_of(const amqp::basic_properties& p, std::string_view name) {
    const auto* s = amqp::wire::text_header(p, name);
    if (s == nullptr || s->empty()) return std::nullopt;
    return *s;
}

}  // namespace

amqp::message to_entry(const schedule_upsert& u) {
    amqp::message m = u.template_message;
    if (m.properties.headers) {
        for (const auto name : {contract::schedule_header, contract::nominal_header, contract::occurrence_header,
                                contract::copy_header})
            m.properties.headers->erase(name);
    }
    stamp(m.properties, upsert_type, u.schedule_id, u.written);
    contract::write_generation(m.properties, u.generation);
    set_text(m.properties, contract::spec_header, u.spec);
    return m;
}

amqp::message to_entry(const schedule_removal& r) {
    amqp::message m;
    stamp(m.properties, removal_type, r.schedule_id, r.written);
    contract::write_generation(m.properties, r.generation);
    return m;
}

amqp::message to_entry(const run_claim& c) {
    amqp::message m;
    stamp(m.properties, claim_type, c.occurrence_id, c.written);
    set_text(m.properties, contract::schedule_header, c.schedule_id);
    set_text(m.properties, contract::nominal_header, c.nominal);
    set_text(m.properties, contract::copy_header, c.copy);
    return m;
}

std::optional<schedule_entry> read_schedule_entry(const amqp::message& m, std::string& why) {
    why.clear();
    const auto& p = m.properties;
    const bool upsert = p.type == upsert_type, removal = p.type == removal_type, claim = p.type == claim_type;
    if (!upsert && !removal && !claim) return std::nullopt;
    const std::string what(*p.type);
    if (!p.message_id || p.message_id->empty()) {
        why = "a " + what + " entry without a message_id";
        return std::nullopt;
    }
    if (!p.timestamp) {
        why = "a " + what + " entry without a timestamp";
        return std::nullopt;
    }
    // Capped where wall_time ends (2262).
    const wall_time written = from_epoch_whole_seconds(*p.timestamp);
    if (claim) {
        run_claim c{*p.message_id, {}, {}, {}, written};
        const std::pair<std::string_view, std::string*> fields[] = {
            {contract::schedule_header, &c.schedule_id}, {contract::nominal_header, &c.nominal},
            {contract::copy_header, &c.copy}};
        for (const auto& [name, out] : fields) {
            auto v = text_of(p, name);
            if (!v) {
                why = "a " + what + " entry without a " + std::string(name) + " string";
                return std::nullopt;
            }
            *out = std::move(*v);
        }
        return c;
    }
    const auto g = contract::read_generation(p);
    if (g == 0) {
        why = "a " + what + " entry without a positive x-tarry-generation";
        return std::nullopt;
    }
    if (removal) return schedule_removal{*p.message_id, g, written};
    auto spec = text_of(p, contract::spec_header);
    if (!spec) {
        why = "a " + what + " entry without an x-tarry-spec string";
        return std::nullopt;
    }
    schedule_upsert u{*p.message_id, g, std::move(*spec), m, written};
    auto& t = u.template_message.properties;
    t.type.reset();
    t.message_id.reset();
    t.timestamp.reset();
    t.headers->erase(contract::spec_header);
    t.headers->erase(contract::generation_header);
    if (t.headers->empty()) t.headers.reset();
    return u;
}

amqp::message occurrence_message(const amqp::message& from, const contract::occurrence_headers& o, wall_time nominal,
                                 std::uint64_t generation, wall_time now) {
    amqp::message m = from;
    contract::write_occurrence_copy(m.properties, o, nominal, generation, now);
    return m;
}

}  // namespace tarry::control
