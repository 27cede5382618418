// The headers that make a job an occurrence of a schedule: written,
// replaced, read back, refused when malformed; and fresh copy ids.
#include "tarry/contract/occurrence_headers.hpp"

#include "tarry/amqp/wire/field_table.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace contract = tarry::contract;
namespace wire = tarry::amqp::wire;

namespace {

contract::occurrence_headers sample() {
    return {"nightly-report", "1795613700", "cron 0 3 * * * Europe/Paris", 4, "0123456789abcdef0123456789abcdef"};
}

contract::occurrence_headers other() {
    return {"hourly-sync", "1795617300", "every 1h", 9, "fedcba9876543210fedcba9876543210"};
}

wire::basic_properties written(const contract::occurrence_headers& o) {
    wire::basic_properties p;
    contract::write_occurrence(p, o);
    return p;
}

std::size_t count_named(const wire::field_table& t, std::string_view name) {
    std::size_t n = 0;
    for (const auto& e : t.entries()) n += e.name == name ? 1 : 0;
    return n;
}

const std::vector<std::string_view> string_headers = {contract::schedule_header, contract::nominal_header,
                                                      contract::spec_header, contract::copy_header};

const std::vector<std::string_view> all_headers = {contract::schedule_header, contract::nominal_header,
                                                   contract::spec_header, contract::occurrence_header,
                                                   contract::copy_header};

}  // namespace

TEST_CASE("an occurrence's id is its schedule id and nominal text joined by '@'") {
    CHECK(sample().id() == "nightly-report@1795613700");
    CHECK(other().id() == "hourly-sync@1795617300");
}

TEST_CASE("an occurrence's headers read back as written") {
    std::string why = "stale";
    const auto back = contract::read_occurrence(written(sample()), why);
    REQUIRE(back);
    CHECK(why.empty());
    CHECK(*back == sample());
}

TEST_CASE("writing an occurrence creates the headers as strings and a signed 64-bit number") {
    const auto p = written(sample());
    REQUIRE(p.headers);
    CHECK(p.headers->size() == 5);
    REQUIRE(p.headers->find(contract::schedule_header));
    CHECK(*p.headers->find(contract::schedule_header)->get_if<std::string>() == "nightly-report");
    CHECK(*p.headers->find(contract::nominal_header)->get_if<std::string>() == "1795613700");
    CHECK(*p.headers->find(contract::spec_header)->get_if<std::string>() == "cron 0 3 * * * Europe/Paris");
    CHECK(*p.headers->find(contract::copy_header)->get_if<std::string>() == "0123456789abcdef0123456789abcdef");
    REQUIRE(p.headers->find(contract::occurrence_header));
    REQUIRE(p.headers->find(contract::occurrence_header)->get_if<std::int64_t>());
    CHECK(*p.headers->find(contract::occurrence_header)->get_if<std::int64_t>() == 4);
}

TEST_CASE("writing an occurrence sets message_id to the occurrence's id") {
    wire::basic_properties p;
    p.message_id = std::string("job-7");
    contract::write_occurrence(p, sample());
    CHECK(p.message_id == std::string("nightly-report@1795613700"));
}

TEST_CASE("writing an occurrence twice replaces its headers and keeps the others") {
    wire::basic_properties p;
    p.headers = wire::field_table{};
    p.headers->set("customer", std::string("acme"));
    p.content_type = std::string("application/json");
    contract::write_occurrence(p, sample());
    contract::write_occurrence(p, other());
    REQUIRE(p.headers);
    for (const auto name : all_headers) {
        CAPTURE(name);
        CHECK(count_named(*p.headers, name) == 1);
    }
    CHECK(p.headers->size() == 6);
    CHECK(*p.headers->find("customer")->get_if<std::string>() == "acme");
    CHECK(p.content_type == std::string("application/json"));
    CHECK(p.message_id == std::string("hourly-sync@1795617300"));
    std::string why;
    const auto back = contract::read_occurrence(p, why);
    REQUIRE(back);
    CHECK(*back == other());
}

TEST_CASE("properties without x-tarry-schedule are no occurrence and no error") {
    std::string why = "stale";
    wire::basic_properties none;
    CHECK_FALSE(contract::read_occurrence(none, why));
    CHECK(why.empty());

    why = "stale";
    wire::basic_properties empty;
    empty.headers = wire::field_table{};
    CHECK_FALSE(contract::read_occurrence(empty, why));
    CHECK(why.empty());

    why = "stale";
    auto rest = written(sample());
    rest.headers->erase(contract::schedule_header);
    CHECK_FALSE(contract::read_occurrence(rest, why));
    CHECK(why.empty());
}

TEST_CASE("an occurrence missing one of its other headers is refused with that header named") {
    for (const auto name : all_headers) {
        if (name == contract::schedule_header) continue;
        CAPTURE(name);
        auto p = written(sample());
        p.headers->erase(name);
        std::string why;
        CHECK_FALSE(contract::read_occurrence(p, why));
        CHECK(why.find(name) != std::string::npos);
    }
}

