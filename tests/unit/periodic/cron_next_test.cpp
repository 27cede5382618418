// recurrence::next_after for cron schedules: in UTC, and across the
// daylight-saving changes of Europe/Berlin and America/New_York.
//
// The transitions (from `zdump -v -c 2026,2027 Europe/Berlin America/New_York`):
//   Berlin    2026-03-29 01:00Z: 02:00 CET (+1)  -> 03:00 CEST (+2); 02:00-02:59 does not exist
//   Berlin    2026-10-25 01:00Z: 03:00 CEST (+2) -> 02:00 CET (+1);  02:00-02:59 happens twice,
//             first 00:00Z-00:59Z, then 01:00Z-01:59Z
//   New York  2026-03-08 07:00Z: 02:00 EST (-5)  -> 03:00 EDT (-4); 02:00-02:59 does not exist
//   New York  2026-11-01 06:00Z: 02:00 EDT (-4)  -> 01:00 EST (-5); 01:00-01:59 happens twice,
//             first 05:00Z-05:59Z, then 06:00Z-06:59Z
// Every UTC instant below is the local time minus its offset.
#include "periodic_test.hpp"

#include "tarry/periodic/recurrence.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <vector>

using namespace std::chrono_literals;
namespace periodic = tarry::periodic;
using periodic::errc;
using periodic_test::cron_in;
using periodic_test::utc;
using tarry::wall_time;

namespace {

// The first `n` occurrences strictly after `after`.
std::vector<wall_time> chain(const periodic::recurrence& r, wall_time after, int n) {
    std::vector<wall_time> out;
    for (int i = 0; i < n; ++i) {
        const auto next = r.next_after(after);
        if (!next) break;
        out.push_back(*next);
        after = *next;
    }
    return out;
}

// How many occurrences fall in [from, to).
int count_in(const periodic::recurrence& r, wall_time from, wall_time to) {
    int n = 0;
    for (auto t = r.next_after(from - 1ns); t && *t < to; t = r.next_after(*t)) ++n;
    return n;
}

using times = std::vector<wall_time>;

}  // namespace

TEST_CASE("a daily cron in UTC runs at its time every day") {
    const auto r = cron_in("0 3 * * *");
    CHECK(chain(r, utc(2026, 1, 1), 3) == times{utc(2026, 1, 1, 3), utc(2026, 1, 2, 3), utc(2026, 1, 3, 3)});
    CHECK(r.next_after(utc(2026, 12, 31, 4)) == utc(2027, 1, 1, 3));
}

TEST_CASE("next_after is strictly after its argument") {
    const auto r = cron_in("0 3 * * *");
    CHECK(r.next_after(utc(2026, 1, 1, 3)) == utc(2026, 1, 2, 3));
    CHECK(r.next_after(utc(2026, 1, 1, 3) - 1ns) == utc(2026, 1, 1, 3));
    CHECK(r.next_after(utc(2026, 1, 1, 3) + 1ns) == utc(2026, 1, 2, 3));
    CHECK(r.next_after(utc(2026, 1, 1, 2, 59, 59)) == utc(2026, 1, 1, 3));
    const auto first = r.next_after(utc(2026, 5, 5, 12));
    REQUIRE(first);
    const auto second = r.next_after(*first);
    REQUIRE(second);
    CHECK(*second > *first);
    CHECK(*second - *first == 24h);
}

TEST_CASE("six fields: occurrences to the second") {
    const auto r = cron_in("*/20 30 2 * * *");
    CHECK(chain(r, utc(2026, 1, 1), 4) ==
          times{utc(2026, 1, 1, 2, 30, 0), utc(2026, 1, 1, 2, 30, 20), utc(2026, 1, 1, 2, 30, 40),
                utc(2026, 1, 2, 2, 30, 0)});
    CHECK(cron_in("* * * * * *").next_after(utc(2026, 1, 1, 0, 0, 0)) == utc(2026, 1, 1, 0, 0, 1));
    CHECK(cron_in("* * * * * *").next_after(utc(2026, 1, 1) + 1ms) == utc(2026, 1, 1, 0, 0, 1));
}

TEST_CASE("a cron's nominal times are whole seconds") {
    const auto r = cron_in("* * * * *");
    CHECK(r.next_after(utc(2026, 1, 1, 0, 0, 30) + 250ms) == utc(2026, 1, 1, 0, 1));
    CHECK(r.next_after(utc(2026, 1, 1, 0, 0, 59) + 999ms) == utc(2026, 1, 1, 0, 1));
}

