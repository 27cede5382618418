// parse_cron: the syntax it accepts and refuses, the text it keeps, and
// which civil times a parsed expression matches. Weekdays of the dates
// used here: 2026-01-01 is a Thursday, 2026-01-02 and 2026-02-13 are
// Fridays, 2026-03-29 is a Sunday (checked with `date -u -d ... +%A`).
#include "periodic_test.hpp"

#include "tarry/periodic/cron_expression.hpp"
#include "tarry/periodic/error.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

namespace periodic = tarry::periodic;
using periodic::errc;
using periodic::parse_cron;
using periodic_test::civil;
using periodic_test::cron;

namespace {

void check_refused(const std::string& text) {
    CAPTURE(text);
    const auto r = parse_cron(text);
    CHECK_FALSE(r.expression.has_value());
    CHECK(r.error == errc::invalid_cron);
    CHECK_FALSE(r.detail.empty());
}

void check_accepted(const std::string& text) {
    CAPTURE(text);
    const auto r = parse_cron(text);
    INFO("detail: ", r.detail);
    CHECK(r.expression.has_value());
    CHECK_FALSE(r.error);
}

// The 6-field expression with `value` in field `index` (0 = seconds ..
// 5 = weekday) and `*` elsewhere.
std::string six_with(int index, const std::string& value) {
    std::string out;
    for (int i = 0; i < 6; ++i) {
        if (i) out += ' ';
        out += i == index ? value : "*";
    }
    return out;
}

// The 5-field expression with `value` in field `index` (0 = minutes ..
// 4 = weekday) and `*` elsewhere.
std::string five_with(int index, const std::string& value) {
    std::string out;
    for (int i = 0; i < 5; ++i) {
        if (i) out += ' ';
        out += i == index ? value : "*";
    }
    return out;
}

// The minutes 0..59 at which `e` matches on 2026-01-01 at 00:mm:00.
std::set<int> matching_minutes(const periodic::cron_expression& e) {
    std::set<int> out;
    for (int m = 0; m < 60; ++m)
        if (e.matches(civil(2026, 1, 1, 0, m))) out.insert(m);
    return out;
}

}  // namespace

TEST_CASE("every field accepts its bounds and refuses one past either end") {
    struct bounds {
        int lo, hi;
    };
    // seconds, minutes, hours, day of month, month, weekday (7 is Sunday).
    const bounds six[] = {{0, 59}, {0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 7}};
    for (int i = 0; i < 6; ++i) {
        CAPTURE(i);
        check_accepted(six_with(i, std::to_string(six[i].lo)));
        check_accepted(six_with(i, std::to_string(six[i].hi)));
        check_refused(six_with(i, std::to_string(six[i].lo - 1)));
        check_refused(six_with(i, std::to_string(six[i].hi + 1)));
        check_accepted(six_with(i, std::to_string(six[i].lo) + "-" + std::to_string(six[i].hi)));
        check_refused(six_with(i, std::to_string(six[i].lo) + "-" + std::to_string(six[i].hi + 1)));
    }
    for (int i = 0; i < 5; ++i) {
        CAPTURE(i);
        const bounds b = six[i + 1];
        check_accepted(five_with(i, std::to_string(b.lo)));
        check_accepted(five_with(i, std::to_string(b.hi)));
        check_refused(five_with(i, std::to_string(b.lo - 1)));
        check_refused(five_with(i, std::to_string(b.hi + 1)));
    }
}

TEST_CASE("an out-of-range value is refused with a detail naming the field and the token") {
    const auto r = parse_cron("0 25 * * *");
    REQUIRE_FALSE(r.expression.has_value());
    CHECK(r.error == errc::invalid_cron);
    CHECK(r.detail.find("hour") != std::string::npos);
    CHECK(r.detail.find("25") != std::string::npos);

    const auto m = parse_cron("0 0 * 13 *");
    REQUIRE_FALSE(m.expression.has_value());
    CHECK(m.detail.find("13") != std::string::npos);

    const auto w = parse_cron("0 0 * * FOO");
    REQUIRE_FALSE(w.expression.has_value());
    CHECK(w.detail.find("FOO") != std::string::npos);
}