TEST_CASE("an occurrence header of the wrong type is refused with that header named") {
    SUBCASE("a number, a bool, bytes or a timestamp where a string is expected") {
        const std::vector<wire::field_value> wrong = {
            wire::field_value(std::int64_t{17}), wire::field_value(true),
            wire::field_value(wire::byte_array{{'a', 'b'}}), wire::field_value(wire::timestamp_value{1795613700})};
        for (const auto name : string_headers) {
            for (const auto& v : wrong) {
                CAPTURE(name);
                const char tag = wire::field_tag(v);
                CAPTURE(tag);
                auto p = written(sample());
                p.headers->set(std::string(name), v);
                std::string why;
                CHECK_FALSE(contract::read_occurrence(p, why));
                CHECK(why.find(name) != std::string::npos);
            }
        }
    }
    SUBCASE("a string, a double, a bool or a timestamp for x-tarry-occurrence") {
        const std::vector<wire::field_value> wrong = {wire::field_value("4"), wire::field_value(4.0),
                                                      wire::field_value(true),
                                                      wire::field_value(wire::timestamp_value{4})};
        for (const auto& v : wrong) {
            const char tag = wire::field_tag(v);
            CAPTURE(tag);
            auto p = written(sample());
            p.headers->set(std::string(contract::occurrence_header), v);
            std::string why;
            CHECK_FALSE(contract::read_occurrence(p, why));
            CHECK(why.find(contract::occurrence_header) != std::string::npos);
        }
    }
}

TEST_CASE("an empty occurrence header is refused with that header named") {
    for (const auto name : string_headers) {
        CAPTURE(name);
        auto p = written(sample());
        p.headers->set(std::string(name), std::string());
        std::string why;
        CHECK_FALSE(contract::read_occurrence(p, why));
        CHECK(why.find(name) != std::string::npos);
    }
}

TEST_CASE("an occurrence number below 1 is refused") {
    for (const wire::field_value& v : {wire::field_value(std::int64_t{0}), wire::field_value(std::int64_t{-1}),
                                      wire::field_value(std::int8_t{-5}), wire::field_value(std::uint8_t{0}),
                                      wire::field_value(std::int64_t{INT64_MIN})}) {
        const char tag = wire::field_tag(v);
        CAPTURE(tag);
        auto p = written(sample());
        p.headers->set(std::string(contract::occurrence_header), v);
        std::string why;
        CHECK_FALSE(contract::read_occurrence(p, why));
        CHECK(why.find(contract::occurrence_header) != std::string::npos);
    }
}

TEST_CASE("an occurrence number of any integer type is read") {
    const std::vector<std::pair<wire::field_value, std::uint64_t>> numbers = {
        {wire::field_value(std::int8_t{127}), 127},
        {wire::field_value(std::uint8_t{255}), 255},
        {wire::field_value(std::int16_t{32767}), 32767},
        {wire::field_value(std::uint16_t{65535}), 65535},
        {wire::field_value(std::int32_t{2147483647}), 2147483647},
        {wire::field_value(std::uint32_t{4294967295u}), 4294967295u},
        {wire::field_value(std::int64_t{INT64_MAX}), static_cast<std::uint64_t>(INT64_MAX)},
        {wire::field_value(std::int8_t{1}), 1},
    };
    for (const auto& number : numbers) {
        const char tag = wire::field_tag(number.first);
        CAPTURE(tag);
        auto p = written(sample());
        p.headers->set(std::string(contract::occurrence_header), number.first);
        std::string why = "stale";
        const auto back = contract::read_occurrence(p, why);
        REQUIRE(back);
        CHECK(why.empty());
        CHECK(back->number == number.second);
    }
}

TEST_CASE("reading an occurrence never throws, whatever its headers hold") {
    const std::vector<wire::field_value> values = {
        wire::field_value(), wire::field_value(false), wire::field_value(std::int64_t{-1}),
        wire::field_value(1.5), wire::field_value(std::string()), wire::field_value(wire::field_array{}),
        wire::field_value(wire::field_table{}), wire::field_value(wire::decimal_value{2, 100})};
    for (const auto name : all_headers) {
        for (const auto& v : values) {
            auto p = written(sample());
            p.headers->set(std::string(name), v);
            std::string why;
            CHECK_NOTHROW(contract::read_occurrence(p, why));
        }
    }
}

TEST_CASE("a copy id is 32 lowercase hex digits") {
    for (int i = 0; i < 100; ++i) {
        const auto id = contract::new_copy_id();
        CAPTURE(id);
        CHECK(id.size() == 32);
        CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
    }
}

TEST_CASE("a thousand copy ids are all different") {
    std::set<std::string> ids;
    for (int i = 0; i < 1000; ++i) ids.insert(contract::new_copy_id());
    CHECK(ids.size() == 1000);
}
