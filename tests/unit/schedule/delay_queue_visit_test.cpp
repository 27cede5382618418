// delay_queue::visit(): a page of items after a place, in listing order
// (the ready path first, in arrival order, then the held items by due
// time), stable while items come and go; and sorted_blocks::visit_after
// against std::set through many splits.
#include "tarry/schedule/delay_queue.hpp"
#include "tarry/schedule/detail/sorted_blocks.hpp"
#include "tarry/schedule/fake_clock.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using tarry::fake_clock;
using tarry::push_result;
using tarry::queue_place;

namespace {
using queue = tarry::delay_queue<int, fake_clock>;

struct page {
    std::vector<int> values;
    std::optional<queue_place> last;
};

page visit(const queue& q, std::optional<queue_place> after, std::size_t limit) {
    page p;
    const std::size_t n = q.visit(after, limit, [&](const queue_place& at, const int& v) {
        p.values.push_back(v);
        p.last = at;
    });
    CHECK(n == p.values.size());
    return p;
}
}  // namespace

TEST_SUITE("delay_queue visit") {

TEST_CASE("pages in listing order: the ready path in arrival order, then the held items by due time") {
    fake_clock clk;
    queue q({}, clk);
    REQUIRE(q.push(30, clk.now() + 3s) == push_result::ok);
    REQUIRE(q.push(10, clk.now() + 1s) == push_result::ok);
    REQUIRE(q.push_ready(1, clk.now()) == push_result::ok);
    REQUIRE(q.push(20, clk.now() + 2s) == push_result::ok);
    REQUIRE(q.push_ready(2, clk.now() - 5s) == push_result::ok);
    REQUIRE(q.push(11, clk.now() + 1s) == push_result::ok);  // same due as 10: push order

    auto a = visit(q, std::nullopt, 3);
    CHECK(a.values == std::vector<int>{1, 2, 10});
    auto b = visit(q, a.last, 3);
    CHECK(b.values == std::vector<int>{11, 20, 30});
    CHECK(visit(q, b.last, 3).values.empty());
    CHECK(visit(q, std::nullopt, 100).values == std::vector<int>{1, 2, 10, 11, 20, 30});
    CHECK(visit(q, std::nullopt, 0).values.empty());
    CHECK(q.size() == 6);  // nothing taken out
}

TEST_CASE("stable: items popped or added between pages neither repeat nor skip an item held throughout") {
    fake_clock clk;
    queue q({}, clk);
    for (int i = 1; i <= 6; ++i) REQUIRE(q.push(i * 10, clk.now() + std::chrono::seconds(i)) == push_result::ok);
    REQUIRE(q.push_ready(1, clk.now()) == push_result::ok);
    REQUIRE(q.push_ready(2, clk.now()) == push_result::ok);

    auto a = visit(q, std::nullopt, 3);  // 1, 2, 10
    REQUIRE(a.values == std::vector<int>{1, 2, 10});
    // Meanwhile: the ready item and the item just listed leave, one due
    // sooner and one due later arrive, and a ready one.
    CHECK(q.try_pop()->value == 1);
    CHECK(q.try_pop()->value == 2);
    clk.advance(1s);
    CHECK(q.try_pop()->value == 10);
    REQUIRE(q.push(15, clk.now() - 500ms) == push_result::ok);   // before the cursor's place: not listed
    REQUIRE(q.push(45, clk.now() + 3500ms) == push_result::ok);  // after it: listed in its place
    REQUIRE(q.push_ready(3, clk.now()) == push_result::ok);      // the ready path comes first: not listed
    auto b = visit(q, a.last, 3);
    CHECK(b.values == std::vector<int>{20, 30, 40});
    // Already listed or never to be: gone, no matter.
    CHECK(q.remove_if([](int v) { return v == 3 || v == 15 || v == 20; }).size() == 3);
    auto c = visit(q, b.last, 3);
    CHECK(c.values == std::vector<int>{45, 50, 60});
    CHECK(visit(q, c.last, 3).values.empty());
}

TEST_CASE("a cursor inside the ready path goes on with the ready items that arrived after it") {
    fake_clock clk;
    queue q({}, clk);
    REQUIRE(q.push(10, clk.now() + 1s) == push_result::ok);
    REQUIRE(q.push_ready(1, clk.now()) == push_result::ok);
    REQUIRE(q.push_ready(2, clk.now()) == push_result::ok);
    auto a = visit(q, std::nullopt, 1);
    REQUIRE(a.values == std::vector<int>{1});
    CHECK(q.try_pop()->value == 1);  // the cursor's own item leaves
    REQUIRE(q.push_ready(3, clk.now()) == push_result::ok);
    CHECK(visit(q, a.last, 10).values == std::vector<int>{2, 3, 10});
}

TEST_CASE("take_latest and remove_if between pages keep the other items' places") {
    fake_clock clk;
    queue q({}, clk);
    for (int i = 1; i <= 5; ++i) REQUIRE(q.push(int(i), clk.now() + std::chrono::seconds(i)) == push_result::ok);
    auto a = visit(q, std::nullopt, 2);
    REQUIRE(a.values == std::vector<int>{1, 2});
    CHECK(q.take_latest()->value == 5);
    CHECK(q.remove_if([](int v) { return v == 3; }).size() == 1);
    CHECK(visit(q, a.last, 10).values == std::vector<int>{4});
}

TEST_CASE("places order ready items before held ones, and are unique") {
    const queue_place r1{true, 0, 5}, r2{true, 0, 9}, h1{false, -100, 1}, h2{false, -100, 2}, h3{false, 7, 0};
    CHECK(r1 < r2);
    CHECK(r2 < h1);
    CHECK(h1 < h2);
    CHECK(h2 < h3);
    CHECK_FALSE(h3 < h3);
    CHECK(h1 == queue_place{false, -100, 1});
}

}  // TEST_SUITE