TEST_CASE("the errors are of the category tarry.periodic") {
    CHECK(std::string(periodic::periodic_category().name()) == "tarry.periodic");
    const std::error_code e = errc::invalid_cron;
    CHECK(e.category() == periodic::periodic_category());
    CHECK(e.value() == 1);
    CHECK_FALSE(e.message().empty());
    CHECK_FALSE(std::error_code(errc::unknown_time_zone).message().empty());
    CHECK_FALSE(std::error_code(errc::invalid_schedule).message().empty());
    CHECK(std::error_code(errc::invalid_schedule) != std::error_code(errc::invalid_cron));
}

TEST_CASE("a reversed range or a step of 0 is refused") {
    for (const std::string text : {"5-1 * * * *", "0 23-1 * * *", "0 0 31-1 * *", "0 0 * 12-1 *", "0 0 * DEC-JAN *",
                             "0 0 * * 5-1", "0 0 * * FRI-MON", "0 0 * * 7-1", "59-0 0 0 * * *", "*/0 * * * *",
                             "0-59/0 * * * *", "5/0 * * * *", "0 */0 * * *", "0 0 * * */0", "0/0 0 0 * * *"})
        check_refused(text);
}

TEST_CASE("steps: */n, a-b/n and a/n, which runs from a to the field's end") {
    CHECK(matching_minutes(cron("*/15 * * * *")) == std::set<int>{0, 15, 30, 45});
    CHECK(matching_minutes(cron("10-30/10 * * * *")) == std::set<int>{10, 20, 30});
    CHECK(matching_minutes(cron("10-31/10 * * * *")) == std::set<int>{10, 20, 30});
    CHECK(matching_minutes(cron("5/20 * * * *")) == std::set<int>{5, 25, 45});
    CHECK(matching_minutes(cron("*/1 * * * *")).size() == 60);

    const auto h = cron("0 3/8 * * *");  // 3, 11, 19
    for (int hour = 0; hour < 24; ++hour) {
        CAPTURE(hour);
        CHECK(h.matches(civil(2026, 1, 1, hour, 0)) == (hour == 3 || hour == 11 || hour == 19));
    }
    const auto d = cron("0 0 10/10 * *");  // 10, 20, 30
    for (unsigned day = 1; day <= 31; ++day) {
        CAPTURE(day);
        CHECK(d.matches(civil(2026, 1, day)) == (day == 10 || day == 20 || day == 30));
    }
    const auto mo = cron("0 0 1 2/3 *");  // 2, 5, 8, 11
    for (unsigned month = 1; month <= 12; ++month) {
        CAPTURE(month);
        CHECK(mo.matches(civil(2026, month, 1)) == (month == 2 || month == 5 || month == 8 || month == 11));
    }
    // 2026-01-04 is a Sunday (0); weekdays 1, 3, 5 are 01-05, 01-07, 01-09.
    const auto w = cron("0 0 * * 1-5/2");
    for (unsigned day = 4; day <= 10; ++day) {
        CAPTURE(day);
        CHECK(w.matches(civil(2026, 1, day)) == (day == 5 || day == 7 || day == 9));
    }
    const auto s = cron("*/20 0 0 * * *");
    CHECK(s.matches(civil(2026, 1, 1, 0, 0, 0)));
    CHECK(s.matches(civil(2026, 1, 1, 0, 0, 20)));
    CHECK(s.matches(civil(2026, 1, 1, 0, 0, 40)));
    CHECK_FALSE(s.matches(civil(2026, 1, 1, 0, 0, 10)));
}

