// The schedule, generation, id and delivery mode of an outgoing job (see
// scheduled_message.hpp).
#include "scheduled_message.hpp"

#include "tarry/contract/random_id.hpp"
#include "tarry/contract/schedule_headers.hpp"

#include <algorithm>

namespace tarry::detail {

namespace {

// Why a schedule due at `due`, published at `now`, is refused (an empty
// code when it is not). A delay above max_delay is that, even when it also
// passes the end of the clock. The last second before the end of wall_time
// is refused too: a double written there may not read back inside it.
amqp::diagnostics refusal(const job_schedule& when, wall_time due, wall_time now,
                          const publisher_options& o) {
    using std::chrono::milliseconds;
    if (!when.valid()) return {publish_errc::invalid_schedule, "the delay is not a number", std::nullopt};
    // (due - now) > max_delay ⇔ ceil(due - now) > max_delay, for whole
    // milliseconds; compared in milliseconds so that no bound overflows.
    if (o.max_delay && due > now && std::chrono::ceil<milliseconds>(due - now) > *o.max_delay) {
        const auto ms = [](auto d) {
            return std::to_string(std::chrono::ceil<milliseconds>(d).count()) + " ms";
        };
        return {publish_errc::delay_exceeds_max,
                "the job is due in " + ms(due - now) + ", above max_delay (" + ms(*o.max_delay) + ")",
                std::nullopt};
    }
    if (due < wall_time{} || due > wall_time::max() - std::chrono::seconds(1)) {
        const auto from_epoch = std::chrono::duration_cast<milliseconds>(due.time_since_epoch()).count();
        return {publish_errc::invalid_schedule,
                "the due time, " + std::to_string(from_epoch) + " ms from the epoch, is " +
                    (due < wall_time{} ? "before 1970" : "past the range of the clock"),
                std::nullopt};
    }
    return {};
}

}  // namespace

amqp::diagnostics schedule_message(amqp::message& msg, const job_schedule& when, wall_time now,
                                   std::uint64_t generation, const publisher_options& o) {
    const wall_time due = when.due(now);
    if (auto refused = refusal(when, due, now, o); refused.code) return refused;
    contract::write_schedule(msg.properties, due, now);
    contract::write_generation(msg.properties, generation);
    if (!msg.properties.message_id) msg.properties.message_id = contract::random_hex_id();
    if (o.persistent && !msg.properties.delivery_mode) msg.properties.delivery_mode = 2;
    return {};
}

}  // namespace tarry::detail
