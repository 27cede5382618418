// One short session with the broker for a command-line program: a
// connection on an I/O thread of its own, the work, a clean close. What
// `tarry publish`, `tarry job` and the samples that publish share.
#pragma once

#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/connection_config.hpp"

#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <system_error>

namespace cli {

/// How long a command waits for the broker's confirm (e.g. while it blocks
/// publishers).
inline constexpr std::chrono::seconds confirm_wait{30};

/// Connects to `broker` on an I/O thread of its own, runs `work` on the
/// calling thread with the open connection (it waits for its own
/// operations), then closes (waiting at most 5 s) and joins the thread.
/// Returns what `work` returns; 1 when the connection cannot be made,
/// said on stderr after `program: `.
int with_broker(const tarry::amqp::connection_config& broker, const char* program,
                const std::function<int(tarry::amqp::connection&)>& work);

/// Waits at most confirm_wait for `confirmed`: nothing when it did not
/// complete in time (then says on stderr, after `program: `, that `what`
/// may or may not have been done), else its code.
std::optional<std::error_code> wait_confirm(std::future<std::error_code>& confirmed, const char* program,
                                            const char* what);

}  // namespace cli
