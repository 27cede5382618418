// The soak's analysis: reading echo_worker's events and the publisher's
// log, lateness percentiles per interval, the flat criteria, and the
// ledger that finds lost, early and extra runs.
#include "soak_events.hpp"
#include "soak_ledger.hpp"
#include "soak_table.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

constexpr soak::micros second = 1'000'000;
constexpr soak::micros t0 = 1'767'225'600 * second;

soak::worker_event run(std::uint64_t job, soak::micros due, soak::micros at, std::uint32_t attempt = 1) {
    return {"run", job, due, at, attempt};
}

soak::worker_event event(std::string what, std::uint64_t job, soak::micros at) {
    return {std::move(what), job, at, at, 1};
}

/// `n` rows of a minute each, with the given p99 and RSS per row (p99: 100
/// runs of lateness 0.01 ms .. p99 in the row's 99th place).
std::vector<soak::interval_row> rows_of(const std::vector<double>& p99, const std::vector<long>& rss) {
    std::vector<soak::interval_row> rows;
    for (std::size_t i = 0; i < p99.size(); ++i) {
        soak::interval_row r;
        r.index = i + 1;
        r.runs = 100;
        r.p99_ms = p99[i];
        r.rss_kb = rss[i];
        rows.push_back(r);
    }
    return rows;
}

}  // namespace

