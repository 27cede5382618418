// The consumer's health from what it has told its hooks: its connections'
// events, whether a lane consumes (the core's word), and its life (started,
// stopping, stopped). A value fed on the I/O thread; the consumer guards it
// with a mutex for health() on any thread.
#pragma once

#include "tarry/consumer/connection_event.hpp"
#include "tarry/consumer/consumer_metrics.hpp"

#include <string>

namespace tarry::detail {

class health_state {
public:
    enum class life { not_started, running, stopping, stopped };

    void set(life l) noexcept { life_ = l; }
    /// A connection event, as the hooks hear it (connection_event::text()).
    void event(const connection_event& e);
    /// The health now; `consuming`: a lane consumes (consumer_core::consuming()).
    consumer_health health(bool consuming) const;

private:
    struct connection {
        bool open = false;
        bool blocked = false;
        std::string down;     // why it is not open: the text of its last lost / closed event
        std::string blocker;  // the text of its blocked event
    };
    life life_ = life::not_started;
    connection consuming_;
    connection copies_;
    std::string subscribe_failure;  // the text of the last subscribe_failed, until consuming
};

}  // namespace tarry::detail
