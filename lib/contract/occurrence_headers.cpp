// The headers of periodic occurrences.
#include "tarry/contract/occurrence_headers.hpp"

#include "tarry/contract/random_id.hpp"
#include "tarry/contract/schedule_headers.hpp"


namespace tarry::contract {

namespace wire = amqp::wire;

void write_occurrence(wire::basic_properties& props, const occurrence_headers& o) {
    if (!props.headers) props.headers.emplace();
    auto& h = *props.headers;
    // Every earlier copy of a name goes (a table read off the wire may repeat one).
    for (const auto name : {schedule_header, nominal_header, spec_header, occurrence_header, copy_header})
        h.erase(name);
    h.set(std::string(schedule_header), o.schedule_id);
    h.set(std::string(nominal_header), o.nominal);
    h.set(std::string(spec_header), o.spec);
    h.set(std::string(occurrence_header), static_cast<std::int64_t>(std::min<std::uint64_t>(o.number, INT64_MAX)));
    h.set(std::string(copy_header), o.copy);
    props.message_id = o.id();
}

std::optional<occurrence_headers> read_occurrence(const wire::basic_properties& props, std::string& why) {
    why.clear();
    if (wire::header_of(props, schedule_header) == nullptr) return std::nullopt;
    occurrence_headers o;
    const std::pair<std::string_view, std::string*> texts[] = {
        {schedule_header, &o.schedule_id}, {nominal_header, &o.nominal}, {spec_header, &o.spec}, {copy_header, &o.copy}};
    for (const auto& [name, out] : texts) {
        const auto* s = wire::text_header(props, name);
        if (s == nullptr || s->empty()) {
            why = "an occurrence without a " + std::string(name) + " string";
            return std::nullopt;
        }
        *out = *s;
    }
    const auto number = wire::integer_header(props, occurrence_header);
    if (!number || *number < 1) {
        why = "an occurrence without a " + std::string(occurrence_header) + " number of 1 or more";
        return std::nullopt;
    }
    o.number = static_cast<std::uint64_t>(*number);
    return o;
}

void write_occurrence_copy(wire::basic_properties& props, const occurrence_headers& o,
                           std::chrono::system_clock::time_point nominal, std::uint64_t generation,
                           std::chrono::system_clock::time_point now) {
    props.type.reset();
    props.timestamp.reset();
    strip_broker_death_headers(props);
    if (props.headers) {
        props.headers->erase(attempt_header);
        props.headers->erase(reason_header);
    }
    write_occurrence(props, o);
    write_schedule(props, nominal, now);
    write_generation(props, generation);
    props.delivery_mode = 2;
}

std::string new_copy_id() { return random_hex_id(); }

}  // namespace tarry::contract
