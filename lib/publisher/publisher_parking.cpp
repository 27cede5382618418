// Which jobs the publisher parks (see publisher_parking.hpp).
#include "publisher_parking.hpp"

#include <cmath>

namespace tarry::detail {

std::optional<std::chrono::milliseconds> publisher_park_wait(wall_time due, wall_time now,
                                                             const publisher_options& o) noexcept {
    using std::chrono::milliseconds;
    if (!o.park_beyond || due <= now) return std::nullopt;
    // In long double milliseconds: due − now in the clock's own ticks could
    // overflow between the ends of its range.
    using wide_ms = std::chrono::duration<long double, std::milli>;
    const long double ahead = std::floor(
        (wide_ms(due.time_since_epoch()) - wide_ms(now.time_since_epoch())).count());
    const milliseconds room(static_cast<milliseconds::rep>(ahead));
    if (room <= *o.park_beyond) return std::nullopt;
    const auto wait = room - o.park_margin;
    if (wait <= milliseconds::zero()) return std::nullopt;
    return wait;
}

}  // namespace tarry::detail
