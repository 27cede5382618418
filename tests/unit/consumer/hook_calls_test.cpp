// The caller's hooks as the consumer calls them: what one throws is never
// fatal and never silent (consumer.hpp, consumer_hooks): counted in
// hook_exceptions and told to on_connection as a line; what on_connection
// throws is counted only; is_permanent that throws means "not permanent".
#include "hook_calls.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

using namespace tarry;

namespace {
job_event an_event() { return job_event{job_event::kind::run, "job-1", {}, {}, 1, {}, {}, false}; }
}  // namespace

TEST_CASE("fault: a hook that throws is counted and told to on_connection; the call returns") {
    auto counters = std::make_shared<detail::core_counters>();
    std::vector<std::string> lines;
    consumer_hooks h;
    h.on_event = [](const job_event&) { throw std::runtime_error("event sink down"); };
    h.on_connection_event = [](const connection_event&) { throw 42; };
    h.on_connection = [&](const std::string& line) { lines.push_back(line); };
    const auto g = detail::guarded(h, counters);
    CHECK_NOTHROW(g.on_event(an_event()));
    CHECK_NOTHROW(g.on_connection_event(connection_event{connection_event::kind::connected, false, {}, {}, 0}));
    CHECK(counters->hook_exceptions == 2);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == "the on_event hook threw: event sink down (counted; the consumer goes on)");
    CHECK(lines[1] == "the on_connection_event hook threw: unknown exception (counted; the consumer goes on)");
    g.on_connection("connected");
    CHECK(lines.back() == "connected");
    CHECK(counters->hook_exceptions == 2);
}

TEST_CASE("fault: on_connection that throws is counted, also when it was to tell another hook's exception") {
    auto counters = std::make_shared<detail::core_counters>();
    consumer_hooks h;
    h.on_event = [](const job_event&) { throw std::runtime_error("a"); };
    h.on_connection = [](const std::string&) { throw std::runtime_error("log sink down"); };
    const auto g = detail::guarded(h, counters);
    CHECK_NOTHROW(g.on_connection("lost: reset"));
    CHECK(counters->hook_exceptions == 1);
    CHECK_NOTHROW(g.on_event(an_event()));
    CHECK(counters->hook_exceptions == 3);  // on_event's, then on_connection's telling it
}

TEST_CASE("hooks not set stay unset; set ones that do not throw count nothing") {
    auto counters = std::make_shared<detail::core_counters>();
    int events = 0;
    consumer_hooks h;
    h.on_event = [&](const job_event&) { ++events; };
    const auto g = detail::guarded(h, counters);
    CHECK_FALSE(g.on_connection_event);
    CHECK_FALSE(g.on_connection);
    g.on_event(an_event());
    CHECK(events == 1);
    CHECK(counters->hook_exceptions == 0);
    CHECK_FALSE(detail::guarded(std::function<bool(const std::exception_ptr&)>{}, counters, nullptr));
}

TEST_CASE("fault: is_permanent that throws means not permanent, counted and told") {
    auto counters = std::make_shared<detail::core_counters>();
    std::vector<std::string> lines;
    const auto is_permanent = detail::guarded(
        [](const std::exception_ptr& e) -> bool {
            try {
                std::rethrow_exception(e);
            } catch (const std::invalid_argument&) {
                return true;
            } catch (const std::logic_error&) {
                throw std::runtime_error("classifier broke");
            } catch (...) {
                return false;
            }
        },
        counters, [&](const std::string& line) { lines.push_back(line); });
    CHECK(is_permanent(std::make_exception_ptr(std::invalid_argument("bad"))));
    CHECK_FALSE(is_permanent(std::make_exception_ptr(std::runtime_error("flaky"))));
    CHECK(counters->hook_exceptions == 0);
    CHECK_FALSE(is_permanent(std::make_exception_ptr(std::logic_error("odd"))));
    CHECK(counters->hook_exceptions == 1);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "the is_permanent hook threw: classifier broke (counted; the consumer goes on)");
}
