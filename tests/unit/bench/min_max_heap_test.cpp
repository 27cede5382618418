// The bench's min_max_heap against std::multiset, with the heap property
// checked after every operation.
#include "min_max_heap.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cstddef>
#include <functional>
#include <random>
#include <set>
#include <vector>

namespace {

using heap_t = bench::min_max_heap<int, std::less<>>;

bool min_level(std::size_t i) { return (std::bit_width(i + 1) & 1U) == 1U; }

// Every element is <= (min level) or >= (max level) all its descendants;
// checking children and grandchildren suffices by induction.
bool well_formed(const heap_t& h) {
    const auto& v = h.data();
    for (std::size_t i = 0; i < v.size(); ++i) {
        for (std::size_t d : {2 * i + 1, 2 * i + 2, 4 * i + 3, 4 * i + 4, 4 * i + 5, 4 * i + 6}) {
            if (d >= v.size()) continue;
            if (min_level(i) ? v[d] < v[i] : v[i] < v[d]) return false;
        }
    }
    return true;
}

}  // namespace

TEST_SUITE("min_max_heap") {

TEST_CASE("min and max match a multiset under random operations") {
    std::mt19937 rng(12345);
    heap_t h;
    std::multiset<int> ref;
    for (int step = 0; step < 20000; ++step) {
        const int op = static_cast<int>(rng() % 10);
        if (op < 5 || ref.empty()) {
            const int x = static_cast<int>(rng() % 1000);
            h.push(x);
            ref.insert(x);
        } else if (op < 7) {
            CHECK(h.pop_min() == *ref.begin());
            ref.erase(ref.begin());
        } else if (op < 9) {
            CHECK(h.pop_max() == *ref.rbegin());
            ref.erase(std::prev(ref.end()));
        } else {
            // take out every multiple of a random small number
            const int k = static_cast<int>(2 + rng() % 7);
            std::vector<bool> hit(h.size());
            std::size_t n = 0;
            for (std::size_t i = 0; i < h.size(); ++i)
                if (h.data()[i] % k == 0) {
                    hit[i] = true;
                    ++n;
                }
            std::vector<int> out;
            out.reserve(n);
            h.extract_marked(hit, out);
            CHECK(out.size() == n);
            for (int x : out) {
                CHECK(x % k == 0);
                ref.erase(ref.find(x));
            }
        }
        REQUIRE(h.size() == ref.size());
        if (!ref.empty()) {
            REQUIRE(h.min() == *ref.begin());
            REQUIRE(h.max() == *ref.rbegin());
        }
        if (step % 97 == 0) REQUIRE(well_formed(h));
    }
}

TEST_CASE("small sizes") {
    heap_t h;
    h.push(5);
    CHECK(h.min() == 5);
    CHECK(h.max() == 5);
    h.push(3);
    CHECK(h.min() == 3);
    CHECK(h.max() == 5);
    CHECK(h.pop_max() == 5);
    CHECK(h.pop_max() == 3);
    CHECK(h.empty());
}

TEST_CASE("draining by min gives sorted order, by max reverse order") {
    std::mt19937 rng(7);
    heap_t a, b;
    std::vector<int> xs(5000);
    for (auto& x : xs) x = static_cast<int>(rng() % 100000);
    for (int x : xs) {
        a.push(x);
        b.push(x);
    }
    CHECK(well_formed(a));
    int prev = -1;
    while (!a.empty()) {
        const int x = a.pop_min();
        REQUIRE(x >= prev);
        prev = x;
    }
    prev = 1 << 30;
    while (!b.empty()) {
        const int x = b.pop_max();
        REQUIRE(x <= prev);
        prev = x;
    }
}

}  // TEST_SUITE
