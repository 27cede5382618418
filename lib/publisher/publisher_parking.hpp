// Which jobs async_publish parks through the delay cascade
// (publisher_options::park_beyond), and for how long. Not installed.
#pragma once

#include "tarry/publisher/publisher.hpp"

#include <chrono>
#include <optional>

namespace tarry::detail {

/// How long a job due at `due`, published at `now`, waits in the delay
/// cascade before it reaches its queue: due − now − park_margin, in whole
/// milliseconds rounded down (it must not arrive after due − park_margin),
/// when park_beyond is set and due − now is beyond it and that wait is
/// positive; else nothing (the job goes to its queue at once).
std::optional<std::chrono::milliseconds> publisher_park_wait(wall_time due, wall_time now,
                                                             const publisher_options& o) noexcept;

}  // namespace tarry::detail