TEST_SUITE("sorted_blocks") {

TEST_CASE("visit_after: from every place, the elements after it in order, through many splits") {
    using entry = tarry::detail::queued<int>;
    using blocks = tarry::detail::sorted_blocks<entry, tarry::detail::key_of_queued>;
    using key = tarry::detail::due_key;
    std::mt19937_64 rng(5);
    blocks b;
    std::set<std::pair<std::int64_t, std::uint64_t>> ref;
    for (std::uint64_t seq = 0; seq < 20000; ++seq) {
        const auto due = static_cast<std::int64_t>(rng() % 5000);
        b.push(entry{due, seq, 0, 0});
        ref.insert({due, seq});
    }
    for (int i = 0; i < 5000; ++i) b.pop_min();  // live elements start inside a leaf
    for (int i = 0; i < 5000; ++i) ref.erase(ref.begin());
    std::vector<std::pair<std::int64_t, std::uint64_t>> all(ref.begin(), ref.end());
    // Cursors that are elements, and cursors between elements.
    for (int round = 0; round < 300; ++round) {
        const std::size_t at = rng() % all.size();
        key k{all[at].first, all[at].second};
        if (round % 2 == 1) k.seq = 1u << 30;  // after every element of that due time
        auto expect = ref.upper_bound({k.due, k.seq});
        std::size_t seen = 0;
        bool ok = true;
        b.visit_after(&k, [&](const entry& e) {
            if (expect == ref.end() || expect->first != e.due || expect->second != e.seq) ok = false;
            if (expect != ref.end()) ++expect;
            return ++seen < 50;
        });
        CHECK(ok);
        CHECK(seen == std::min<std::size_t>(50, static_cast<std::size_t>(std::distance(ref.upper_bound({k.due, k.seq}), ref.end()))));
    }
    std::size_t n = 0;
    b.visit_after(nullptr, [&](const entry&) { return ++n < 3; });
    CHECK(n == 3);
    const key beyond{1 << 20, 0};
    n = 0;
    b.visit_after(&beyond, [&](const entry&) { return ++n > 0; });
    CHECK(n == 0);
}

}  // TEST_SUITE
