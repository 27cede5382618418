// The live schedules a control stream's upserts and removals fold into.
#include "tarry/control/schedule_catalog.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace amqp = tarry::amqp;
namespace control = tarry::control;
using tarry::wall_time;

namespace {

wall_time at_s(std::int64_t s) { return wall_time(std::chrono::seconds(s)); }

control::schedule_upsert upsert(std::string id, std::uint64_t generation, std::string spec) {
    amqp::message body("body of " + spec);
    return {std::move(id), generation, std::move(spec), std::move(body), at_s(1795613756)};
}

control::schedule_removal removal(std::string id, std::uint64_t generation) {
    return {std::move(id), generation, at_s(1795613756)};
}

control::run_claim claim(std::string schedule_id) {
    return {schedule_id + "@1795613700", schedule_id, "1795613700", "0123456789abcdef0123456789abcdef",
            at_s(1795613756)};
}

std::vector<control::schedule_upsert> fold(const std::vector<control::schedule_entry>& entries) {
    control::schedule_catalog c;
    for (const auto& e : entries) c.add(e);
    return c.live();
}

std::vector<std::string> ids(const std::vector<control::schedule_upsert>& live) {
    std::vector<std::string> out;
    for (const auto& u : live) out.push_back(u.schedule_id);
    return out;
}

}  // namespace

TEST_CASE("an empty catalog has nothing live") {
    control::schedule_catalog c;
    CHECK(c.live().empty());
}

TEST_CASE("an upsert is live as it came, template and all") {
    const auto u = upsert("nightly", 10, "every 1d");
    CHECK(fold({u}) == std::vector{u});
}

TEST_CASE("for each id the highest generation wins, whatever the order the entries arrive in") {
    const std::vector<control::schedule_entry> entries = {
        upsert("a", 10, "every 1m"), upsert("a", 30, "every 3m"), removal("a", 20),
        upsert("b", 5, "every 5m"),  removal("b", 7),             upsert("c", 3, "every 3h"),
        claim("b"),
    };
    const std::vector<control::schedule_upsert> expected = {upsert("a", 30, "every 3m"), upsert("c", 3, "every 3h")};

    std::vector<std::size_t> order(entries.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::size_t orders = 0, wrong = 0;
    std::string first_wrong;
    do {
        std::vector<control::schedule_entry> arrived;
        for (const auto i : order) arrived.push_back(entries[i]);
        ++orders;
        if (fold(arrived) != expected && wrong++ == 0)
            for (const auto i : order) first_wrong += std::to_string(i) + " ";
    } while (std::next_permutation(order.begin(), order.end()));
    CHECK(orders == 5040);
    CAPTURE(first_wrong);
    CHECK(wrong == 0);
}

TEST_CASE("an upsert and a removal of one generation: the removal wins, whichever comes first") {
    CHECK(fold({upsert("a", 10, "every 1m"), removal("a", 10)}).empty());
    CHECK(fold({removal("a", 10), upsert("a", 10, "every 1m")}).empty());
}

TEST_CASE("a removal then a newer upsert: the schedule is live again") {
    const auto u = upsert("a", 20, "every 2m");
    CHECK(fold({upsert("a", 10, "every 1m"), removal("a", 15), u}) == std::vector{u});
    CHECK(fold({removal("a", 15), u}) == std::vector{u});
    CHECK(fold({u, removal("a", 15)}) == std::vector{u});
}

TEST_CASE("an older upsert does not replace a newer one") {
    const auto newer = upsert("a", 20, "every 2m");
    CHECK(fold({newer, upsert("a", 10, "every 1m")}) == std::vector{newer});
    CHECK(fold({upsert("a", 10, "every 1m"), newer}) == std::vector{newer});
}

TEST_CASE("claims are ignored") {
    CHECK(fold({claim("a")}).empty());
    const auto u = upsert("a", 10, "every 1m");
    CHECK(fold({claim("a"), u, claim("a")}) == std::vector{u});
}

TEST_CASE("a removal of an id never upserted leaves nothing live") {
    CHECK(fold({removal("ghost", 10)}).empty());
    const auto u = upsert("a", 10, "every 1m");
    CHECK(fold({removal("ghost", 10), u}) == std::vector{u});
}

TEST_CASE("the live schedules come sorted by id") {
    const auto live = fold({upsert("b", 1, "every 1m"), upsert("a", 1, "every 1m"), upsert("c", 1, "every 1m"),
                            upsert("B", 1, "every 1m"), upsert("10", 1, "every 1m"), upsert("9", 1, "every 1m"),
                            upsert("a-1", 1, "every 1m")});
    CHECK(ids(live) == std::vector<std::string>{"10", "9", "B", "a", "a-1", "b", "c"});
}
