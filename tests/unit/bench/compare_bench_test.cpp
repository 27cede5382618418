// compare_bench's pure parts: reading the external contenders' start lines,
// the tally of lateness with censoring, the scenario plans; and the SVG
// writer's bar chart and CDF over a total.
#include "compare_plan.hpp"
#include "lateness_tally.hpp"
#include "svg_plot.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using namespace cbench;

namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string temp_svg(const char* name) {
    return (std::filesystem::temp_directory_path() / (std::string("tarry-unit-compare-") + name + ".svg")).string();
}

/// The widths of the <rect> elements filled with `color`.
std::vector<double> rect_widths(const std::string& svg, const std::string& color) {
    std::vector<double> out;
    const std::regex rect("<rect x=\"[0-9.]+\" y=\"[0-9.]+\" width=\"([0-9.]+)\" height=\"[0-9.]+\" fill=\"" + color + "\"");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it)
        out.push_back(std::stod((*it)[1]));
    return out;
}

}  // namespace

TEST_CASE("a start line: id, start and due time; '-' for none; anything else is not one") {
    const auto s = parse_start_line("run L17 1795723845.154014 1795723845.052445");
    REQUIRE(s);
    CHECK(s->id == "L17");
    CHECK(s->start_s == doctest::Approx(1795723845.154014));
    REQUIRE(s->due_s);
    CHECK(*s->due_s == doctest::Approx(1795723845.052445));
    const auto now = parse_start_line("run T3 12.5 -");
    REQUIRE(now);
    CHECK_FALSE(now->due_s);
    CHECK_FALSE(parse_start_line("ready"));
    CHECK_FALSE(parse_start_line("published 12.0"));
    CHECK_FALSE(parse_start_line("run L1 12.0"));
    CHECK_FALSE(parse_start_line("run L1 twelve 13.0"));
    CHECK_FALSE(parse_start_line("run L1 12.0 soon"));
}

TEST_CASE("the jobs that count: the prefix and an index below the count") {
    const counted_jobs near{"N", 50, 20};
    CHECK(near.counts("N0"));
    CHECK(near.counts("N49"));
    CHECK_FALSE(near.counts("N50"));
    CHECK_FALSE(near.counts("F3"));
    CHECK_FALSE(near.counts("N"));
    CHECK_FALSE(near.counts("N3x"));
}

TEST_CASE("the tally: lateness of jobs started in time; late, missing and duplicate ones apart") {
    const counted_jobs jobs{"L", 5, 10};
    const std::vector<job_start> starts = {
        {"L0", 100.002, 100.0},  // 2 ms late
        {"L1", 99.999, 100.0},   // 1 ms early
        {"L2", 115.0, 104.0},    // 11 s late: past the 10 s grace, not run in time
        {"L0", 100.5, 100.0},    // a duplicate start
        {"F9", 100.1, 100.0},    // does not count
        // L3 and L4 never started
    };
    const auto t = tally_starts(starts, jobs);
    CHECK(t.expected == 5);
    REQUIRE(t.late_ms.size() == 2);
    CHECK(t.late_ms[0] == doctest::Approx(-1.0));  // in start order
    CHECK(t.late_ms[1] == doctest::Approx(2.0));
    CHECK(t.early == 1);
    CHECK(t.not_run == 3);
    CHECK(t.duplicates == 1);
    CHECK(t.started == 3);
    CHECK(t.first_start_s == doctest::Approx(99.999));
    CHECK(t.last_start_s == doctest::Approx(115.0));
}

TEST_CASE("the tally of jobs due now: all started ones count, and their rate") {
    const counted_jobs jobs{"T", 4, 0};
    const auto t = tally_starts({{"T0", 10.0, {}}, {"T1", 10.5, {}}, {"T2", 11.0, {}}}, jobs);
    CHECK(t.late_ms.empty());
    CHECK(t.not_run == 1);
    CHECK(start_rate(t) == doctest::Approx(3.0));
    CHECK(start_rate(tally_starts({{"T0", 10.0, {}}}, jobs)) == 0);
}

TEST_CASE("L's plan: every job once, due within the window, the same for every run") {
    const auto p = lateness_plan(200, std::chrono::seconds(2), std::chrono::seconds(12), 15);
    REQUIRE(p.phases.size() == 1);
    REQUIRE(p.phases[0].size() == 200);
    std::set<std::string> ids;
    bool sorted = true;
    for (std::size_t i = 0; i < p.phases[0].size(); ++i) {
        const auto& j = p.phases[0][i];
        ids.insert(j.id);
        REQUIRE(j.delay);
        CHECK(*j.delay >= std::chrono::seconds(2));
        CHECK(*j.delay <= std::chrono::seconds(12));
        if (i && *j.delay < *p.phases[0][i - 1].delay) sorted = false;
    }
    CHECK(ids.size() == 200);
    CHECK_FALSE(sorted);  // published in random order
    CHECK(p.counted.prefix == "L");
    CHECK(plan_text(p) == plan_text(lateness_plan(200, std::chrono::seconds(2), std::chrono::seconds(12), 15)));
}

TEST_CASE("H's plan and the plan text: far jobs, then the near ones that count") {
    const auto p = head_of_line_plan(3, std::chrono::seconds(90), 20);
    CHECK(p.counted.prefix == "N");
    CHECK(p.counted.count == 50);
    const auto text = plan_text(p);
    CHECK(text.rfind("live\n0 F0 90.000\n0 F1 90.000\n0 F2 90.000\n1 N0 2.000\n", 0) == 0);
    CHECK(plan_text(throughput_plan(2)) == "prefill\n0 T0 -\n0 T1 -\n");
}

