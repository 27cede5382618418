// /jobs: parse_jobs_query (defaults, bounds, decoding, every refusal) and
// jobs_json (the exact document, the last page, unknown parked counts,
// text that needs escaping); error_json.
#include "http_test_support.hpp"
#include "jobs_json.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <doctest/doctest.h>

using namespace tarry::http_detail;
using http_test::at;
using http_test::error_of;
using http_test::value_of;
using namespace std::chrono_literals;

TEST_CASE("parse_jobs_query: defaults, limit and after") {
    const jobs_query none = value_of(parse_jobs_query(""));
    CHECK(none.limit == 100);
    CHECK(none.after.empty());
    CHECK(value_of(parse_jobs_query("limit=1")).limit == 1);
    CHECK(value_of(parse_jobs_query("limit=1000")).limit == 1000);
    CHECK(value_of(parse_jobs_query("limit=0010")).limit == 10);
    CHECK(value_of(parse_jobs_query("li%6dit=7")).limit == 7);
    CHECK(value_of(parse_jobs_query("limit=%35")).limit == 5);
    const jobs_query both = value_of(parse_jobs_query("after=1767225600.5%2Fq%3Dx&limit=20"));
    CHECK(both.limit == 20);
    CHECK(both.after == "1767225600.5/q=x");
    CHECK(value_of(parse_jobs_query("after=a+b")).after == "a+b");  // '+' is not a space here
    CHECK(value_of(parse_jobs_query("after=a%2Bb")).after == "a+b");
    CHECK(value_of(parse_jobs_query("after=")).after.empty());
    CHECK(value_of(parse_jobs_query("after")).after.empty());
    CHECK(value_of(parse_jobs_query("&&limit=3&")).limit == 3);
}

TEST_CASE("parse_jobs_query: every refusal is a 400 naming the parameter") {
    const std::string limit_message = "limit: must be a whole number from 1 to 1000";
    const std::vector<std::pair<std::string_view, std::string>> cases = {
        {"limit=0", limit_message},
        {"limit=1001", limit_message},
        {"limit=-1", limit_message},
        {"limit=+5", limit_message},
        {"limit=5.0", limit_message},
        {"limit=abc", limit_message},
        {"limit= 5", limit_message},
        {"limit=", limit_message},
        {"limit", limit_message},
        {"limit=%zz", limit_message},
        {"limit=184467440737095516160", limit_message},
        {"limit=5&limit=6", "limit: given more than once"},
        {"limit=5&after=x&limit=5", "limit: given more than once"},
        {"after=a&after=b", "after: given more than once"},
        {"after=%zz", "after: bad percent-escape"},
        {"after=%4", "after: bad percent-escape"},
        {"after=abc%", "after: bad percent-escape"},
        {"offset=3", "query: unknown parameter 'offset' (known: limit, after)"},
        {"Limit=3", "query: unknown parameter 'Limit' (known: limit, after)"},
        {"limit=3&x", "query: unknown parameter 'x' (known: limit, after)"},
        {"%zz=1", "query: bad percent-escape in '%zz'"},
    };
    for (const auto& [query, message] : cases) {
        CAPTURE(query);
        const http_error e = error_of(parse_jobs_query(query));
        CHECK(e.status == 400);
        CHECK(e.message == message);
    }
}

TEST_CASE("jobs_json: the page, due with six fraction digits (truncated to the microsecond)") {
    tarry::held_jobs_page page;
    page.jobs = {{"order-1", at(123'456'789ns), 1, 0}, {"", at(2s), 3, 2}};
    page.next = "cursor-2";
    page.held = 7;
    const std::vector<parked_count> parked = {{"jobs.wait.1", 3}, {"jobs.wait.2", std::nullopt}};
    CHECK(jobs_json(page, parked) ==
          R"({"jobs":[{"id":"order-1","due":1767225600.123456,"attempt":1,"lane":0},)"
          R"({"id":"","due":1767225602.000000,"attempt":3,"lane":2}],"next":"cursor-2","held":7,)"
          R"("parked_by_queue":{"jobs.wait.1":3,"jobs.wait.2":null}})");
}

TEST_CASE("jobs_json: the last page has next null; no parked counts is an empty object") {
    tarry::held_jobs_page page;
    page.held = 0;
    CHECK(jobs_json(page, {}) == R"({"jobs":[],"next":null,"held":0,"parked_by_queue":{}})");
}

TEST_CASE("jobs_json: due before 1970 and on whole microseconds") {
    tarry::held_jobs_page page;
    page.jobs = {{"a", tarry::wall_time(-1500ms), 1, 0},
                 {"b", tarry::wall_time(-250ms), 1, 0},
                 {"c", tarry::wall_time(1us), 1, 0},
                 {"d", tarry::wall_time(-1ns), 1, 0}};
    const std::string text = jobs_json(page, {});
    CHECK(text.find(R"("due":-1.500000)") != std::string::npos);
    CHECK(text.find(R"("due":-0.250000)") != std::string::npos);
    CHECK(text.find(R"("due":0.000001)") != std::string::npos);
    CHECK(text.find(R"("id":"d","due":0.000000)") != std::string::npos);
    CHECK(boost::json::parse(text).at("jobs").as_array().size() == 4);
}

TEST_CASE("jobs_json: ids, cursors and queue names are escaped and made UTF-8") {
    tarry::held_jobs_page page;
    page.jobs = {{"a\"b\\c\n\x01", at(), 1, 0}, {"bad \xff byte", at(), 1, 0}};
    page.next = "n\"x";
    const std::vector<parked_count> parked = {{"q\"1", 1}};
    const boost::json::value v = boost::json::parse(jobs_json(page, parked));
    CHECK(v.at("jobs").at(0).at("id").as_string() == "a\"b\\c\n\x01");
    CHECK(v.at("jobs").at(1).at("id").as_string() == "bad \xEF\xBF\xBD byte");
    CHECK(v.at("next").as_string() == "n\"x");
    CHECK(v.at("parked_by_queue").at("q\"1").as_int64() == 1);
}

TEST_CASE("error_json: one field, escaped, always JSON") {
    CHECK(error_json({400, "limit: must be a whole number from 1 to 1000"}) ==
          R"({"error":"limit: must be a whole number from 1 to 1000"})");
    CHECK(error_json({404, "say \"hi\"\n"}) == R"({"error":"say \"hi\"\n"})");
    const boost::json::value v = boost::json::parse(error_json({400, "x \xc0\xaf y"}));
    CHECK(v.at("error").as_string() == "x \xEF\xBF\xBD\xEF\xBF\xBD y");
}
