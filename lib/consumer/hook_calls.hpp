// The user's hooks as the consumer calls them (consumer_hooks and
// subscription_options::is_permanent): what one throws is never fatal and
// never silent. Each exception is counted (consumer_stats::hook_exceptions,
// tarry_hook_exceptions_total) and told to the on_connection hook, the
// consumer's log sink, as a line; one that on_connection itself throws is
// counted only (there is nowhere else to tell). Any thread.
#pragma once

#include "core/consumer_core.hpp"

#include "tarry/consumer/consumer.hpp"

#include <exception>
#include <functional>
#include <memory>

namespace tarry::detail {

/// `hooks` with each hook that is set wrapped so; unset ones stay unset.
consumer_hooks guarded(consumer_hooks hooks, std::shared_ptr<core_counters> counters);

/// `is_permanent` wrapped so: an exception out of it counts, is told to
/// `log` and means "not permanent" (the job is retried). Empty stays empty.
std::function<bool(const std::exception_ptr&)> guarded(std::function<bool(const std::exception_ptr&)> is_permanent,
                                                      std::shared_ptr<core_counters> counters,
                                                      std::function<void(const std::string&)> log);

}  // namespace tarry::detail