TEST_CASE("Feb 29 comes only in leap years") {
    const auto r = cron_in("0 0 29 2 *");
    // 2028 and 2032 are leap years; 2100 is not, so 2096's is followed by 2104's.
    CHECK(chain(r, utc(2026, 1, 1), 2) == times{utc(2028, 2, 29), utc(2032, 2, 29)});
    CHECK(r.next_after(utc(2096, 3, 1)) == utc(2104, 2, 29));
}

// wall_time (nanoseconds since 1970 in 64 bits) ends at 2262-04-11T23:47:16.854775807Z.
TEST_CASE("next_after: nothing past what wall_time holds") {
    CHECK_FALSE(cron_in("0 0 1 1 *").next_after(utc(2262, 1, 2)).has_value());
    CHECK_FALSE(cron_in("0 0 29 2 *").next_after(utc(2260, 3, 1)).has_value());  // next: 2264
    CHECK_FALSE(cron_in("0 0 1 1 *", "Europe/Berlin").next_after(utc(2262, 1, 2)).has_value());
    CHECK_FALSE(cron_in("0 0 * * *").next_after(utc(2262, 4, 11)).has_value());
    CHECK(cron_in("0 0 10 4 *").next_after(utc(2262, 1, 2)) == utc(2262, 4, 10));
}

TEST_CASE("next_after: the last day wall_time holds still has occurrences") {
    CHECK(cron_in("0 0 11 4 *").next_after(utc(2262, 1, 2)) == utc(2262, 4, 11));
    CHECK(cron_in("0 * * * *").next_after(utc(2262, 4, 11, 22, 30)) == utc(2262, 4, 11, 23));
}

TEST_CASE("the 31st is skipped in months that have none") {
    const auto r = cron_in("0 0 31 * *");
    CHECK(chain(r, utc(2026, 3, 31), 6) == times{utc(2026, 5, 31), utc(2026, 7, 31), utc(2026, 8, 31),
                                                  utc(2026, 10, 31), utc(2026, 12, 31), utc(2027, 1, 31)});
}

TEST_CASE("restricted day of month and weekday: the 13th and every Friday") {
    // 2026-01-02, 01-09, 01-16 are Fridays, 01-13 a Tuesday; 2026-02-06,
    // 02-13, 02-20 are Fridays (`date -u -d ... +%A`).
    const auto r = cron_in("0 0 13 * FRI");
    CHECK(chain(r, utc(2026, 1, 1), 4) == times{utc(2026, 1, 2), utc(2026, 1, 9), utc(2026, 1, 13), utc(2026, 1, 16)});
    CHECK(chain(r, utc(2026, 2, 6), 2) == times{utc(2026, 2, 13), utc(2026, 2, 20)});
}

TEST_CASE("start and end bound the occurrences, both inclusive") {
    periodic::schedule_spec spec;
    spec.when = periodic_test::cron("0 0 * * *");
    spec.start = utc(2026, 6, 1);
    spec.end = utc(2026, 6, 3);
    const auto r = periodic_test::compile(spec);
    CHECK(r.next_after(utc(2026, 1, 1)) == utc(2026, 6, 1));
    CHECK(r.next_after(utc(2026, 6, 1) - 1ns) == utc(2026, 6, 1));
    CHECK(r.next_after(utc(2026, 6, 1)) == utc(2026, 6, 2));
    CHECK(r.next_after(utc(2026, 6, 2)) == utc(2026, 6, 3));
    CHECK_FALSE(r.next_after(utc(2026, 6, 3)).has_value());
    CHECK_FALSE(r.next_after(utc(2027, 1, 1)).has_value());

    spec.start = utc(2026, 6, 1, 12);
    spec.end = utc(2026, 6, 2, 23, 59, 59);
    const auto s = periodic_test::compile(spec);
    CHECK(s.next_after(utc(2026, 1, 1)) == utc(2026, 6, 2));
    CHECK_FALSE(s.next_after(utc(2026, 6, 2)).has_value());
}

