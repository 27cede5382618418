// The backwards search for the newest complete checkpoint, driven over a
// stream held in a vector: it reads about one checkpoint, passes over a
// checkpoint whose writer died half-way or whose part is malformed, copes
// with two writers interleaved, stops at the stream's start, and gives up
// after its budget.
#include "tarry/control/checkpoint_search.hpp"
#include "tarry/control/control_stream.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace tarry;

namespace {

const wall_time t0{std::chrono::seconds(1'767'225'690)};

/// A checkpoint of `records` tombstones in parts of ~200 bytes.
std::vector<amqp::message> checkpoint(const std::string& id, std::int64_t covers, int records) {
    control::checkpoint_builder b(200);
    for (int i = 0; i < records; ++i) b.add_tombstone({id + "-job-" + std::to_string(i), 1, t0});
    return std::move(b).finish(id, covers, t0);
}

/// A stream held in a vector. Like RabbitMQ's, its offsets have gaps:
/// every `gap_every` offsets one is taken by an entry never delivered.
struct stream {
    std::int64_t first = 0;  // offset of the first entry
    std::int64_t gap_every = 0;
    std::vector<std::pair<std::int64_t, amqp::message>> entries;
    std::int64_t next = 0;
    std::int64_t append(const amqp::message& m) {
        if (entries.empty()) next = first;
        if (gap_every > 0 && next > first && next % gap_every == 0) ++next;
        entries.emplace_back(next, m);
        return next++;
    }
    void append(const std::vector<amqp::message>& ms) {
        for (const auto& m : ms) append(m);
    }
    std::int64_t end() const { return entries.empty() ? first : entries.back().first + 1; }
    std::int64_t begin() const { return entries.empty() ? first : entries.front().first; }

    /// Runs the search to its end; how many entries it was handed.
    std::size_t search(control::checkpoint_search& s) const {
        std::size_t handed = 0;
        for (int guard = 0; !s.done() && guard < 10'000; ++guard) {
            const auto r = s.next();
            REQUIRE(r);
            REQUIRE(r->from < r->to);
            REQUIRE(r->from >= begin());
            for (const auto& [o, m] : entries) {
                if (o < r->from || o >= r->to) continue;
                s.entry(o, m);
                ++handed;
            }
            s.range_read();
        }
        REQUIRE(s.done());
        return handed;
    }
    control::checkpoint_search searcher(std::size_t max_entries = 20'000) const {
        return control::checkpoint_search(begin(), end(), max_entries);
    }
};

std::string found_id(const control::checkpoint_search& s) { return s.found() ? s.found()->id : "none"; }

}  // namespace

TEST_CASE("checkpoint search: the newest checkpoint, read from the end, about its size and no more") {
    stream st;
    for (int i = 0; i < 50; ++i) st.append(control::marker_message("m" + std::to_string(i)));
    st.append(checkpoint("old", 10, 40));
    for (int i = 0; i < 5; ++i) st.append(control::marker_message("x" + std::to_string(i)));
    const auto newest = checkpoint("new", 20, 40);
    REQUIRE(newest.size() > 3);
    st.append(newest);
    const auto mine = st.append(control::marker_message("mine"));
    control::checkpoint_search s(st.begin(), mine);  // up to the reader's own marker
    const auto handed = st.search(s);
    REQUIRE(s.found());
    CHECK(s.found()->id == "new");
    CHECK(s.found()->covers == 20);
    REQUIRE(s.found()->parts.size() == newest.size());
    for (std::size_t i = 0; i < newest.size(); ++i) CHECK(s.found()->parts[i].body == newest[i].body);
    CHECK(handed == newest.size());
}

TEST_CASE("checkpoint search: markers after the newest checkpoint are stepped over") {
    stream st;
    st.append(checkpoint("cp", 3, 10));
    for (int i = 0; i < 300; ++i) st.append(control::marker_message("m" + std::to_string(i)));
    auto s = st.searcher();
    const auto handed = st.search(s);
    CHECK(found_id(s) == "cp");
    CHECK(handed < 300 + 300);  // the blind steps double: at most about twice what lies between
}

TEST_CASE("checkpoint search: a checkpoint whose writer died half-way is passed over for the one before") {
    stream st;
    st.append(checkpoint("whole", 5, 30));
    auto half = checkpoint("half", 9, 30);
    half.pop_back();  // its last part never written
    st.append(half);
    auto a = st.searcher();
    st.search(a);
    CHECK(found_id(a) == "whole");

    // Its last part written, one before it lost (beyond retention, say).
    stream st2;
    st2.append(checkpoint("whole", 5, 30));
    auto gap = checkpoint("gap", 9, 30);
    gap.erase(gap.begin() + 1);
    st2.append(gap);
    auto b = st2.searcher();
    st2.search(b);
    CHECK(found_id(b) == "whole");
}

TEST_CASE("checkpoint search: two writers at once, their parts interleaved: the one that ended last") {
    stream st;
    const auto a = checkpoint("a", 7, 30);
    const auto b = checkpoint("b", 8, 30);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        st.append(a[i]);
        st.append(b[i]);
    }
    auto s = st.searcher();
    st.search(s);
    CHECK(found_id(s) == "b");
    CHECK(s.found()->covers == 8);
}

TEST_CASE("checkpoint search: a malformed part is reported and its checkpoint passed over") {
    stream st;
    st.append(checkpoint("good", 1, 10));
    auto bad = checkpoint("bad", 2, 10);
    bad.back().body.push_back('?');  // an unknown record
    st.append(bad);
    auto worse = checkpoint("worse", 3, 10);
    worse.front().properties.headers->set("x-tarry-parts", std::string("many"));
    st.append(worse);
    auto s = st.searcher();
    st.search(s);
    CHECK(found_id(s) == "good");
    REQUIRE(s.skipped().size() >= 2);
    bool told_bad = false;
    for (const auto& w : s.skipped()) told_bad = told_bad || w.find("'bad'") != std::string::npos;
    CHECK(told_bad);
}

TEST_CASE("checkpoint search: none in the stream, an empty stream, a trimmed start, a budget") {
    stream markers;
    for (int i = 0; i < 100; ++i) markers.append(control::marker_message("m" + std::to_string(i)));
    auto a = markers.searcher();
    CHECK(markers.search(a) == 100);
    CHECK_FALSE(a.found());
    CHECK(a.why_none().find("no complete checkpoint") != std::string::npos);

    control::checkpoint_search empty(0, 0);
    CHECK(empty.done());
    CHECK_FALSE(empty.next());
    CHECK_FALSE(empty.found());

    // Retention took the first part: the stream begins past it.
    stream trimmed;
    trimmed.first = 1000;
    trimmed.append(checkpoint("cp", 1, 30));
    trimmed.entries.erase(trimmed.entries.begin());
    auto t = trimmed.searcher();
    trimmed.search(t);
    CHECK_FALSE(t.found());

    auto budget = markers.searcher(10);
    CHECK(markers.search(budget) <= 16);
    CHECK_FALSE(budget.found());
    CHECK(budget.why_none().find("within the last") != std::string::npos);
}

TEST_CASE("checkpoint search: many large checkpoints, the newest cut short by a stop: the one before it") {
    stream st;
    for (const char* id : {"a", "b", "c"}) st.append(checkpoint(id, 1, 400));
    auto cut = checkpoint("d", 2, 400);
    REQUIRE(cut.size() > 40);
    cut.resize(cut.size() / 2);  // its writer stopped half-way
    st.append(cut);
    st.append(control::marker_message("mine"));
    auto s = st.searcher();
    st.search(s);
    CHECK(found_id(s) == "c");
}

TEST_CASE("checkpoint search: offsets with gaps (a segment's first offset is never delivered): found all the same") {
    for (std::int64_t every : {2, 3, 9}) {
        CAPTURE(every);
        stream st;
        st.gap_every = every;
        st.append(checkpoint("old", 1, 200));
        for (int i = 0; i < 7; ++i) st.append(control::marker_message("m" + std::to_string(i)));
        auto cut = checkpoint("cut", 2, 200);
        cut.resize(cut.size() / 2);
        st.append(cut);
        st.append(control::marker_message("mine"));
        auto s = st.searcher();
        st.search(s);
        CHECK(found_id(s) == "old");
    }
}
