// A min-max heap (Atkinson, Sack, Santoro, Strothotte 1986) over a vector:
// the least and the greatest element are both found in O(1) and removed in
// O(log n). Elements on even levels are <= all their descendants, elements on
// odd levels are >= all their descendants.
//
// Not part of the library: delay_queue was measured on it before its sorted
// blocks were chosen (docs/delay-queue.md), and delay_queue_bench keeps it as
// the heap of the lock-free inbox candidate.
//
// Not thread-safe. Elements must be nothrow-movable; the comparator must be a
// strict weak order and must not throw. Sifting moves a hole instead of
// swapping, one move per level.
#pragma once

#include <bit>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace bench {

template <class E, class Less>
class min_max_heap {
    static_assert(std::is_nothrow_move_constructible_v<E> && std::is_nothrow_move_assignable_v<E>);

public:
    bool empty() const noexcept { return v_.empty(); }
    std::size_t size() const noexcept { return v_.size(); }
    std::size_t capacity() const noexcept { return v_.capacity(); }
    void reserve(std::size_t n) { v_.reserve(n); }

    const E& min() const noexcept { return v_[0]; }
    const E& max() const noexcept { return v_[max_index()]; }

    /// Strong guarantee: if growing the vector throws, nothing changed.
    void push(E e) {
        v_.push_back(std::move(e));
        bubble_up(v_.size() - 1);
    }

    E pop_min() noexcept { return take(0); }
    E pop_max() noexcept { return take(max_index()); }

    /// Moves the elements at the indexes where hit[i] is true to the end of
    /// out (in storage order) and restores the heap in O(n). out must have
    /// room for them (reserve first); hit must have size() entries.
    void extract_marked(const std::vector<bool>& hit, std::vector<E>& out) noexcept {
        std::size_t keep = 0;
        for (std::size_t i = 0; i < v_.size(); ++i) {
            if (hit[i])
                out.push_back(std::move(v_[i]));
            else if (keep++ != i)
                v_[keep - 1] = std::move(v_[i]);  // keep - 1 < i: never a self-move
        }
        if (keep == v_.size()) return;
        while (v_.size() > keep) v_.pop_back();
        rebuild();
    }

    /// Moves out every element (in no particular order) and leaves the heap
    /// empty.
    std::vector<E> extract_all() noexcept { return std::exchange(v_, {}); }

    /// Calls f(const E&) on every element, in storage order (the order
    /// extract_marked() indexes).
    template <class F>
    void for_each(F&& f) const {
        for (const E& e : v_) f(e);
    }

    /// The elements in storage order, for checks and tests.
    const std::vector<E>& data() const noexcept { return v_; }

private:
    static bool min_level(std::size_t i) noexcept { return (std::bit_width(i + 1) & 1U) == 1U; }
    static std::size_t parent(std::size_t i) noexcept { return (i - 1) / 2; }

    bool less(const E& a, const E& b) const noexcept { return less_(a, b); }

    std::size_t max_index() const noexcept {
        if (v_.size() < 2) return 0;
        if (v_.size() == 2) return 1;
        return less(v_[1], v_[2]) ? 2 : 1;
    }

    E take(std::size_t i) noexcept {
        E out = std::move(v_[i]);
        E last = std::move(v_.back());
        v_.pop_back();
        if (i < v_.size()) trickle_down(i, std::move(last));
        return out;
    }

    void rebuild() noexcept {
        for (std::size_t i = v_.size() / 2; i-- > 0;) trickle_down(i, std::move(v_[i]));
    }

    // ---- up --------------------------------------------------------------
    void bubble_up(std::size_t i) noexcept {
        if (i == 0) return;
        E x = std::move(v_[i]);
        const std::size_t p = parent(i);
        if (min_level(i)) {
            if (less(v_[p], x)) {  // belongs among the max levels above
                v_[i] = std::move(v_[p]);
                climb<true>(p, std::move(x));
            } else {
                climb<false>(i, std::move(x));
            }
        } else {
            if (less(x, v_[p])) {  // belongs among the min levels above
                v_[i] = std::move(v_[p]);
                climb<false>(p, std::move(x));
            } else {
                climb<true>(i, std::move(x));
            }
        }
    }

    // Moves the hole at i up by grandparents while x beats them.
    template <bool Max>
    void climb(std::size_t i, E x) noexcept {
        while (i > 2) {
            const std::size_t g = parent(parent(i));
            if (!(Max ? less(v_[g], x) : less(x, v_[g]))) break;
            v_[i] = std::move(v_[g]);
            i = g;
        }
        v_[i] = std::move(x);
    }

    // ---- down ------------------------------------------------------------
    void trickle_down(std::size_t i, E x) noexcept {
        if (min_level(i))
            sink<false>(i, std::move(x));
        else
            sink<true>(i, std::move(x));
    }

    // Places x at the hole i, sinking it (and the hole) down by grandchildren.
    // For Max = false "better" means smaller, for Max = true larger.
    template <bool Max>
    void sink(std::size_t i, E x) noexcept {
        auto better = [this](const E& a, const E& b) { return Max ? less(b, a) : less(a, b); };
        const std::size_t n = v_.size();
        for (;;) {
            const std::size_t c = 2 * i + 1;
            if (c >= n) break;
            std::size_t m = c;
            if (c + 1 < n && better(v_[c + 1], v_[m])) m = c + 1;
            const std::size_t g = 4 * i + 3;
            const std::size_t g_end = g + 4 < n ? g + 4 : n;
            for (std::size_t k = g; k < g_end; ++k)
                if (better(v_[k], v_[m])) m = k;
            if (!better(v_[m], x)) break;
            v_[i] = std::move(v_[m]);
            i = m;
            if (m < g) break;  // a child: it has no descendants x must beat
            // x sits at a grandchild; if that grandchild's parent (of the
            // opposite kind) beats x, they trade places and the parent's old
            // element sinks on.
            const std::size_t p = parent(m);
            if (better(v_[p], x)) {
                using std::swap;
                swap(x, v_[p]);
            }
        }
        v_[i] = std::move(x);
    }

    std::vector<E> v_;
    [[no_unique_address]] Less less_{};
};

}  // namespace bench