TEST_CASE("next_after ignores the limit: the chain counts") {
    periodic::schedule_spec spec;
    spec.when = periodic_test::cron("0 0 * * *");
    spec.limit = 1;
    const auto r = periodic_test::compile(spec);
    CHECK(chain(r, utc(2026, 1, 1), 3) == times{utc(2026, 1, 2), utc(2026, 1, 3), utc(2026, 1, 4)});
}

TEST_CASE("an unknown time zone is refused") {
    for (const std::string zone : {"Mars/Olympus_Mons", "Europe/Berlinn", "Not a zone"}) {
        CAPTURE(zone);
        periodic::schedule_spec spec;
        spec.when = periodic_test::cron("0 3 * * *");
        spec.time_zone = zone;
        const auto r = periodic::make_recurrence(spec);
        CHECK_FALSE(r.schedule.has_value());
        CHECK(r.error == errc::unknown_time_zone);
        CHECK_FALSE(r.detail.empty());
    }
}

TEST_CASE("a cron in a zone runs at its local time, which is a different UTC time in summer and winter") {
    const auto berlin = cron_in("0 3 * * *", "Europe/Berlin");
    CHECK(berlin.next_after(utc(2026, 1, 15)) == utc(2026, 1, 15, 2));  // CET, +1
    CHECK(berlin.next_after(utc(2026, 7, 15)) == utc(2026, 7, 15, 1));  // CEST, +2
    const auto ny = cron_in("0 3 * * *", "America/New_York");
    CHECK(ny.next_after(utc(2026, 1, 15)) == utc(2026, 1, 15, 8));  // EST, -5
    CHECK(ny.next_after(utc(2026, 7, 15)) == utc(2026, 7, 15, 7));  // EDT, -4
    // The local date decides the day: 23:30 in New York is 03:30Z (EDT) the next UTC day.
    const auto late = cron_in("30 23 * * 5", "America/New_York");  // Fridays 23:30
    CHECK(late.next_after(utc(2026, 7, 15)) == utc(2026, 7, 18, 3, 30));  // Friday 2026-07-17 local
}

// --- fixed hour in the hour that does not exist: once, at the transition ---

TEST_CASE("Berlin spring: a fixed-hour time in the gap runs once at 03:00 CEST") {
    const auto r = cron_in("30 2 * * *", "Europe/Berlin");
    CHECK(r.next_after(utc(2026, 3, 27, 12)) == utc(2026, 3, 28, 1, 30));  // 02:30 CET
    CHECK(chain(r, utc(2026, 3, 28, 12), 2) == times{utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 30)});
    CHECK(r.next_after(utc(2026, 3, 29, 0, 59, 59)) == utc(2026, 3, 29, 1, 0));
    CHECK(r.next_after(utc(2026, 3, 29, 1, 0)) == utc(2026, 3, 30, 0, 30));
}

TEST_CASE("Berlin spring: several fixed-hour times in the gap still run once") {
    const auto r = cron_in("15,45 2 * * *", "Europe/Berlin");
    CHECK(chain(r, utc(2026, 3, 28, 12), 3) ==
          times{utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 15), utc(2026, 3, 30, 0, 45)});
    const auto every_minute = cron_in("* 2 * * *", "Europe/Berlin");
    CHECK(chain(every_minute, utc(2026, 3, 29, 0, 30), 2) == times{utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 0)});
    const auto seconds = cron_in("15 30 2 * * *", "Europe/Berlin");
    CHECK(chain(seconds, utc(2026, 3, 28, 12), 2) == times{utc(2026, 3, 29, 1, 0, 0), utc(2026, 3, 30, 0, 30, 15)});
}

TEST_CASE("Berlin spring: the gap's run and 03:00's run are one when both match") {
    const auto r = cron_in("0 2,3 * * *", "Europe/Berlin");
    CHECK(chain(r, utc(2026, 3, 29, 0), 2) == times{utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 0)});
    const auto q = cron_in("15 2,3 * * *", "Europe/Berlin");
    CHECK(chain(q, utc(2026, 3, 28, 12), 3) ==
          times{utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 1, 15), utc(2026, 3, 30, 0, 15)});
    const auto range = cron_in("30 2-3 * * *", "Europe/Berlin");
    CHECK(chain(range, utc(2026, 3, 28, 12), 2) == times{utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 1, 30)});
}