TEST_CASE("a list mixes values, ranges and steps") {
    CHECK(matching_minutes(cron("5,10-12,20-40/10,50/5 * * * *")) ==
          std::set<int>{5, 10, 11, 12, 20, 30, 40, 50, 55});
    CHECK(matching_minutes(cron("*/30,7 * * * *")) == std::set<int>{0, 7, 30});
    CHECK(matching_minutes(cron("59,0 * * * *")) == std::set<int>{0, 59});
    CHECK(matching_minutes(cron("3,3,3 * * * *")) == std::set<int>{3});
    const auto m = cron("0 0 1 JAN,mar-May,10/2 *");  // 1, 3, 4, 5, 10, 12
    for (unsigned month = 1; month <= 12; ++month) {
        CAPTURE(month);
        CHECK(m.matches(civil(2026, month, 1)) ==
              (month == 1 || (month >= 3 && month <= 5) || month == 10 || month == 12));
    }
}

TEST_CASE("month and weekday names are read in any case") {
    for (const std::string text : {"0 0 1 mar *", "0 0 1 Mar *", "0 0 1 MAR *", "0 0 1 mAr *"}) {
        CAPTURE(text);
        const auto e = cron(text);
        CHECK(e.matches(civil(2026, 3, 1)));
        CHECK_FALSE(e.matches(civil(2026, 4, 1)));
    }
    const char* months[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
    for (unsigned i = 0; i < 12; ++i) {
        INFO("month ", std::string(months[i]));
        const auto e = cron(std::string("0 0 1 ") + months[i] + " *");
        for (unsigned month = 1; month <= 12; ++month) CHECK(e.matches(civil(2026, month, 1)) == (month == i + 1));
    }
    // 2026-01-04 is a Sunday, so 2026-01-(4 + i) is weekday i.
    const char* days[] = {"sun", "MON", "Tue", "wED", "thu", "Fri", "SAT"};
    for (unsigned i = 0; i < 7; ++i) {
        INFO("weekday ", std::string(days[i]));
        const auto e = cron(std::string("0 0 * * ") + days[i]);
        for (unsigned d = 0; d < 7; ++d) CHECK(e.matches(civil(2026, 1, 4 + d)) == (d == i));
    }
    const auto r = cron("0 0 * * mon-FRI");
    CHECK_FALSE(r.matches(civil(2026, 1, 4)));
    CHECK(r.matches(civil(2026, 1, 5)));
    CHECK(r.matches(civil(2026, 1, 9)));
    CHECK_FALSE(r.matches(civil(2026, 1, 10)));
    const auto q = cron("0 0 1 JAN-DEC/3 *");  // 1, 4, 7, 10
    CHECK(q.matches(civil(2026, 4, 1)));
    CHECK_FALSE(q.matches(civil(2026, 5, 1)));
}

TEST_CASE("an unknown name, or a name in the wrong field, is refused") {
    for (const std::string text : {"0 0 * * FOO", "0 0 * FOO *", "0 0 * * JAN", "0 0 * MON *", "0 0 * JANUARY *",
                             "0 0 * * MONDAY", "JAN 0 * * *", "0 MON * * *", "0 0 MON * *"})
        check_refused(text);
}

TEST_CASE("weekday 7 is Sunday, like 0 and SUN") {
    for (const std::string text : {"0 0 * * 0", "0 0 * * 7", "0 0 * * SUN", "0 0 * * 6-7", "0 0 * * 5,7"}) {
        CAPTURE(text);
        const auto e = cron(text);
        CHECK(e.matches(civil(2026, 3, 29)));       // a Sunday
        CHECK_FALSE(e.matches(civil(2026, 3, 30)));  // a Monday
    }
    const auto r = cron("0 0 * * 5-7");
    CHECK(r.matches(civil(2026, 3, 27)));  // Friday
    CHECK(r.matches(civil(2026, 3, 28)));  // Saturday
    CHECK(r.matches(civil(2026, 3, 29)));  // Sunday
    CHECK_FALSE(r.matches(civil(2026, 3, 26)));
}

TEST_CASE("every macro stands for its expression") {
    for (const std::string text : {"@yearly", "@annually"}) {
        CAPTURE(text);
        const auto e = cron(text);
        CHECK(e.matches(civil(2026, 1, 1)));
        CHECK_FALSE(e.matches(civil(2026, 2, 1)));
        CHECK_FALSE(e.matches(civil(2026, 1, 2)));
        CHECK_FALSE(e.matches(civil(2026, 1, 1, 0, 0, 1)));
        CHECK_FALSE(e.follows_clock());
    }
    const auto monthly = cron("@monthly");
    CHECK(monthly.matches(civil(2026, 2, 1)));
    CHECK(monthly.matches(civil(2026, 12, 1)));
    CHECK_FALSE(monthly.matches(civil(2026, 2, 2)));
    CHECK_FALSE(monthly.matches(civil(2026, 2, 1, 1)));
    CHECK_FALSE(monthly.follows_clock());
    const auto weekly = cron("@weekly");  // Sundays at midnight
    CHECK(weekly.matches(civil(2026, 3, 29)));
    CHECK_FALSE(weekly.matches(civil(2026, 3, 30)));
    CHECK_FALSE(weekly.matches(civil(2026, 3, 29, 0, 1)));
    CHECK_FALSE(weekly.follows_clock());
    for (const std::string text : {"@daily", "@midnight"}) {
        CAPTURE(text);
        const auto e = cron(text);
        CHECK(e.matches(civil(2026, 3, 29)));
        CHECK(e.matches(civil(2026, 7, 14)));
        CHECK_FALSE(e.matches(civil(2026, 7, 14, 1)));
        CHECK_FALSE(e.matches(civil(2026, 7, 14, 0, 1)));
        CHECK_FALSE(e.follows_clock());
    }
    const auto hourly = cron("@hourly");
    CHECK(hourly.matches(civil(2026, 7, 14, 0)));
    CHECK(hourly.matches(civil(2026, 7, 14, 13)));
    CHECK_FALSE(hourly.matches(civil(2026, 7, 14, 13, 1)));
    CHECK_FALSE(hourly.matches(civil(2026, 7, 14, 13, 0, 1)));
    CHECK(hourly.follows_clock());
}

TEST_CASE("an unknown macro is refused") {
    for (const std::string text : {"@reboot", "@every", "@", "@hourly *", "@daily 0", "@ daily", "@weekly2"})
        check_refused(text);
}

TEST_CASE("a wrong field count, empty text and junk are refused") {
    for (const std::string text :
         {"", " ", "\t", "*", "* * * *", "0 0 * *", "* * * * * * *", "0 0 0 0 * * *", "0 0 * * * #", "a * * * *",
          "1,,2 * * * *", ",1 * * * *", "1, * * * *", "1- * * * *", "-1 * * * *", "1-2-3 * * * *", "*/ * * * *",
          "/5 * * * *", "5/ * * * *", "*/5/2 * * * *", "1.5 * * * *", "+1 * * * *", "0x1 * * * *", "** * * * *",
          "*5 * * * *", "0 0 * * 1;2", "0,0 0 * * *x", "0 0 ? * *", "0 0 L * *", "0 0 * * 5#2"})
        check_refused(text);
}

TEST_CASE("blanks and tabs between fields collapse to one space in text()") {
    CHECK(cron("0 3 * * *").text() == "0 3 * * *");
    CHECK(cron("0   3\t* *\t\t*").text() == "0 3 * * *");
    CHECK(cron("15 0 3 * * *").text() == "15 0 3 * * *");
    CHECK(cron("0 0 1 Jan *").text() == "0 0 1 Jan *");
    CHECK(cron("@daily").text() == "@daily");
    const auto e = cron("0\t3 * *  *");
    CHECK(e.matches(civil(2026, 1, 1, 3)));
    CHECK_FALSE(e.matches(civil(2026, 1, 1, 0, 3)));
}

TEST_CASE("blanks before the first and after the last field are not kept in text()") {
    // The header says the text is kept "blanks collapsed to single spaces";
    // fields separated by one space, nothing around them, is read here.
    CHECK(cron("  0 3 * * *").text() == "0 3 * * *");
    CHECK(cron("0 3 * * *\t ").text() == "0 3 * * *");
}

TEST_CASE("an expression that matches no day at all is refused; one that matches some day is not") {
    for (const std::string text : {"0 0 30 2 *", "0 0 31 2 *", "0 0 30,31 2 *", "0 0 31 4,6,9,11 *", "0 0 31 2,4 *",
                             "0 0 30-31 FEB *", "0 0 0 31 apr *"})
        check_refused(text);
    // Feb 29 exists in leap years; every month but five has a 31st; with
    // both day fields restricted, any Monday of February matches.
    for (const std::string text : {"0 0 29 2 *", "0 0 31 * *", "0 0 29-31 2 *", "0 0 31 4,5 *", "0 0 30 2 MON",
                             "0 0 31 4,6,9,11 1", "0 0 30 1-2 *"})
        check_accepted(text);
}

TEST_CASE("a five-field expression matches only second 0; a six-field one reads seconds first") {
    const auto e = cron("30 2 * * *");
    CHECK(e.matches(civil(2026, 3, 29, 2, 30)));
    CHECK(e.matches(civil(2028, 2, 29, 2, 30)));
    CHECK_FALSE(e.matches(civil(2026, 3, 29, 2, 30, 1)));
    CHECK_FALSE(e.matches(civil(2026, 3, 29, 2, 31)));
    CHECK_FALSE(e.matches(civil(2026, 3, 29, 3, 30)));
    const auto s = cron("15 30 2 * * *");
    CHECK(s.matches(civil(2026, 3, 29, 2, 30, 15)));
    CHECK_FALSE(s.matches(civil(2026, 3, 29, 2, 30, 0)));
    CHECK_FALSE(s.matches(civil(2026, 3, 29, 2, 15, 30)));
}

TEST_CASE("restricted day of month and day of week: a day matches if either does") {
    // 2026-01-02 and 2026-01-09 are Fridays; 2026-01-13 is a Tuesday;
    // 2026-02-13 is a Friday.
    const auto e = cron("0 0 13 * FRI");
    CHECK(e.matches(civil(2026, 1, 2)));
    CHECK(e.matches(civil(2026, 1, 9)));
    CHECK(e.matches(civil(2026, 1, 13)));
    CHECK(e.matches(civil(2026, 2, 13)));
    CHECK_FALSE(e.matches(civil(2026, 1, 14)));
    CHECK_FALSE(e.matches(civil(2026, 1, 13, 0, 1)));
    const auto dom_only = cron("0 0 13 * *");
    CHECK(dom_only.matches(civil(2026, 1, 13)));
    CHECK_FALSE(dom_only.matches(civil(2026, 1, 2)));
    const auto dow_only = cron("0 0 * * FRI");
    CHECK(dow_only.matches(civil(2026, 1, 2)));
    CHECK_FALSE(dow_only.matches(civil(2026, 1, 13)));
    // The month still has to match.
    const auto in_march = cron("0 0 13 3 FRI");
    CHECK(in_march.matches(civil(2026, 3, 6)));   // a Friday in March
    CHECK(in_march.matches(civil(2026, 3, 13)));
    CHECK_FALSE(in_march.matches(civil(2026, 1, 2)));
    CHECK_FALSE(in_march.matches(civil(2026, 1, 13)));
}

TEST_CASE("a day field starting with * leaves the other one alone: both must match") {
    // Day of month */2 is 1, 3, 5, ...: 2026-01-09 (Friday, odd) matches,
    // 2026-01-02 (Friday, even) and 2026-01-13 (Tuesday, odd) do not.
    const auto e = cron("0 0 */2 * FRI");
    CHECK(e.matches(civil(2026, 1, 9)));
    CHECK_FALSE(e.matches(civil(2026, 1, 2)));
    CHECK_FALSE(e.matches(civil(2026, 1, 13)));
    // Weekday */2 is Sunday, Tuesday, Thursday, Saturday: 2026-01-13
    // (Tuesday) matches, 2026-02-13 (Friday) does not, nor 2026-01-15
    // (Thursday, not the 13th).
    const auto w = cron("0 0 13 * */2");
    CHECK(w.matches(civil(2026, 1, 13)));
    CHECK_FALSE(w.matches(civil(2026, 2, 13)));
    CHECK_FALSE(w.matches(civil(2026, 1, 15)));
}

TEST_CASE("follows_clock: an hour field of * or with a step follows the clock, any other does not") {
    for (const std::string text : {"0 * * * *", "* * * * *", "0 */2 * * *", "0 */1 * * *", "0 1-23/2 * * *", "0 5/6 * * *",
                             "0 0 * * * *", "30 */3 * * *"}) {
        CAPTURE(text);
        CHECK(cron(text).follows_clock());
    }
    for (const std::string text : {"0 2 * * *", "0 1-3 * * *", "0 1,2,3 * * *", "0 0-23 * * *", "* 2 * * *",
                             "0 0 3 * * *", "*/5 2 * * *"}) {
        CAPTURE(text);
        CHECK_FALSE(cron(text).follows_clock());
    }
}

TEST_CASE("follows_clock: an hour list with a step in one of its items has a step") {
    // "has a step" is read as: any item of the hour field has one.
    CHECK(cron("0 1,*/6 * * *").follows_clock());
    CHECK(cron("0 1,2-10/4 * * *").follows_clock());
}

TEST_CASE("first_match: the first matching civil time in [from, before)") {
    const auto e = cron("30 2 * * *");
    CHECK(e.first_match(civil(2026, 3, 29), civil(2026, 3, 30)) == civil(2026, 3, 29, 2, 30));
    CHECK(e.first_match(civil(2026, 3, 29, 2, 30), civil(2026, 3, 30)) == civil(2026, 3, 29, 2, 30));
    CHECK(e.first_match(civil(2026, 3, 29, 2, 30, 1), civil(2026, 4, 1)) == civil(2026, 3, 30, 2, 30));
    CHECK_FALSE(e.first_match(civil(2026, 3, 29), civil(2026, 3, 29, 2, 30)).has_value());
    CHECK_FALSE(e.first_match(civil(2026, 3, 29), civil(2026, 3, 29)).has_value());
    CHECK(cron("0 0 29 2 *").first_match(civil(2026, 1, 1), civil(2030, 1, 1)) == civil(2028, 2, 29));
    CHECK(cron("0 0 31 * *").first_match(civil(2026, 4, 1), civil(2027, 1, 1)) == civil(2026, 5, 31));
    CHECK(cron("*/20 * * * * *").first_match(civil(2026, 1, 1, 0, 0, 1), civil(2026, 1, 2)) ==
          civil(2026, 1, 1, 0, 0, 20));
    CHECK(cron("59 59 23 31 12 *").first_match(civil(2026, 1, 1), civil(2027, 1, 1)) ==
          civil(2026, 12, 31, 23, 59, 59));
    CHECK_FALSE(cron("59 59 23 31 12 *").first_match(civil(2026, 1, 1), civil(2026, 12, 31, 23, 59, 59)).has_value());
}

TEST_CASE("first_match finds a day years away") {
    // 2100 is no leap year: the Feb 29 after 2096's is 2104's.
    CHECK(cron("0 0 29 2 *").first_match(civil(2096, 3, 1), civil(2200, 1, 1)) == civil(2104, 2, 29));
    CHECK(cron("0 0 29 2 *").first_match(civil(2028, 2, 29, 0, 0, 1), civil(2200, 1, 1)) == civil(2032, 2, 29));
    CHECK_FALSE(cron("0 0 29 2 *").first_match(civil(2097, 1, 1), civil(2104, 2, 29)).has_value());
}
