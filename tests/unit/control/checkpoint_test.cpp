// A checkpoint's parts: built from records and read back record for record,
// split at the part size, and every malformed part or body refused with a
// reason (never a throw, never a record made up).
#include "tarry/control/checkpoint.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

using namespace tarry;
using namespace std::chrono_literals;

namespace {

const wall_time t0{std::chrono::seconds(1'767'225'690)};

struct collected {
    std::vector<control::tombstone> tombstones, supersessions;
    std::vector<control::run_claim> claims;
    control::checkpoint_visitor visitor() {
        return {[this](const control::tombstone& t) { tombstones.push_back(t); },
                [this](const control::tombstone& t) { supersessions.push_back(t); },
                [this](const control::run_claim& c) { claims.push_back(c); }};
    }
};

collected read_all(const std::vector<amqp::message>& parts) {
    collected c;
    for (const auto& p : parts) {
        std::string why;
        REQUIRE_MESSAGE(control::read_checkpoint_records(p.body, c.visitor(), why), why);
    }
    return c;
}

}  // namespace

TEST_CASE("checkpoint: records come back as they went in, in order, with each part's place") {
    control::checkpoint_builder b;
    b.add_tombstone({"job-1", 100, t0});
    b.add_supersession({"nightly", 200, t0 + 1s});
    b.add_claim("nightly@1767225600", "copy-a", t0 + 2s);
    b.add_tombstone({std::string(255, 'x'), 1, t0 + 3s});
    CHECK(b.records() == 4);
    const auto parts = std::move(b).finish("cp-1", 4242, t0);
    REQUIRE(parts.size() == 1);
    std::string why;
    const auto part = control::read_checkpoint_part(parts[0].properties, why);
    REQUIRE_MESSAGE(part, why);
    CHECK(*part == control::checkpoint_part{"cp-1", 0, 1, 4242});
    CHECK(parts[0].properties.delivery_mode == 2);
    const auto c = read_all(parts);
    REQUIRE(c.tombstones.size() == 2);
    CHECK(c.tombstones[0] == control::tombstone{"job-1", 100, t0});
    CHECK(c.tombstones[1] == control::tombstone{std::string(255, 'x'), 1, t0 + 3s});
    REQUIRE(c.supersessions.size() == 1);
    CHECK(c.supersessions[0] == control::tombstone{"nightly", 200, t0 + 1s});
    REQUIRE(c.claims.size() == 1);
    CHECK(c.claims[0].occurrence_id == "nightly@1767225600");
    CHECK(c.claims[0].copy == "copy-a");
    CHECK(c.claims[0].written == t0 + 2s);
}

TEST_CASE("checkpoint: split into parts of about the part size, numbered, each naming the whole") {
    control::checkpoint_builder b(1000);
    for (int i = 0; i < 500; ++i) b.add_tombstone({"job-" + std::to_string(i), 7, t0});
    const auto parts = std::move(b).finish("cp-2", 9, t0);
    REQUIRE(parts.size() > 5);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        std::string why;
        const auto p = control::read_checkpoint_part(parts[i].properties, why);
        REQUIRE(p);
        CHECK(p->part == i);
        CHECK(p->parts == parts.size());
        CHECK(parts[i].body.size() < 1000 + 64);
    }
    const auto c = read_all(parts);
    REQUIRE(c.tombstones.size() == 500);
    CHECK(c.tombstones.front().job_id == "job-0");
    CHECK(c.tombstones.back().job_id == "job-499");
}

TEST_CASE("checkpoint: an empty one is one part with no record") {
    const auto parts = control::checkpoint_builder().finish("cp-empty", 0, t0);
    REQUIRE(parts.size() == 1);
    const auto c = read_all(parts);
    CHECK(c.tombstones.empty());
    CHECK(c.claims.empty());
}

TEST_CASE("checkpoint: other entries are no part; malformed parts say why") {
    std::string why;
    amqp::basic_properties other;
    other.type = "tarry.tombstone";
    CHECK_FALSE(control::read_checkpoint_part(other, why));
    CHECK(why.empty());

    const auto good = control::checkpoint_builder().finish("cp", 5, t0)[0].properties;
    auto no_id = good;
    no_id.message_id.reset();
    CHECK_FALSE(control::read_checkpoint_part(no_id, why));
    CHECK(why.find("message_id") != std::string::npos);

    auto beyond = good;
    beyond.headers->set("x-tarry-part", std::int64_t{1});  // part 1 of 1
    CHECK_FALSE(control::read_checkpoint_part(beyond, why));
    CHECK(why.find("part 1 of 1") != std::string::npos);

    auto none = good;
    none.headers->set("x-tarry-parts", std::int64_t{0});
    CHECK_FALSE(control::read_checkpoint_part(none, why));

    auto negative = good;
    negative.headers->set("x-tarry-covers", std::int64_t{-1});
    CHECK_FALSE(control::read_checkpoint_part(negative, why));
    CHECK(why.find("-1") != std::string::npos);

    auto text = good;
    text.headers->set("x-tarry-covers", std::string("12"));
    CHECK_FALSE(control::read_checkpoint_part(text, why));
    CHECK(why.find("x-tarry-covers") != std::string::npos);
}

TEST_CASE("checkpoint: malformed bodies are refused with a reason, the records before handed on") {
    control::checkpoint_builder b;
    b.add_tombstone({"a", 1, t0});
    b.add_claim("s@1", "c", t0);
    const auto body = std::move(b).finish("cp", 1, t0)[0].body;
    std::string why;
    collected c;

    CHECK_FALSE(control::read_checkpoint_records({}, c.visitor(), why));
    CHECK(why.find("empty") != std::string::npos);

    auto v2 = body;
    v2[0] = 2;
    CHECK_FALSE(control::read_checkpoint_records(v2, c.visitor(), why));
    CHECK(why.find("format 2") != std::string::npos);

    auto unknown = body;
    unknown.push_back('z');
    c = {};
    CHECK_FALSE(control::read_checkpoint_records(unknown, c.visitor(), why));
    CHECK(why.find("unknown kind") != std::string::npos);
    CHECK(c.tombstones.size() == 1);
    CHECK(c.claims.size() == 1);

    // Every truncation of a valid body is refused, none throws, but the one
    // at the end of the first record (version, kind, "a", u64, i64).
    const std::size_t first_record_ends = 1 + 1 + 2 + 8 + 8;
    for (std::size_t n = 2; n < body.size(); ++n) {
        const std::vector<std::uint8_t> cut(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(n));
        collected d;
        CHECK(control::read_checkpoint_records(cut, d.visitor(), why) == (n == first_record_ends));
        CHECK(why.empty() == (n == first_record_ends));
    }

    // An empty id.
    const std::vector<std::uint8_t> empty_id{1, 't', 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
    CHECK_FALSE(control::read_checkpoint_records(empty_id, c.visitor(), why));
    CHECK(why.find("empty id") != std::string::npos);
}

TEST_CASE("checkpoint: the announcement in the control stream, written and read; malformed ones say why") {
    const control::checkpointed c{"cp-9", 77, t0};
    const auto m = control::to_entry(c);
    std::string why;
    const auto back = control::read_checkpointed(m.properties, why);
    REQUIRE_MESSAGE(back, why);
    CHECK(*back == c);
    CHECK(m.body.empty());

    amqp::basic_properties other;
    other.type = "tarry.marker";
    CHECK_FALSE(control::read_checkpointed(other, why));
    CHECK(why.empty());

    auto no_covers = m.properties;
    no_covers.headers.reset();
    CHECK_FALSE(control::read_checkpointed(no_covers, why));
    CHECK(why.find("x-tarry-covers") != std::string::npos);
    auto no_time = m.properties;
    no_time.timestamp.reset();
    CHECK_FALSE(control::read_checkpointed(no_time, why));
    CHECK_FALSE(why.empty());
}