TEST_CASE("Berlin spring: a fixed-hour time in the gap on a restricted day") {
    // 2027's change is on 2027-03-28, so 2027-03-29 02:30 is CEST, 00:30Z.
    const auto r = cron_in("30 2 29 3 *", "Europe/Berlin");
    CHECK(chain(r, utc(2026, 1, 1), 2) == times{utc(2026, 3, 29, 1, 0), utc(2027, 3, 29, 0, 30)});
}

TEST_CASE("New York spring: a fixed-hour time in the gap runs once at 03:00 EDT") {
    const auto r = cron_in("30 2 * * *", "America/New_York");
    CHECK(r.next_after(utc(2026, 3, 6, 12)) == utc(2026, 3, 7, 7, 30));  // 02:30 EST
    CHECK(chain(r, utc(2026, 3, 7, 12), 2) == times{utc(2026, 3, 8, 7, 0), utc(2026, 3, 9, 6, 30)});
}

// --- follow the clock across the gap: skip it ---

TEST_CASE("Berlin spring: a schedule that follows the clock skips the missing hour") {
    const auto r = cron_in("30 * * * *", "Europe/Berlin");
    CHECK(chain(r, utc(2026, 3, 29, 0, 0), 2) == times{utc(2026, 3, 29, 0, 30), utc(2026, 3, 29, 1, 30)});
    const auto q = cron_in("*/15 * * * *", "Europe/Berlin");
    CHECK(chain(q, utc(2026, 3, 29, 0, 30), 3) ==
          times{utc(2026, 3, 29, 0, 45), utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 1, 15)});
    // The local day 2026-03-29 is 23 hours long: 2026-03-28 23:00Z to 2026-03-29 22:00Z.
    CHECK(count_in(q, utc(2026, 3, 28, 23), utc(2026, 3, 29, 22)) == 23 * 4);
    CHECK(count_in(cron_in("0 */1 * * *", "Europe/Berlin"), utc(2026, 3, 28, 23), utc(2026, 3, 29, 22)) == 23);
}

TEST_CASE("Berlin spring: hours with a step skip the gap, a list of the same hours does not") {
    // 00:30 CET is 23:30Z the day before; 04:30 CEST is 02:30Z.
    const auto stepped = cron_in("30 */2 * * *", "Europe/Berlin");
    CHECK(stepped.next_after(utc(2026, 3, 28, 23, 30)) == utc(2026, 3, 29, 2, 30));
    const auto listed = cron_in("30 0,2,4 * * *", "Europe/Berlin");
    CHECK(chain(listed, utc(2026, 3, 28, 23, 30), 2) == times{utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 2, 30)});
}

TEST_CASE("New York spring: follow the clock skips 02:00-02:59, a fixed hour runs at 03:00 EDT") {
    const auto r = cron_in("30 * * * *", "America/New_York");
    CHECK(chain(r, utc(2026, 3, 8, 6, 0), 2) == times{utc(2026, 3, 8, 6, 30), utc(2026, 3, 8, 7, 30)});
    // 00:30 EST is 05:30Z; 04:30 EDT is 08:30Z.
    const auto stepped = cron_in("30 */2 * * *", "America/New_York");
    CHECK(stepped.next_after(utc(2026, 3, 8, 5, 30)) == utc(2026, 3, 8, 8, 30));
    const auto listed = cron_in("30 0,2,4 * * *", "America/New_York");
    CHECK(chain(listed, utc(2026, 3, 8, 5, 30), 2) == times{utc(2026, 3, 8, 7, 0), utc(2026, 3, 8, 8, 30)});
}

// --- fixed hour in the repeated hour: once, at the first instance ---

TEST_CASE("Berlin autumn: a fixed-hour time in the repeated hour runs only at its first instance") {
    const auto r = cron_in("30 2 * * *", "Europe/Berlin");
    CHECK(chain(r, utc(2026, 10, 24, 12), 2) == times{utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)});
    // From inside the second instance (02:15 CET), the next is the next day's.
    CHECK(r.next_after(utc(2026, 10, 25, 1, 15)) == utc(2026, 10, 26, 1, 30));
    CHECK(r.next_after(utc(2026, 10, 25, 0, 30)) == utc(2026, 10, 26, 1, 30));
    const auto every_minute = cron_in("* 2 * * *", "Europe/Berlin");
    CHECK(chain(every_minute, utc(2026, 10, 25, 0, 58), 2) == times{utc(2026, 10, 25, 0, 59), utc(2026, 10, 26, 1, 0)});
    CHECK(count_in(every_minute, utc(2026, 10, 24, 22), utc(2026, 10, 25, 23)) == 60);
}

