// Which jobs the publisher parks through the delay cascade
// (publisher_options::park_beyond) and for how long: due − now −
// park_margin, only beyond park_beyond.
#include "publisher_parking.hpp"

#include <doctest/doctest.h>

using namespace std::chrono_literals;
using tarry::wall_time;

namespace {

const wall_time t0 = wall_time(std::chrono::microseconds(1'795'613'756'873'786));

tarry::publisher_options parking(std::chrono::milliseconds beyond, std::chrono::milliseconds margin = 250ms) {
    tarry::publisher_options o;
    o.park_beyond = beyond;
    o.park_margin = margin;
    return o;
}

}  // namespace

TEST_CASE("publisher parking: off by default; every job goes to its queue at once") {
    CHECK_FALSE(tarry::detail::publisher_park_wait(t0 + 24h, t0, tarry::publisher_options{}));
}

TEST_CASE("publisher parking: a job due beyond park_beyond waits due - now - park_margin, in whole ms, rounded down") {
    const auto o = parking(30s);
    const auto wait = tarry::detail::publisher_park_wait(t0 + 1h + 999us, t0, o);
    REQUIRE(wait);
    CHECK(*wait == 1h - 250ms);
    // A due time a whole ms ahead of a fractional now: still not later.
    const auto w2 = tarry::detail::publisher_park_wait(t0 + 60s, t0 + 1us, o);
    REQUIRE(w2);
    CHECK(*w2 == 60s - 250ms - 1ms);
}

TEST_CASE("publisher parking: a job due within park_beyond, at it, in the past or within the margin goes at once") {
    const auto o = parking(30s);
    CHECK_FALSE(tarry::detail::publisher_park_wait(t0 + 30s, t0, o));
    CHECK_FALSE(tarry::detail::publisher_park_wait(t0 + 10s, t0, o));
    CHECK_FALSE(tarry::detail::publisher_park_wait(t0 - 1h, t0, o));
    // park_beyond shorter than the margin: nothing left to wait.
    const auto tight = parking(100ms, 1s);
    CHECK_FALSE(tarry::detail::publisher_park_wait(t0 + 900ms, t0, tight));
    const auto w = tarry::detail::publisher_park_wait(t0 + 1500ms, t0, tight);
    REQUIRE(w);
    CHECK(*w == 500ms);
}

TEST_CASE("publisher parking: the ends of the clock do not overflow") {
    const auto o = parking(1s);
    const auto w = tarry::detail::publisher_park_wait(wall_time::max(), t0, o);
    REQUIRE(w);
    CHECK(*w > std::chrono::hours(24 * 365 * 100));
    CHECK_FALSE(tarry::detail::publisher_park_wait(wall_time::min(), t0, o));
}
