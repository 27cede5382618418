// sorted_blocks: an ordered sequence kept as a shallow tree of small sorted
// arrays (a B+-tree of fixed height three: a root array of groups, each group
// an array of leaves, each leaf a sorted array of elements).
//
// Why this and not a heap: delay_queue needs both ends (the earliest item to
// pop, the latest to evict). Here both are O(1): the least element is the
// front of the first leaf, the greatest the back of the last. An element
// greater than all others (the common case for due times: "now + delay") is
// appended in O(1); any other insert is three binary searches and a shift
// within one leaf (or, when that leaf is full, within it and a neighbour it
// spills into, so leaves stay about 86 % full under random inserts). See
// docs/delay-queue.md for the measurements against a binary heap and a
// min-max heap.
//
// Internal to delay_queue. Not thread-safe. Elements must be nothrow-movable;
// KeyOf maps an element to a small, trivially copyable key whose operator<
// is a strict total order (no two elements may have equal keys).
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace tarry::detail {

template <class E, class KeyOf>
class sorted_blocks {
    static_assert(std::is_nothrow_move_constructible_v<E> && std::is_nothrow_move_assignable_v<E>);
    using key = std::invoke_result_t<KeyOf, const E&>;
    static_assert(std::is_trivially_copyable_v<key>);

    // About 4 KiB of elements per leaf; 128 leaves per group.
    static constexpr std::size_t leaf_cap = std::clamp<std::size_t>(4096 / sizeof(E), 16, 256);
    static constexpr std::size_t group_cap = 128;

    struct leaf {
        std::vector<E> v;  // sorted; live elements are v[lo, end), the ones before are moved-from
        std::size_t lo = 0;

        leaf() { v.reserve(leaf_cap); }  // never reallocates afterwards
        bool empty() const noexcept { return lo == v.size(); }
        std::size_t size() const noexcept { return v.size() - lo; }
        typename std::vector<E>::iterator begin() noexcept { return v.begin() + static_cast<std::ptrdiff_t>(lo); }
    };

    struct group {
        std::vector<std::unique_ptr<leaf>> leaves;  // non-empty, in order
        std::vector<key> last;                      // last[i]: key of leaves[i]'s greatest element

        // One more than group_cap: a full group takes the leaf that makes it
        // split without reallocating.
        group() {
            leaves.reserve(group_cap + 1);
            last.reserve(group_cap + 1);
        }
    };

public:
    /// Elements a leaf holds at most (each leaf is allocated whole).
    static constexpr std::size_t leaf_capacity = leaf_cap;

    bool empty() const noexcept { return size_ == 0; }
    /// Leaves allocated now: memory is about leaf_count() × leaf_capacity elements.
    std::size_t leaf_count() const noexcept {
        std::size_t n = 0;
        for (const auto& G : groups_) n += G->leaves.size();
        return n;
    }
    std::size_t size() const noexcept { return size_; }

    const E& min() const noexcept {
        const leaf& l = *groups_.front()->leaves.front();
        return l.v[l.lo];
    }
    const E& max() const noexcept { return groups_.back()->leaves.back()->v.back(); }

    /// Strong guarantee: if an allocation throws, nothing changed.
    void push(E e) {
        const key k = key_of(e);
        if (groups_.empty() || !(k < group_last_.back())) {
            append(std::move(e), k);
            return;
        }
        // The first group, then leaf, whose greatest element is greater than
        // e: e goes before that element, so no "last" key changes unless a
        // leaf splits.
        const std::size_t g = first_greater(group_last_, k);
        group& G = *groups_[g];
        const std::size_t l = first_greater(G.last, k);
        leaf& L = *G.leaves[l];
        if (L.v.size() == leaf_cap && L.lo > 0) compact(L);
        if (L.v.size() < leaf_cap) {
            insert_sorted(L, std::move(e), k);
        } else if (!spill_and_insert(G, l, std::move(e), k)) {
            split_leaf_and_insert(g, l, std::move(e), k);
        }
        ++size_;
    }

    E pop_min() noexcept {
        group& G = *groups_.front();
        leaf& L = *G.leaves.front();
        E out = std::move(L.v[L.lo++]);
        --size_;
        if (L.empty()) {
            G.leaves.erase(G.leaves.begin());
            G.last.erase(G.last.begin());
            if (G.leaves.empty()) {
                groups_.erase(groups_.begin());
                group_last_.erase(group_last_.begin());
            }
        }
        return out;
    }

    E pop_max() noexcept {
        group& G = *groups_.back();
        leaf& L = *G.leaves.back();
        E out = std::move(L.v.back());
        L.v.pop_back();
        --size_;
        if (L.empty()) {
            G.leaves.pop_back();
            G.last.pop_back();
            if (G.leaves.empty()) {
                groups_.pop_back();
                group_last_.pop_back();
                return out;
            }
        } else {
            G.last.back() = key_of(L.v.back());
        }
        group_last_.back() = G.last.back();
        return out;
    }

    /// Calls f(const E&) on every element, least first.
    template <class F>
    void for_each(F&& f) const {
        for (const auto& G : groups_)
            for (const auto& L : G->leaves)
                for (std::size_t i = L->lo; i < L->v.size(); ++i) f(std::as_const(L->v[i]));
    }

    /// Calls f(const E&) on the elements whose key is greater than *after
    /// (every element when after is null), least first, until f returns
    /// false: O(log n) to find the first, then O(1) per element.
    template <class F>
    void visit_after(const key* after, F&& f) const {
        if (groups_.empty() || (after != nullptr && !(*after < group_last_.back()))) return;
        std::size_t g = 0;
        std::size_t l = 0;
        std::size_t i = groups_.front()->leaves.front()->lo;
        if (after != nullptr) {
            g = first_greater(group_last_, *after);
            const group& G = *groups_[g];
            l = first_greater(G.last, *after);
            const leaf& L = *G.leaves[l];
            const auto from = L.v.begin() + static_cast<std::ptrdiff_t>(L.lo);
            const auto at = std::upper_bound(from, L.v.end(), *after,
                                             [](const key& a, const E& b) { return a < key_of(b); });
            i = static_cast<std::size_t>(at - L.v.begin());
        }
        for (; g < groups_.size(); ++g, l = 0) {
            const group& G = *groups_[g];
            for (; l < G.leaves.size(); ++l) {
                const leaf& L = *G.leaves[l];
                for (i = std::max(i, L.lo); i < L.v.size(); ++i)
                    if (!f(std::as_const(L.v[i]))) return;
                i = 0;
            }
        }
    }

    /// Moves the elements whose position in for_each() order has hit[i] set
    /// to the end of out, least first. out must have room for them (reserve
    /// first); hit must have size() entries. Leaves are compacted in place
    /// and empty ones dropped: nothing is allocated.
    void extract_marked(const std::vector<bool>& hit, std::vector<E>& out) noexcept {
        std::size_t i = 0;
        for (std::size_t g = 0; g < groups_.size(); ++g) {
            group& G = *groups_[g];
            for (std::size_t l = 0; l < G.leaves.size(); ++l) {
                leaf& L = *G.leaves[l];
                std::size_t keep = 0;
                for (std::size_t j = L.lo; j < L.v.size(); ++j, ++i) {
                    if (hit[i]) {
                        out.push_back(std::move(L.v[j]));
                        --size_;
                    } else {
                        if (keep != j) L.v[keep] = std::move(L.v[j]);
                        ++keep;
                    }
                }
                L.lo = 0;
                while (L.v.size() > keep) L.v.pop_back();
                if (!L.v.empty()) G.last[l] = key_of(L.v.back());
            }
            drop_empty_leaves(G);
            if (!G.last.empty()) group_last_[g] = G.last.back();
        }
        std::size_t keep = 0;
        for (std::size_t g = 0; g < groups_.size(); ++g) {
            if (groups_[g]->leaves.empty()) continue;
            if (keep != g) {
                groups_[keep] = std::move(groups_[g]);
                group_last_[keep] = group_last_[g];
            }
            ++keep;
        }
        groups_.erase(groups_.begin() + static_cast<std::ptrdiff_t>(keep), groups_.end());
        group_last_.erase(group_last_.begin() + static_cast<std::ptrdiff_t>(keep), group_last_.end());
    }

    /// Moves out every element, least first, and leaves this empty.
    std::vector<E> extract_all() {
        std::vector<E> out;
        out.reserve(size_);
        for (auto& G : groups_)
            for (auto& L : G->leaves)
                for (std::size_t i = L->lo; i < L->v.size(); ++i) out.push_back(std::move(L->v[i]));
        groups_.clear();
        group_last_.clear();
        size_ = 0;
        return out;
    }

private:
    static key key_of(const E& e) noexcept { return KeyOf{}(e); }

    static std::size_t first_greater(const std::vector<key>& keys, const key& k) noexcept {
        // Callers ensure k < keys.back(), so the result is a valid index.
        return static_cast<std::size_t>(std::upper_bound(keys.begin(), keys.end(), k) - keys.begin());
    }

    static void compact(leaf& L) noexcept {
        std::move(L.begin(), L.v.end(), L.v.begin());
        const std::size_t n = L.size();
        while (L.v.size() > n) L.v.pop_back();
        L.lo = 0;
    }

    // Room is known to be there: no allocation.
    static void insert_sorted(leaf& L, E&& e, const key& k) noexcept {
        auto pos = std::upper_bound(L.begin(), L.v.end(), k,
                                    [](const key& a, const E& b) { return a < key_of(b); });
        L.v.insert(pos, std::move(e));
    }

    // e is greater than every element: it goes at the very end.
    void append(E&& e, const key& k) {
        if (!groups_.empty()) {
            group& G = *groups_.back();
            leaf& L = *G.leaves.back();
            if (L.v.size() == leaf_cap && L.lo > 0) compact(L);
            if (L.v.size() < leaf_cap) {
                L.v.push_back(std::move(e));
                G.last.back() = k;
                group_last_.back() = k;
                ++size_;
                return;
            }
            if (G.leaves.size() < group_cap) {
                auto fresh = std::make_unique<leaf>();
                fresh->v.push_back(std::move(e));
                G.leaves.push_back(std::move(fresh));  // capacity reserved: no throw
                G.last.push_back(k);
                group_last_.back() = k;
                ++size_;
                return;
            }
        }
        // A new group (and leaf). Everything that may throw comes first.
        auto fresh_group = std::make_unique<group>();
        auto fresh_leaf = std::make_unique<leaf>();
        groups_.reserve(groups_.size() + 1);
        group_last_.reserve(group_last_.size() + 1);
        fresh_leaf->v.push_back(std::move(e));
        fresh_group->leaves.push_back(std::move(fresh_leaf));
        fresh_group->last.push_back(k);
        groups_.push_back(std::move(fresh_group));
        group_last_.push_back(k);
        ++size_;
    }

    // Leaf l of G is full (and packed). If a neighbour in G has room for
    // two more, half the difference in sizes moves there (the greatest
    // elements to the next leaf's front, or the least to the previous leaf's
    // back), then e goes where it belongs: both leaves have room for it. No
    // allocation. False when neither neighbour has room. Halving a full leaf
    // only when its neighbours are (nearly) full too keeps leaves about 86 %
    // full under random pushes instead of 69 %, and memory with them.
    static bool spill_and_insert(group& G, std::size_t l, E&& e, const key& k) noexcept {
        leaf& L = *G.leaves[l];
        if (l + 1 < G.leaves.size() && G.leaves[l + 1]->size() + 2 <= leaf_cap) {
            leaf& R = *G.leaves[l + 1];
            const std::size_t m = (leaf_cap - R.size() + 1) / 2;
            const auto from = L.v.end() - static_cast<std::ptrdiff_t>(m);
            if (R.lo >= m) {
                R.lo -= m;
                std::move(from, L.v.end(), R.begin());
            } else {
                if (R.lo > 0) compact(R);
                R.v.insert(R.v.begin(), std::make_move_iterator(from), std::make_move_iterator(L.v.end()));
            }
            while (L.v.size() > leaf_cap - m) L.v.pop_back();
            // R's greatest element, and so G.last[l + 1], stays (e is less).
            insert_sorted(k < key_of(L.v.back()) ? L : R, std::move(e), k);
            G.last[l] = key_of(L.v.back());
            return true;
        }
        if (l > 0 && G.leaves[l - 1]->size() + 2 <= leaf_cap) {
            leaf& P = *G.leaves[l - 1];
            if (P.lo > 0) compact(P);
            const std::size_t m = (leaf_cap - P.size() + 1) / 2;
            const auto to = L.v.begin() + static_cast<std::ptrdiff_t>(m);
            P.v.insert(P.v.end(), std::make_move_iterator(L.v.begin()), std::make_move_iterator(to));
            L.v.erase(L.v.begin(), to);
            // L's greatest element, and so G.last[l], stays (e is less).
            insert_sorted(k < key_of(P.v.back()) ? P : L, std::move(e), k);
            G.last[l - 1] = key_of(P.v.back());
            return true;
        }
        return false;
    }

    // Leaf l of group g is full (and packed). Splits it in two halves, and the
    // group too if that is full, then inserts e where it belongs.
    void split_leaf_and_insert(std::size_t g, std::size_t l, E&& e, const key& k) {
        group& G = *groups_[g];
        auto upper = std::make_unique<leaf>();
        std::unique_ptr<group> next;  // the upper half of G, if G must split
        if (G.leaves.size() == group_cap) {
            next = std::make_unique<group>();
            groups_.reserve(groups_.size() + 1);
            group_last_.reserve(group_last_.size() + 1);
        }
        // No allocation from here on.
        leaf& L = *G.leaves[l];
        const std::size_t half = leaf_cap / 2;
        std::move(L.v.begin() + static_cast<std::ptrdiff_t>(half), L.v.end(), std::back_inserter(upper->v));
        while (L.v.size() > half) L.v.pop_back();
        insert_sorted(k < key_of(upper->v.front()) ? L : *upper, std::move(e), k);
        G.last[l] = key_of(L.v.back());
        const key upper_last = key_of(upper->v.back());
        G.leaves.insert(G.leaves.begin() + static_cast<std::ptrdiff_t>(l + 1), std::move(upper));
        G.last.insert(G.last.begin() + static_cast<std::ptrdiff_t>(l + 1), upper_last);
        if (!next) return;
        // G now holds group_cap + 1 leaves: its upper half moves to next.
        const std::size_t gh = G.leaves.size() / 2;
        std::move(G.leaves.begin() + static_cast<std::ptrdiff_t>(gh), G.leaves.end(), std::back_inserter(next->leaves));
        std::copy(G.last.begin() + static_cast<std::ptrdiff_t>(gh), G.last.end(), std::back_inserter(next->last));
        G.leaves.erase(G.leaves.begin() + static_cast<std::ptrdiff_t>(gh), G.leaves.end());
        G.last.erase(G.last.begin() + static_cast<std::ptrdiff_t>(gh), G.last.end());
        group_last_[g] = G.last.back();
        const key next_last = next->last.back();
        groups_.insert(groups_.begin() + static_cast<std::ptrdiff_t>(g + 1), std::move(next));
        group_last_.insert(group_last_.begin() + static_cast<std::ptrdiff_t>(g + 1), next_last);
    }

    static void drop_empty_leaves(group& G) noexcept {
        std::size_t keep = 0;
        for (std::size_t l = 0; l < G.leaves.size(); ++l) {
            if (G.leaves[l]->empty()) continue;
            if (keep != l) {
                G.leaves[keep] = std::move(G.leaves[l]);
                G.last[keep] = G.last[l];
            }
            ++keep;
        }
        G.leaves.erase(G.leaves.begin() + static_cast<std::ptrdiff_t>(keep), G.leaves.end());
        G.last.erase(G.last.begin() + static_cast<std::ptrdiff_t>(keep), G.last.end());
    }

    std::vector<std::unique_ptr<group>> groups_;  // non-empty, in order
    std::vector<key> group_last_;                 // group_last_[g]: key of groups_[g]'s greatest element
    std::size_t size_ = 0;
};

}  // namespace tarry::detail
