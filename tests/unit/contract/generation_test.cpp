// Generations as every writer gives them (contract::next_generation):
// microseconds now, strictly increasing within the process, from any
// thread.
#include "tarry/contract/schedule_headers.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using tarry::wall_time;

namespace {

const wall_time t0 = wall_time(std::chrono::microseconds(1'795'613'756'873'786));

}  // namespace

TEST_CASE("a generation is the time in µs, and above every earlier one even when the clock is not") {
    const auto g1 = tarry::contract::next_generation(t0 + 1h);
    CHECK(g1 >= 1'795'617'356'873'786u);
    const auto g2 = tarry::contract::next_generation(t0 + 1h);  // the same µs
    CHECK(g2 == g1 + 1);
    const auto g3 = tarry::contract::next_generation(t0);  // the clock stepped back an hour
    CHECK(g3 == g2 + 1);
    const auto g4 = tarry::contract::next_generation(t0 + 2h);
    CHECK(g4 == 1'795'620'956'873'786u);
}

TEST_CASE("threads: every generation given is unique") {
    std::vector<std::vector<std::uint64_t>> got(4);
    std::vector<std::thread> threads;
    for (auto& g : got)
        threads.emplace_back([&g] {
            for (int i = 0; i < 20000; ++i) g.push_back(tarry::contract::next_generation(t0 + 3h));
        });
    for (auto& t : threads) t.join();
    std::set<std::uint64_t> all;
    for (const auto& g : got) {
        CHECK(std::is_sorted(g.begin(), g.end()));
        all.insert(g.begin(), g.end());
    }
    CHECK(all.size() == 80000);
}
