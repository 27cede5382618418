// Benchmarks of tarry::delay_queue, printed as markdown tables.
//
//   delay_queue_bench [throughput] [lateness] [memory]   (default: all three)
//
// throughput: push+pop pairs per second, single-threaded and with 2-4
//   threads, for three queues measured in the same run, interleaved:
//   - baseline: std::priority_queue + std::mutex + std::condition_variable
//     (due time and a push sequence number as the key, like ours);
//   - tarry::delay_queue (mutex + sorted blocks + condition variable, with
//     a leader/follower wait and wake-ups only when the earliest item changes);
//   - inbox: a design candidate that was not chosen - producers put items
//     into a lock-free moodycamel::ConcurrentQueue and whichever consumer
//     holds the lock drains it into a min-max heap (min_max_heap.hpp). Kept
//     here so the choice can be re-measured.
//   The figure is the ratio to the baseline (median of several rounds).
// lateness: 100 000 items due uniformly over 5 s, popped by one thread:
//   p50, p99, max and min of (time pop returned - due time); the baseline is
//   measured the same way, to tell the queue from the machine.
// memory: bytes per queued item beyond its 8-byte payload, at 1 000 000
//   items, from allocator counters (this program counts every operator new)
//   and from the resident set size.
#include "min_max_heap.hpp"

#include "tarry/schedule/delay_queue.hpp"

#include <concurrentqueue/concurrentqueue.h>

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <latch>
#include <mutex>
#include <new>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

// ---- allocator counters ----------------------------------------------------
namespace {
std::atomic<std::int64_t> g_live_bytes{0};
}

