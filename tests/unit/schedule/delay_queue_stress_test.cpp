// Many producers and consumers on one delay_queue, with an evictor taking
// the latest item out and putting it back (as the consumer parks and
// re-holds jobs) and a remover taking whole "channels" out: every item is
// taken exactly once, none early. Sized to stay within a few seconds under
// ThreadSanitizer.
#include "tarry/schedule/delay_queue.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using std::chrono::steady_clock;

namespace {

#if defined(__SANITIZE_THREAD__)
constexpr int per_producer = 20000;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr int per_producer = 20000;
#else
constexpr int per_producer = 100000;
#endif
#else
constexpr int per_producer = 100000;
#endif

struct job {
    std::uint64_t id;  // producer << 32 | sequence
    int channel;
};

}  // namespace

TEST_SUITE("stress") {

TEST_CASE("MPMC: every item taken exactly once, never early") {
    constexpr int producers = 4;
    constexpr int consumers = 4;
    constexpr std::size_t total = std::size_t{producers} * per_producer;
    tarry::delay_queue<job> q({.max_items = 1000});  // producers meet "full"

    std::atomic<std::size_t> done{0};  // items accounted for (popped or removed)
    std::atomic<int> early{0};
    std::atomic<int> refused{0};
    std::mutex seen_mutex;
    std::vector<std::uint64_t> seen;
    seen.reserve(total);
    auto account = [&](const std::vector<std::uint64_t>& ids) {
        std::lock_guard lock(seen_mutex);
        seen.insert(seen.end(), ids.begin(), ids.end());
    };
    auto count = [&](std::size_t n) {
        if (done.fetch_add(n) + n == total) q.close();
    };
    auto push_until_ok = [&](job j, steady_clock::time_point due) {
        for (;;) {
            const auto r = q.push(std::move(j), due, 1);
            if (r == tarry::push_result::ok) return;
            if (r != tarry::push_result::full) {
                ++refused;
                return;
            }
            std::this_thread::yield();
        }
    };

    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
        threads.emplace_back([&, p] {
            std::mt19937 rng(static_cast<unsigned>(p));
            for (int i = 0; i < per_producer; ++i) {
                job j{(std::uint64_t(p) << 32) | std::uint32_t(i), static_cast<int>(rng() % 16)};
                push_until_ok(j, steady_clock::now() + std::chrono::microseconds(rng() % 2000));
            }
        });
    for (int c = 0; c < consumers; ++c)
        threads.emplace_back([&] {
            std::vector<std::uint64_t> ids;
            while (auto it = q.pop()) {
                if (steady_clock::now() < it->due) ++early;
                ids.push_back(it->value.id);
                count(1);
            }
            account(ids);
        });
    // Parks the latest item and re-holds it, as the consumer does when full.
    // (While it holds one, not every item is accounted for: no close.)
    threads.emplace_back([&] {
        while (!q.closed()) {
            if (auto it = q.take_latest()) push_until_ok(it->value, it->due);
            std::this_thread::yield();
        }
    });
    // Drops a whole channel now and then (a dead channel's jobs).
    threads.emplace_back([&] {
        std::vector<std::uint64_t> ids;
        int channel = 0;
        while (!q.closed()) {
            std::this_thread::sleep_for(1ms);
            const auto gone = q.remove(channel++ % 16, &job::channel);
            for (const auto& it : gone) ids.push_back(it.value.id);
            count(gone.size());
        }
        account(ids);
    });
    for (auto& t : threads) t.join();

    CHECK(early == 0);
    CHECK(refused == 0);
    REQUIRE(seen.size() == total);
    std::sort(seen.begin(), seen.end());
    CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());  // no duplicates
    // and with the right size and no duplicates, every id is there
    for (int p = 0; p < producers; ++p) {
        CHECK(seen[std::size_t(p) * per_producer] == std::uint64_t(p) << 32);
        CHECK(seen[std::size_t(p + 1) * per_producer - 1] == ((std::uint64_t(p) << 32) | (per_producer - 1)));
    }
    CHECK(q.empty());
}

}  // TEST_SUITE