TEST_CASE("an echo_worker event line is read to the microsecond; other lines are not events") {
    const auto e = soak::read_event(
        R"({"event":"retry","id":"soak-42","due":1767225600.000250,"at":1767225600.5,"attempt":2,"reason":"x","next_due":1767225601.000000})");
    REQUIRE(e);
    CHECK(e->event == "retry");
    CHECK(e->job == 42);
    CHECK(e->due == t0 + 250);
    CHECK(e->at == t0 + 500'000);
    CHECK(e->attempt == 2);
    CHECK_FALSE(soak::read_event(R"({"event":"ready","queue":"soak"})"));
    CHECK_FALSE(soak::read_event(R"({"event":"run","id":"soak-1","due":1767225600.0,"at":17672)"));
    CHECK_FALSE(soak::read_event(""));
    const auto foreign = soak::read_event(R"({"event":"run","id":"other","due":1.0,"at":2.0,"attempt":1})");
    REQUIRE(foreign);
    CHECK_FALSE(foreign->job);
}

TEST_CASE("a published line round-trips, and ids are soak-<n>") {
    const soak::published_job j{7, t0 + 123'456, 2};
    CHECK(soak::published_line(j) == "7 1767225600.123456 2");
    const auto back = soak::read_published(soak::published_line(j));
    REQUIRE(back);
    CHECK(back->number == 7);
    CHECK(back->due == j.due);
    CHECK(back->fails == 2);
    CHECK_FALSE(soak::read_published("7 1767225600.1234567 2"));
    CHECK(soak::job_number(soak::job_id(99)) == 99);
    CHECK_FALSE(soak::job_number("soak-"));
    CHECK_FALSE(soak::job_number("soak-1x"));
}

TEST_CASE("nearest rank: p50 and p99 of 1..100 are 50 and 99; of one value, that value") {
    std::vector<double> v;
    for (int i = 100; i >= 1; --i) v.push_back(i);
    CHECK(soak::nearest_rank(v, 0.50) == 50);
    CHECK(soak::nearest_rank(v, 0.99) == 99);
    CHECK(soak::nearest_rank(v, 1.0) == 100);
    CHECK(soak::nearest_rank({3.5}, 0.99) == 3.5);
    CHECK(soak::nearest_rank({}, 0.99) == 0);
}

TEST_CASE("runs count in the interval they started in; RSS samples go to the row they end") {
    soak::interval_table table(t0, 60 * second, 3);
    // Row 1: lateness 1..100 ms; row 2: one run 5 ms late; row 3: none.
    for (int i = 1; i <= 100; ++i) table.add(run(0, t0 + 10 * second, t0 + 10 * second + i * 1000));
    table.add(run(1, t0 + 60 * second, t0 + 60 * second + 5000));
    table.add(event("retry", 2, t0 + 61 * second));
    table.add(event("parked", 3, t0 + 119 * second));
    table.add(event("dead", 4, t0 + 150 * second));
    table.add(run(5, t0 - second, t0 - second));            // before the start: left out
    table.add(run(6, t0 + 180 * second, t0 + 180 * second));  // after the last row: left out
    table.add(soak::rss_sample{t0 + 60 * second + 300'000, 1000, 0.5});
    table.add(soak::rss_sample{t0 + 120 * second - 200'000, 1100, 0.7});
    table.add(soak::rss_sample{t0 + 10 * second, 9999, 0});  // nearest row end 0: no row
    const auto rows = table.rows();
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].runs == 100);
    CHECK(rows[0].p50_ms == doctest::Approx(50));
    CHECK(rows[0].p99_ms == doctest::Approx(99));
    CHECK(rows[0].max_ms == doctest::Approx(100));
    CHECK(rows[0].rss_kb == 1000);
    CHECK(rows[1].runs == 1);
    CHECK(rows[1].p99_ms == doctest::Approx(5));
    CHECK(rows[1].retries == 1);
    CHECK(rows[1].parked == 1);
    CHECK(rows[1].rss_kb == 1100);
    CHECK(rows[1].load1 == 0.7);
    CHECK(rows[2].runs == 0);
    CHECK(rows[2].dead == 1);
    CHECK_FALSE(rows[2].rss_kb);
}

TEST_CASE("flat: RSS at the end within 1.1 x its value at the end of the first sixth") {
    std::vector<double> p99(12, 1.0);
    std::vector<long> rss(12, 1000);
    rss[1] = 1000;  // the baseline: row 2 of 12
    rss[11] = 1100;
    CHECK(soak::judge(rows_of(p99, rss)).rss_flat);
    rss[11] = 1101;
    const auto f = soak::judge(rows_of(p99, rss));
    CHECK(f.baseline_rows == 2);
    CHECK(f.rss_baseline_kb == 1000);
    CHECK(f.rss_last_kb == 1101);
    CHECK_FALSE(f.rss_flat);
    auto rows = rows_of(p99, rss);
    rows.back().rss_kb.reset();
    CHECK_FALSE(soak::judge(rows).rss_flat);
}

TEST_CASE("flat: every row's p99 within 2 x the median p99 of the baseline rows") {
    // 60 rows: the baseline is rows 1-10, whose p99s have median (1.0 + 1.2) / 2.
    std::vector<double> p99 = {0.8, 5.0, 1.0, 1.2, 1.4, 0.9, 1.3, 1.1, 0.7, 1.5};
    p99.resize(60, 2.2);
    std::vector<long> rss(60, 1000);
    auto f = soak::judge(rows_of(p99, rss));
    CHECK(f.baseline_rows == 10);
    CHECK(f.p99_baseline_ms == doctest::Approx(1.15));
    CHECK(f.p99_limit_ms == doctest::Approx(2.3));
    // Row 2 (5 ms) is above the limit too: the baseline rows are judged as well.
    CHECK(f.rows_over == std::vector<std::size_t>{2});
    CHECK_FALSE(f.p99_flat);
    p99[1] = 1.0;  // now the median is (1.0 + 1.1) / 2: rows 11-60 (2.2 ms) are all above 2.1 ms
    f = soak::judge(rows_of(p99, rss));
    CHECK(f.p99_baseline_ms == doctest::Approx(1.05));
    REQUIRE(f.rows_over.size() == 50);
    CHECK(f.rows_over.front() == 11);
    CHECK(f.rows_over.back() == 60);
    std::fill(p99.begin() + 10, p99.end(), 2.09);
    CHECK(soak::judge(rows_of(p99, rss)).p99_flat);
    auto rows = rows_of(p99, rss);
    rows[30].runs = 0;  // a row without runs: the worker stalled
    rows[30].p99_ms = 0;
    f = soak::judge(rows);
    CHECK(f.rows_over == std::vector<std::size_t>{31});
    CHECK_FALSE(f.p99_flat);
}

TEST_CASE("ledger: each job succeeds or dies as meant, none lost, early or run more than meant") {
    soak::ledger book(3);
    book.publish({0, t0, 0});     // succeeds at once
    book.publish({1, t0, 1});     // fails once, then succeeds
    book.publish({2, t0, 1000});  // dead after 3 runs
    book.add(run(0, t0, t0 + 100));
    book.add(event("succeeded", 0, t0 + 200));
    book.add(run(1, t0, t0 + 100));
    book.add(event("retry", 1, t0 + 200));
    book.add(run(1, t0 + second, t0 + second, 2));
    book.add(event("succeeded", 1, t0 + second));
    for (std::uint32_t a = 1; a <= 3; ++a) book.add(run(2, t0 + (a - 1) * second, t0 + a * second, a));
    book.add(event("dead", 2, t0 + 3 * second));
    auto r = book.result();
    CHECK(r.published == 3);
    CHECK(r.succeeded == 2);
    CHECK(r.dead_as_meant == 1);
    CHECK(r.runs == 6);
    CHECK(r.clean());

    SUBCASE("a job never settled is lost") {
        book.publish({3, t0, 0});
        book.add(run(3, t0, t0));
        r = book.result();
        CHECK(r.lost == 1);
        CHECK_FALSE(r.clean());
    }
    SUBCASE("a run before its due time is early") {
        book.add(run(0, t0 + 10, t0 + 9));
        r = book.result();
        CHECK(r.early == 1);
        CHECK(r.extra_runs == 1);
        CHECK_FALSE(r.clean());
    }
    SUBCASE("a job meant to succeed that is dead-lettered ended otherwise than meant") {
        book.publish({3, t0, 2});
        book.add(event("dead", 3, t0));
        CHECK(book.result().wrong_end == 1);
    }
    SUBCASE("a first run whose due is not the published one, beyond 1 µs") {
        book.publish({3, t0, 0});
        book.add(run(3, t0 + 1, t0 + 5));
        book.add(event("succeeded", 3, t0 + 5));
        CHECK(book.result().clean());
        book.publish({4, t0, 0});
        book.add(run(4, t0 + 2, t0 + 5));
        book.add(event("succeeded", 4, t0 + 5));
        CHECK(book.result().due_changed == 1);
    }
    SUBCASE("an event of a job never published") {
        book.add(event("succeeded", 77, t0));
        CHECK(book.result().unknown == 1);
        CHECK_FALSE(book.result().clean());
    }
}
