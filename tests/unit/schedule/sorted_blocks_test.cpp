// detail::sorted_blocks against std::set: enough elements for leaves and
// groups to split, both ends, removal in bulk.
#include "tarry/schedule/delay_queue.hpp"  // detail::queued, key_of_queued
#include "tarry/schedule/detail/sorted_blocks.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace {

using entry = tarry::detail::queued<int>;
using blocks = tarry::detail::sorted_blocks<entry, tarry::detail::key_of_queued>;
using ref_key = std::pair<std::int64_t, std::uint64_t>;

ref_key key(const entry& e) { return {e.due, e.seq}; }

// for_each visits every element once, strictly increasing.
bool in_order(const blocks& b, std::size_t expected) {
    std::size_t n = 0;
    bool ok = true;
    ref_key prev{INT64_MIN, 0};
    bool first = true;
    b.for_each([&](const entry& e) {
        if (!first && !(prev < key(e))) ok = false;
        prev = key(e);
        first = false;
        ++n;
    });
    return ok && n == expected;
}

struct harness {
    blocks b;
    std::set<ref_key> ref;
    std::uint64_t seq = 0;

    void push(std::int64_t due) {
        b.push(entry{due, seq, 0, static_cast<int>(seq)});
        ref.insert({due, seq});
        ++seq;
    }
    void check_ends() {
        REQUIRE(b.size() == ref.size());
        if (ref.empty()) return;
        REQUIRE(key(b.min()) == *ref.begin());
        REQUIRE(key(b.max()) == *ref.rbegin());
    }
};

}  // namespace

TEST_SUITE("sorted_blocks") {

TEST_CASE("random pushes and pops at both ends, through many splits") {
    std::mt19937_64 rng(99);
    harness h;
    for (int step = 0; step < 200000; ++step) {
        const auto op = rng() % 10;
        if (op < 6 || h.ref.empty()) {
            h.push(static_cast<std::int64_t>(rng() % 50000));  // ties on due, broken by seq
        } else if (op < 8) {
            REQUIRE(key(h.b.pop_min()) == *h.ref.begin());
            h.ref.erase(h.ref.begin());
        } else {
            REQUIRE(key(h.b.pop_max()) == *std::prev(h.ref.end()));
            h.ref.erase(std::prev(h.ref.end()));
        }
        h.check_ends();
    }
    CHECK(h.ref.size() > 40000);  // large enough that groups split
    CHECK(in_order(h.b, h.ref.size()));
}

// Memory follows the fill of the leaves (each is allocated whole): a full
// leaf first hands elements to a neighbour with room, so random pushes fill
// leaves to some 85 % instead of the 69 % that halving alone leaves.
TEST_CASE("random pushes fill the leaves to at least 80 %") {
    std::mt19937_64 rng(7);
    harness h;
    for (int i = 0; i < 100000; ++i) h.push(static_cast<std::int64_t>(rng() % 1000000000));
    h.check_ends();
    CHECK(in_order(h.b, 100000));
    const double fill = static_cast<double>(h.b.size()) / static_cast<double>(h.b.leaf_count() * blocks::leaf_capacity);
    INFO("fill: " << fill);
    CHECK(fill >= 0.80);
    // Popping from the front all along (as a delay queue does) keeps order.
    for (int i = 0; i < 50000; ++i) {
        REQUIRE(key(h.b.pop_min()) == *h.ref.begin());
        h.ref.erase(h.ref.begin());
        h.push(static_cast<std::int64_t>(rng() % 1000000000));
    }
    h.check_ends();
    CHECK(in_order(h.b, h.ref.size()));
}

TEST_CASE("ascending pushes append; descending pushes insert at the front") {
    harness up;
    for (int i = 0; i < 50000; ++i) up.push(i);
    up.check_ends();
    CHECK(in_order(up.b, 50000));
    harness down;
    for (int i = 50000; i > 0; --i) down.push(i);
    down.check_ends();
    CHECK(in_order(down.b, 50000));
    for (int i = 1; i <= 50000; ++i) REQUIRE(down.b.pop_min().due == i);
    CHECK(down.b.empty());
}

TEST_CASE("extract_marked takes the marked ones, least first, and keeps order") {
    std::mt19937_64 rng(5);
    harness h;
    for (int i = 0; i < 30000; ++i) h.push(static_cast<std::int64_t>(rng() % 100000));
    for (int round = 0; round < 4; ++round) {
        const int k = 2 + round;
        std::vector<bool> hit(h.b.size());
        std::size_t i = 0, n = 0;
        h.b.for_each([&](const entry& e) {
            if (e.value % k == 0) {
                hit[i] = true;
                ++n;
            }
            ++i;
        });
        std::vector<entry> out;
        out.reserve(n);
        h.b.extract_marked(hit, out);
        REQUIRE(out.size() == n);
        for (std::size_t j = 0; j < out.size(); ++j) {
            CHECK(out[j].value % k == 0);
            if (j > 0) CHECK(key(out[j - 1]) < key(out[j]));
            h.ref.erase(key(out[j]));
        }
        h.check_ends();
        CHECK(in_order(h.b, h.ref.size()));
        // still usable: pushes and pops in the thinned-out leaves
        for (int j = 0; j < 1000; ++j) h.push(static_cast<std::int64_t>(rng() % 100000));
        h.check_ends();
        CHECK(in_order(h.b, h.ref.size()));
    }
    // everything
    std::vector<bool> all(h.b.size(), true);
    std::vector<entry> out;
    out.reserve(h.b.size());
    h.b.extract_marked(all, out);
    CHECK(h.b.empty());
    h.push(1);
    h.ref = {{1, h.seq - 1}};
    h.check_ends();
}

TEST_CASE("extract_all returns everything least first and empties") {
    std::mt19937_64 rng(8);
    harness h;
    for (int i = 0; i < 5000; ++i) h.push(static_cast<std::int64_t>(rng() % 1000));
    const auto out = h.b.extract_all();
    REQUIRE(out.size() == 5000);
    auto it = h.ref.begin();
    for (const auto& e : out) CHECK(key(e) == *it++);
    CHECK(h.b.empty());
}

TEST_CASE("a single element is both ends") {
    harness h;
    h.push(3);
    CHECK(&h.b.min() == &h.b.max());
    CHECK(h.b.pop_max().due == 3);
    CHECK(h.b.empty());
    h.push(4);
    CHECK(h.b.pop_min().due == 4);
    CHECK(h.b.empty());
}

}  // TEST_SUITE