void* operator new(std::size_t n) {
    void* p = std::malloc(n == 0 ? 1 : n);
    if (p == nullptr) throw std::bad_alloc();
    g_live_bytes.fetch_add(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
    return p;
}
void operator delete(void* p) noexcept {
    if (p == nullptr) return;
    g_live_bytes.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

namespace {

using clk = std::chrono::steady_clock;
using payload = std::uint64_t;

// ---- the baseline ----------------------------------------------------------
class baseline_queue {
public:
    void push(payload v, clk::time_point due) {
        {
            std::lock_guard lock(m_);
            pq_.push({due, seq_++, v});
        }
        cv_.notify_one();
    }
    std::optional<payload> pop() {
        std::unique_lock lock(m_);
        for (;;) {
            if (closed_) return std::nullopt;
            if (pq_.empty()) {
                cv_.wait(lock);
                continue;
            }
            const auto due = pq_.top().due;
            if (due <= clk::now()) {
                const payload v = pq_.top().value;
                pq_.pop();
                return v;
            }
            cv_.wait_until(lock, due);
        }
    }
    void close() {
        {
            std::lock_guard lock(m_);
            closed_ = true;
        }
        cv_.notify_all();
    }

private:
    struct entry {
        clk::time_point due;
        std::uint64_t seq;
        payload value;
    };
    struct later {
        bool operator()(const entry& a, const entry& b) const {
            return a.due > b.due || (a.due == b.due && a.seq > b.seq);
        }
    };
    std::mutex m_;
    std::condition_variable cv_;
    std::priority_queue<entry, std::vector<entry>, later> pq_;
    std::uint64_t seq_ = 0;
    bool closed_ = false;
};

// ---- the candidate that was not chosen -------------------------------------
class inbox_queue {
public:
    void push(payload v, clk::time_point due) {
        const std::int64_t d = due.time_since_epoch().count();
        inbox_.enqueue(entry{d, seq_.fetch_add(1, std::memory_order_relaxed), 0, v});
        // Dekker with pop(): either we see the sleeper or it sees our item.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (sleepers_.load(std::memory_order_relaxed) > 0 && d < armed_.load(std::memory_order_relaxed)) {
            { std::lock_guard lock(m_); }
            cv_.notify_one();
        }
    }
    std::optional<payload> pop() {
        std::unique_lock lock(m_);
        for (;;) {
            if (closed_) return std::nullopt;
            drain();
            if (!heap_.empty() && heap_.min().due <= clk::now().time_since_epoch().count())
                return heap_.pop_min().value;
            const std::int64_t wake =
                heap_.empty() ? std::numeric_limits<std::int64_t>::max() : heap_.min().due;
            armed_.store(wake, std::memory_order_relaxed);
            sleepers_.fetch_add(1, std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_seq_cst);
            if (inbox_.size_approx() == 0) {
                if (heap_.empty())
                    cv_.wait(lock);
                else
                    cv_.wait_until(lock, clk::time_point(clk::duration(wake)));
            }
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
        }
    }
    void close() {
        {
            std::lock_guard lock(m_);
            closed_ = true;
        }
        cv_.notify_all();
    }

private:
    using entry = tarry::detail::queued<payload>;
    void drain() {
        entry buf[64];
        std::size_t n;
        while ((n = inbox_.try_dequeue_bulk(buf, 64)) > 0)
            for (std::size_t i = 0; i < n; ++i) heap_.push(std::move(buf[i]));
    }
    moodycamel::ConcurrentQueue<entry> inbox_;
    std::atomic<std::uint64_t> seq_{0};
    std::atomic<int> sleepers_{0};
    std::atomic<std::int64_t> armed_{std::numeric_limits<std::int64_t>::max()};
    std::mutex m_;
    std::condition_variable cv_;
    bench::min_max_heap<entry, tarry::detail::earlier> heap_;
    bool closed_ = false;
};

// ---- tarry::delay_queue behind the same face ---------------------------------
class tarry_queue {
public:
    void push(payload v, clk::time_point due) { q_.push(std::move(v), due); }
    std::optional<payload> pop() {
        auto it = q_.pop();
        if (!it) return std::nullopt;
        return it->value;
    }
    void close() { q_.close(); }

private:
    tarry::delay_queue<payload> q_;
};

// ---- helpers -------------------------------------------------------------
double seconds_since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Past due times, so no pop waits: the figure is the queue's own cost.
// Random: uniform over ~17 min. Ascending: each a little later than the
// last, as "now + a fixed delay" produces.
std::vector<clk::time_point> past_dues(std::size_t n, unsigned seed, bool ascending = false) {
    std::mt19937_64 rng(seed);
    const auto base = clk::now() - std::chrono::hours(1);
    std::vector<clk::time_point> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = base + (ascending ? std::chrono::microseconds(i * 10 + rng() % 10)
                                 : std::chrono::microseconds(rng() % 1'000'000'000));
    return v;
}

// One thread: the queue holds `held` items; each step pushes one and pops one.
template <class Q>
double steady_state_ops(std::size_t held, std::size_t steps, bool ascending) {
    Q q;
    const auto dues = past_dues(held + steps, 7, ascending);
    for (std::size_t i = 0; i < held; ++i) q.push(i, dues[i]);
    const auto t0 = clk::now();
    payload sink = 0;
    for (std::size_t i = 0; i < steps; ++i) {
        q.push(i, dues[held + i]);
        sink += *q.pop();
    }
    const double s = seconds_since(t0);
    if (sink == 42) std::puts("");
    return static_cast<double>(steps) / s;
}

// One thread: push n, then pop n.
template <class Q>
double fill_drain_ops(std::size_t n, bool ascending) {
    Q q;
    const auto dues = past_dues(n, 11, ascending);
    const auto t0 = clk::now();
    for (std::size_t i = 0; i < n; ++i) q.push(i, dues[i]);
    payload sink = 0;
    for (std::size_t i = 0; i < n; ++i) sink += *q.pop();
    const double s = seconds_since(t0);
    if (sink == 42) std::puts("");
    return static_cast<double>(n) / s;
}

// Producers push items due now; consumers pop until every item is taken.
template <class Q>
double contended_ops(int producers, int consumers, std::size_t per_producer) {
    Q q;
    const std::size_t total = per_producer * static_cast<std::size_t>(producers);
    std::atomic<std::size_t> taken{0};
    std::latch go(producers + consumers + 1);
    std::vector<std::thread> ts;
    for (int p = 0; p < producers; ++p)
        ts.emplace_back([&] {
            go.arrive_and_wait();
            for (std::size_t i = 0; i < per_producer; ++i) q.push(i, clk::now());
        });
    for (int c = 0; c < consumers; ++c)
        ts.emplace_back([&] {
            go.arrive_and_wait();
            while (q.pop())
                if (taken.fetch_add(1, std::memory_order_relaxed) + 1 == total) q.close();
        });
    go.arrive_and_wait();
    const auto t0 = clk::now();
    for (auto& t : ts) t.join();
    return static_cast<double>(total) / seconds_since(t0);
}

struct row {
    std::string name;
    std::function<double()> run[3];  // baseline, tarry, inbox
};

template <template <class> class Bench, class... Args>
row make_row(std::string name, Args... args) {
    return {std::move(name),
            {[=] { return Bench<baseline_queue>::run(args...); }, [=] { return Bench<tarry_queue>::run(args...); },
             [=] { return Bench<inbox_queue>::run(args...); }}};
}

template <class Q>
struct steady_state {
    static double run(std::size_t held, std::size_t steps, bool ascending) {
        return steady_state_ops<Q>(held, steps, ascending);
    }
};
template <class Q>
struct fill_drain {
    static double run(std::size_t n, bool ascending) { return fill_drain_ops<Q>(n, ascending); }
};
template <class Q>
struct contended {
    static double run(int p, int c, std::size_t per) { return contended_ops<Q>(p, c, per); }
};

void throughput(int rounds) {
    const std::vector<row> rows = {
        make_row<steady_state>("1 thread, push+pop, 1 000 held, random due", std::size_t{1000},
                               std::size_t{1'000'000}, false),
        make_row<steady_state>("1 thread, push+pop, 100 000 held, random due", std::size_t{100'000},
                               std::size_t{1'000'000}, false),
        make_row<steady_state>("1 thread, push+pop, 100 000 held, ascending due", std::size_t{100'000},
                               std::size_t{1'000'000}, true),
        make_row<fill_drain>("1 thread, push 200 000 then pop all, random due", std::size_t{200'000}, false),
        make_row<fill_drain>("1 thread, push 200 000 then pop all, ascending due", std::size_t{200'000}, true),
        make_row<contended>("2 threads: 1 producer, 1 consumer", 1, 1, std::size_t{400'000}),
        make_row<contended>("3 threads: 2 producers, 1 consumer", 2, 1, std::size_t{200'000}),
        make_row<contended>("4 threads: 2 producers, 2 consumers", 2, 2, std::size_t{200'000}),
        make_row<contended>("4 threads: 1 producer, 3 consumers", 1, 3, std::size_t{400'000}),
    };
    std::printf("### Throughput (push+pop pairs/s, median of %d rounds, interleaved)\n\n", rounds);
    std::printf("| workload | baseline | tarry::delay_queue | ratio | inbox | ratio |\n");
    std::printf("|---|---:|---:|---:|---:|---:|\n");
    for (const auto& r : rows) {
        std::vector<double> m[3];
        for (int k = 0; k < rounds; ++k)
            for (int q = 0; q < 3; ++q) m[q].push_back(r.run[q]());
        double med[3];
        for (int q = 0; q < 3; ++q) med[q] = median(m[q]);
        std::printf("| %s | %.2f M | %.2f M | **%.2f** | %.2f M | %.2f |\n", r.name.c_str(), med[0] / 1e6,
                    med[1] / 1e6, med[1] / med[0], med[2] / 1e6, med[2] / med[0]);
        std::fflush(stdout);
    }
    std::printf("\n");
}

template <class Q>
std::vector<double> lateness_us() {
    constexpr std::size_t n = 100'000;
    constexpr auto span = std::chrono::seconds(5);
    Q q;
    std::mt19937_64 rng(3);
    const auto start = clk::now() + std::chrono::milliseconds(100);
    std::vector<clk::time_point> due(n);
    for (std::size_t i = 0; i < n; ++i) {
        due[i] = start + std::chrono::nanoseconds(rng() % std::chrono::nanoseconds(span).count());
        q.push(i, due[i]);
    }
    std::vector<double> late;
    late.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const payload v = *q.pop();
        const auto now = clk::now();
        late.push_back(std::chrono::duration<double, std::micro>(now - due[v]).count());
    }
    std::sort(late.begin(), late.end());
    return late;
}

void lateness() {
    std::printf("### Wake-up lateness (100 000 items due uniformly over 5 s, one consumer)\n\n");
    std::printf("| queue | p50 | p99 | max | min |\n|---|---:|---:|---:|---:|\n");
    auto print = [](const char* name, const std::vector<double>& late) {
        auto pct = [&](double p) { return late[static_cast<std::size_t>(p * static_cast<double>(late.size() - 1))]; };
        std::printf("| %s | %.1f µs | %.1f µs | %.1f µs | %.3f µs |\n", name, pct(0.5), pct(0.99), late.back(),
                    late.front());
        std::fflush(stdout);
    };
    print("tarry::delay_queue", lateness_us<tarry_queue>());
    print("baseline (same machine, same load)", lateness_us<baseline_queue>());
    std::printf("\n");
}

long rss_bytes() {
    std::ifstream f("/proc/self/statm");
    long size = 0, resident = 0;
    f >> size >> resident;
    return resident * sysconf(_SC_PAGESIZE);
}

template <class Q>
std::pair<double, double> memory_per_item(std::size_t n, bool ascending) {
    const auto dues = past_dues(n, 5, ascending);
    malloc_trim(0);  // freed memory back to the system: new pages show in RSS
    const std::int64_t live0 = g_live_bytes.load();
    const long rss0 = rss_bytes();
    double alloc = 0, rss = 0;
    {
        Q q;
        for (std::size_t i = 0; i < n; ++i) q.push(i, dues[i]);
        alloc = static_cast<double>(g_live_bytes.load() - live0) / static_cast<double>(n);
        rss = static_cast<double>(rss_bytes() - rss0) / static_cast<double>(n);
    }
    return {alloc - sizeof(payload), rss - sizeof(payload)};
}

void memory() {
    constexpr std::size_t n = 1'000'000;
    std::printf("### Memory per queued item beyond its %zu-byte payload\n\n", sizeof(payload));
    std::printf("| queue | items | allocator | RSS |\n|---|---:|---:|---:|\n");
    for (bool ascending : {false, true}) {
        const char* order = ascending ? "ascending" : "random";
        const auto [a, r] = memory_per_item<tarry_queue>(n, ascending);
        std::printf("| tarry::delay_queue | %zu, %s due | %.1f B | %.1f B |\n", n, order, a, r);
        const auto [ba, br] = memory_per_item<baseline_queue>(n, ascending);
        std::printf("| baseline | %zu, %s due | %.1f B | %.1f B |\n", n, order, ba, br);
    }
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    // A fixed mmap threshold: every large buffer gets fresh pages, so the
    // resident-set deltas of the memory table are not hidden by reuse.
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    std::vector<std::string_view> what(argv + 1, argv + argc);
    auto want = [&](std::string_view w) { return what.empty() || std::find(what.begin(), what.end(), w) != what.end(); };
    std::printf("## delay_queue bench (%u hardware threads)\n\n", std::thread::hardware_concurrency());
    if (want("throughput")) throughput(5);
    if (want("lateness")) lateness();
    if (want("memory")) memory();
}