TEST_CASE("Berlin autumn: fixed hours around the repeated one") {
    // 01:30 CEST = 23:30Z, 02:30 CEST = 00:30Z, 03:30 CET = 02:30Z.
    const auto r = cron_in("30 1,2,3 * * *", "Europe/Berlin");
    CHECK(chain(r, utc(2026, 10, 24, 23), 4) ==
          times{utc(2026, 10, 24, 23, 30), utc(2026, 10, 25, 0, 30), utc(2026, 10, 25, 2, 30),
                utc(2026, 10, 26, 0, 30)});  // 01:30 CET
    const auto two = cron_in("0 2 * * *", "Europe/Berlin");
    CHECK(chain(two, utc(2026, 10, 24, 12), 2) == times{utc(2026, 10, 25, 0, 0), utc(2026, 10, 26, 1, 0)});
}

TEST_CASE("New York autumn: a fixed-hour time in the repeated hour runs only at its first instance") {
    const auto r = cron_in("30 1 * * *", "America/New_York");
    CHECK(chain(r, utc(2026, 10, 31, 12), 2) == times{utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30)});
    CHECK(r.next_after(utc(2026, 11, 1, 6, 10)) == utc(2026, 11, 2, 6, 30));
}

// --- follow the clock in the repeated hour: both instances ---

TEST_CASE("Berlin autumn: a schedule that follows the clock runs in both instances of 02:00-02:59") {
    const auto r = cron_in("*/30 * * * *", "Europe/Berlin");
    CHECK(chain(r, utc(2026, 10, 24, 23, 45), 5) ==
          times{utc(2026, 10, 25, 0, 0), utc(2026, 10, 25, 0, 30), utc(2026, 10, 25, 1, 0), utc(2026, 10, 25, 1, 30),
                utc(2026, 10, 25, 2, 0)});
    const auto q = cron_in("30 */1 * * *", "Europe/Berlin");
    CHECK(chain(q, utc(2026, 10, 25, 0), 2) == times{utc(2026, 10, 25, 0, 30), utc(2026, 10, 25, 1, 30)});
    // From inside the first instance, the next is in the second one.
    CHECK(cron_in("30 * * * *", "Europe/Berlin").next_after(utc(2026, 10, 25, 0, 45)) == utc(2026, 10, 25, 1, 30));
    // The local day 2026-10-25 is 25 hours long: 2026-10-24 22:00Z to 2026-10-25 23:00Z.
    CHECK(count_in(cron_in("0 * * * *", "Europe/Berlin"), utc(2026, 10, 24, 22), utc(2026, 10, 25, 23)) == 25);
    CHECK(count_in(cron_in("0 1-23/1 * * *", "Europe/Berlin"), utc(2026, 10, 24, 22), utc(2026, 10, 25, 23)) == 24);
}

TEST_CASE("New York autumn: a schedule that follows the clock runs in both instances of 01:00-01:59") {
    const auto r = cron_in("*/30 * * * *", "America/New_York");
    CHECK(chain(r, utc(2026, 11, 1, 4, 45), 5) ==
          times{utc(2026, 11, 1, 5, 0), utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 6, 0), utc(2026, 11, 1, 6, 30),
                utc(2026, 11, 1, 7, 0)});
    const auto stepped = cron_in("30 1/2 * * *", "America/New_York");  // 01:30, 03:30, ...
    CHECK(chain(stepped, utc(2026, 11, 1, 4), 3) ==
          times{utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 6, 30), utc(2026, 11, 1, 8, 30)});
}

TEST_CASE("a six-field schedule that follows the clock, across Berlin's autumn change") {
    const auto r = cron_in("0 59 * * * *", "Europe/Berlin");
    // 01:59 CEST = 23:59Z, 02:59 CEST = 00:59Z, 02:59 CET = 01:59Z, 03:59 CET = 02:59Z.
    CHECK(chain(r, utc(2026, 10, 24, 23), 4) ==
          times{utc(2026, 10, 24, 23, 59), utc(2026, 10, 25, 0, 59), utc(2026, 10, 25, 1, 59),
                utc(2026, 10, 25, 2, 59)});
}
