// The status page: its data- attributes match the snapshot it was given,
// every text from a message is HTML-escaped, the charts are there (a line
// per known run of samples, a bar per bucket), nothing is loaded from
// elsewhere; status_history keeps the latest samples in order.
#include "http_test_support.hpp"
#include "status_page.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace tarry::http_detail;
using namespace std::chrono_literals;
using http_test::at;
using http_test::busy_consumer;
using http_test::count_of;

namespace {

// The value of the first data-<name>="..." attribute; nothing when absent.
std::optional<std::string> data(const std::string& page, std::string_view name) {
    const std::string key = "data-" + std::string(name) + "=\"";
    const std::size_t start = page.find(key);
    if (start == std::string::npos) return std::nullopt;
    const std::size_t from = start + key.size();
    return page.substr(from, page.find('"', from) - from);
}

status_history history_of(std::initializer_list<std::pair<std::size_t, std::optional<std::uint64_t>>> samples) {
    status_history h(100);
    auto t = at(-10min);
    for (const auto& [held, parked] : samples) {
        h.add({t, held, parked});
        t += 1min;
    }
    return h;
}

}  // namespace

TEST_CASE("status_page_html: the numbers carry data- attributes matching the snapshot") {
    const auto m = busy_consumer();
    const std::vector<parked_count> parked = {{"jobs.wait.1", 30}, {"jobs.wait.2", 12}};
    const std::string page = status_page_html("jobs", m, parked, history_of({{5, 1}, {7, 2}}), at());
    CHECK(data(page, "held") == "212");
    CHECK(data(page, "parked") == "42");
    CHECK(data(page, "running") == "8");
    CHECK(data(page, "received") == "10412");
    CHECK(data(page, "succeeded") == "9876");
    CHECK(data(page, "retried") == "190");
    CHECK(data(page, "dead-lettered") == "31");
    CHECK(data(page, "lateness-count") == "10105");
    CHECK(data(page, "connected") == "1");
    CHECK(page.find("<b>10412</b>") != std::string::npos);  // shown, not only an attribute
}

TEST_CASE("status_page_html: parked is unknown when a wait queue did not answer, or there are none") {
    const auto m = busy_consumer();
    const std::vector<parked_count> partly = {{"jobs.wait.1", 30}, {"jobs.wait.2", std::nullopt}};
    const std::string page = status_page_html("jobs", m, partly, status_history(10), at());
    CHECK(data(page, "parked") == "");
    CHECK(page.find("data-parked=\"\"><b>?</b>") != std::string::npos);
    CHECK(data(status_page_html("jobs", m, {}, status_history(10), at()), "parked") == "");
    const std::vector<parked_count> empty_queues = {{"jobs.wait.1", 0}};
    CHECK(data(status_page_html("jobs", m, empty_queues, status_history(10), at()), "parked") == "0");
}

TEST_CASE("status_page_html: a fresh consumer renders zeros") {
    tarry::consumer_metrics m;
    const std::string page = status_page_html("jobs", m, {}, status_history(10), at());
    CHECK(data(page, "held") == "0");
    CHECK(data(page, "received") == "0");
    CHECK(data(page, "lateness-count") == "0");
    CHECK(data(page, "connected") == "0");
    CHECK(page.find("No dead letters.") != std::string::npos);
    CHECK(page.find("no samples yet") != std::string::npos);
    CHECK(count_of(page, "data-bucket=") == 1);  // only the bucket above every bound
}

TEST_CASE("status_page_html: every text from a message or the queue is HTML-escaped") {
    auto m = busy_consumer();
    m.recent_dead_letters = {{"<img src=x onerror=alert(1)>", "rejected: \"a\" & 'b' </td><script>", at(-3s)},
                             {"bad\xff", "unreadable: \xc3", at(-1s)}};
    const std::string page = status_page_html("<script>alert('q')</script>", m, {}, status_history(10), at());
    CHECK(page.find("<script") == std::string::npos);
    CHECK(page.find("<img") == std::string::npos);
    CHECK(page.find("&lt;script&gt;alert(&#39;q&#39;)&lt;/script&gt;") != std::string::npos);
    CHECK(page.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
    CHECK(page.find("rejected: &quot;a&quot; &amp; &#39;b&#39; &lt;/td&gt;&lt;script&gt;") != std::string::npos);
    CHECK(page.find("bad\xEF\xBF\xBD") != std::string::npos);
    CHECK(page.find("3 s ago") != std::string::npos);
    CHECK(count_of(page, "<tr><td") == 2);
}

TEST_CASE("status_page_html: self-contained: no script, no external asset") {
    const std::string page =
        status_page_html("jobs", busy_consumer(), {}, history_of({{1, 1}, {2, std::nullopt}, {3, 3}}), at());
    CHECK(page.starts_with("<!doctype html>"));
    CHECK(page.find("<style>") != std::string::npos);
    for (const std::string_view banned : {"<script", "src=", "href=", "http://", "https://", "url(", "@import"}) {
        CAPTURE(banned);
        CHECK(page.find(banned) == std::string::npos);
    }
}

TEST_CASE("status_page_html: the charts: held and parked lines, a bar per lateness bucket") {
    const auto m = busy_consumer();
    // Parked unknown in the middle: its line is cut in two.
    const std::string page =
        status_page_html("jobs", m, {}, history_of({{1, 4}, {2, 5}, {3, std::nullopt}, {4, 6}, {5, 7}}), at());
    CHECK(count_of(page, "<polyline class=\"held\"") == 1);
    CHECK(count_of(page, "<polyline class=\"parked\"") == 2);
    CHECK(count_of(page, "data-bucket=") == http_test::lateness_bounds.size() + 1);
    CHECK(page.find("data-bucket=\"1\" data-count=\"4000\"") != std::string::npos);
    CHECK(page.find("data-bucket=\"18\" data-count=\"0\"") != std::string::npos);
    CHECK(page.find("<title>≤ 100µs: 120 runs</title>") != std::string::npos);
    CHECK(page.find("<title>≤ 2.5ms: 700 runs</title>") != std::string::npos);
    CHECK(page.find("<title>more: 0 runs</title>") != std::string::npos);
}

TEST_CASE("status_page_html: time runs from the first sample to now") {
    status_history h(10);
    h.add({at(-10min), 3, 3});
    h.add({at(-5min), 4, 4});
    std::string page = status_page_html("jobs", busy_consumer(), {}, h, at());
    CHECK(count_of(page, "<polyline class=\"held\" points=\"24.0,") == 1);  // the left edge
    CHECK(count_of(page, " 320.0,") == 2);                                      // halfway, both lines
    CHECK(page.find(">10.0 min ago<") != std::string::npos);
    status_history one(10);
    one.add({at(), 3, 3});
    page = status_page_html("jobs", busy_consumer(), {}, one, at());
    CHECK(count_of(page, "<polyline class=\"held\" points=\"616.0,") == 1);  // the right edge
}

TEST_CASE("status_history: the latest samples, oldest first, at most capacity") {
    status_history h(3);
    for (std::size_t i = 0; i < 5; ++i) h.add({at(std::chrono::seconds(i)), i, i * 10});
    REQUIRE(h.samples().size() == 3);
    CHECK(h.samples()[0].held == 2);
    CHECK(h.samples()[1].held == 3);
    CHECK(h.samples()[2].held == 4);
    CHECK(h.samples()[2].parked == 40u);
    status_history none(0);
    none.add({at(), 1, 1});
    CHECK(none.samples().empty());
}