TEST_CASE("a run waits for the jobs that count: H's near jobs, not its far ones; none for jobs due now") {
    const auto h = head_of_line_plan(10, std::chrono::seconds(90), 20);
    const auto last = last_counted_due(h, {1000.0, 1005.0});
    REQUIRE(last);
    CHECK(*last == doctest::Approx(1007.0));  // the near phase began at 1005, due 2 s later
    const auto l = lateness_plan(50, std::chrono::seconds(2), std::chrono::seconds(12), 15);
    std::chrono::milliseconds latest{0};
    for (const auto& j : l.phases[0]) latest = std::max(latest, *j.delay);
    CHECK(*last_counted_due(l, {100.0}) == doctest::Approx(100.0 + static_cast<double>(latest.count()) / 1000));
    CHECK_FALSE(last_counted_due(throughput_plan(5), {100.0}));
    CHECK_FALSE(last_counted_due(h, {}));  // nothing published yet
}

TEST_CASE("a CDF over a total larger than the sample stops below 1") {
    const auto all = svg::cdf({1, 2, 3, 4}, 10);
    CHECK(all.back().second == doctest::Approx(1.0));
    const auto part = svg::cdf({1, 2, 3, 4}, 10, 8);
    CHECK(part.back().second == doctest::Approx(0.5));
    CHECK(part.front().second == doctest::Approx(0.125));
    CHECK(svg::cdf({}, 10, 8).empty());
}

TEST_CASE("a bar chart: one bar a value, lengths in proportion, whiskers and values written") {
    svg::bar_chart c;
    c.title = "T & co";
    c.value = {"jobs/s", false, {}, {}};
    c.unit = "jobs/s";
    c.bars = {{"fast", 40000, "#111111", std::pair{38000.0, 41000.0}},
              {"slow", 10000, "#222222", std::nullopt},
              {"zero", 0, "#333333", std::nullopt}};
    const auto path = temp_svg("bars");
    REQUIRE(svg::write(path, c));
    const auto svg = read_file(path);
    std::filesystem::remove(path);
    const auto fast = rect_widths(svg, "#111111"), slow = rect_widths(svg, "#222222"), zero = rect_widths(svg, "#333333");
    REQUIRE(fast.size() == 1);
    REQUIRE(slow.size() == 1);
    REQUIRE(zero.size() == 1);
    CHECK(fast[0] / slow[0] == doctest::Approx(4.0).epsilon(0.01));  // linear, from 0
    CHECK(zero[0] == doctest::Approx(0.0));
    CHECK(svg.find("40000 jobs/s") != std::string::npos);
    CHECK(svg.find("10000 jobs/s") != std::string::npos);
    CHECK(svg.find(">fast<") != std::string::npos);
    CHECK(svg.find("T &amp; co") != std::string::npos);
    CHECK(svg.find("v10") != std::string::npos);  // the whisker's end ticks
}

TEST_CASE("a bar chart on a log scale: each decade the same length") {
    svg::bar_chart c;
    c.value = {"jobs/s", true, 10.0, 100000.0};
    c.bars = {{"a", 100, "#111111", std::nullopt}, {"b", 10000, "#222222", std::nullopt}};
    const auto path = temp_svg("log-bars");
    REQUIRE(svg::write(path, c));
    const auto svg = read_file(path);
    std::filesystem::remove(path);
    const auto a = rect_widths(svg, "#111111"), b = rect_widths(svg, "#222222");
    REQUIRE(a.size() == 1);
    REQUIRE(b.size() == 1);
    CHECK(b[0] / a[0] == doctest::Approx(3.0).epsilon(0.01));  // 3 decades above 10 against 1
}

TEST_CASE("a figure's legend goes top left inside the plot, or below it in a taller picture") {
    svg::figure f;
    f.x = {"x", false, 0.0, 10.0};
    f.y = {"y", false, 0.0, 1.0};
    f.data = {{"a line", "#123456", {{0, 0}, {10, 1}}, true}, {"another", "#654321", {{0, 1}, {10, 0}}, true}};
    struct layout {
        double legend_y, height;
    };
    const auto draw = [&] {
        const auto path = temp_svg("legend");
        REQUIRE(svg::write(path, f));
        const auto svg = read_file(path);
        std::filesystem::remove(path);
        std::smatch key, size;
        REQUIRE(std::regex_search(
            svg, key, std::regex("<rect x=\"[0-9.]+\" y=\"([0-9.]+)\" width=\"10\" height=\"10\" fill=\"#654321\"")));
        REQUIRE(std::regex_search(svg, size, std::regex("<svg [^>]*height=\"([0-9.]+)\"")));
        return layout{std::stod(key[1]), std::stod(size[1])};
    };
    const auto inside = draw();
    f.legend = svg::legend_corner::below;
    const auto under = draw();
    CHECK(inside.legend_y < 100);
    CHECK(under.height == doctest::Approx(inside.height + 8 + 2 * 16));
    CHECK(under.legend_y > inside.height);  // under the x axis's label
    CHECK(under.legend_y < under.height);
}

TEST_CASE("a bar chart that cannot be written says so") {
    svg::bar_chart c;
    CHECK_FALSE(svg::write("/nonexistent-dir/x.svg", c));
}
