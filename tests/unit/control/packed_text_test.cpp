// The compact keys of the control layer's tables: every form of a packed
// text comes back as it went in, equal packed texts are equal texts, the
// pool frees what no key holds, and the keys' index against a model under
// random inserts and erasures.
#include "tarry/control/packed_keys.hpp"
#include "tarry/control/packed_text.hpp"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace detail = tarry::control::detail;

namespace {

// Texts of every form, and near misses of each.
const std::vector<std::string> forms = {
    "",
    "a",
    "sixteen-bytes-16",
    "0123456789abcdef0123456789abcdef",             // 32 hex digits
    "0123456789ABCDEF0123456789abcdef",             // upper case: not the hex form
    "0123456789abcdef0123456789abcdeg",             // not a digit
    "0123456789abcdef0123456789abcde",              // 31 digits
    "550e8400-e29b-41d4-a716-446655440000",         // a UUID
    "550e8400e29b-41d4-a716-4466554400000",         // dashes elsewhere
    "every-second-3@1700000123",                    // an occurrence id
    "every-second-3@1700000123.5",
    "every-second-3@",
    "a-schedule-with-a-long-name@12345678901234567",  // a tail of 17 bytes
    "a job id that is long and has no at sign",
    std::string("nul\0inside-the-text-here", 24),
    "@@@@@@@@@@@@@@@@@@@@@@@@@@",
};

std::string round_trip(const std::string& s, detail::text_pool& pool) {
    const auto p = detail::pack(s, pool);
    std::string out = "junk";
    detail::unpack(p, pool, out);
    return out;
}

}  // namespace

TEST_CASE("packed_text: every form comes back as it went in") {
    detail::text_pool pool;
    for (const auto& s : forms) CHECK(round_trip(s, pool) == s);
}

TEST_CASE("packed_text: two packed texts are equal exactly when their texts are, and hash alike then") {
    detail::text_pool pool;
    std::vector<detail::packed_text> packed;
    for (const auto& s : forms) packed.push_back(detail::pack(s, pool));
    for (std::size_t i = 0; i < forms.size(); ++i) {
        CHECK(detail::pack(forms[i], pool) == packed[i]);
        CHECK(detail::hash(detail::pack(forms[i], pool)) == detail::hash(packed[i]));
        for (std::size_t j = 0; j < forms.size(); ++j)
            if (i != j) CHECK_MESSAGE(!(packed[i] == packed[j]), forms[i] << " and " << forms[j]);
    }
}

TEST_CASE("packed_text: ids and UUIDs take no pool entry; long texts share theirs, freed by the last release") {
    detail::text_pool pool;
    const auto hex = detail::pack("0123456789abcdef0123456789abcdef", pool);
    const auto uuid = detail::pack("550e8400-e29b-41d4-a716-446655440000", pool);
    CHECK(pool.size() == 0);
    const auto a = detail::pack("every-second-3@1700000123", pool);
    const auto b = detail::pack("every-second-3@1700000124", pool);
    CHECK(pool.size() == 1);  // "every-second-3@", twice
    CHECK_FALSE(a == b);
    CHECK(detail::find_packed("every-second-3@1700000999", pool).has_value());
    CHECK_FALSE(detail::find_packed("another-schedule@1700000123", pool).has_value());
    CHECK(pool.size() == 1);  // find_packed interns nothing
    detail::release(a, pool);
    CHECK(pool.size() == 1);
    detail::release(b, pool);
    CHECK(pool.size() == 0);
    CHECK_FALSE(detail::find_packed("every-second-3@1700000123", pool).has_value());
    detail::release(hex, pool);  // nothing to give back
    detail::release(uuid, pool);
    // A freed entry's id is used again, for another text.
    const auto c = detail::pack("another-schedule@1", pool);
    std::string out;
    detail::unpack(c, pool, out);
    CHECK(out == "another-schedule@1");
}

TEST_CASE("packed_keys: random inserts and erasures agree with a model, and the index shrinks back") {
    detail::packed_keys keys;
    std::map<std::string, bool> model;  // key -> kept
    std::mt19937_64 rng(7);
    const auto key_of = [&](std::uint64_t n) {
        switch (n % 4) {
        case 0: {  // a 32-hex-digit id
            char text[33];
            std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(n * 0x9e3779b97f4a7c15ULL),
                          static_cast<unsigned long long>(n));
            return std::string(text);
        }
        case 1: return "schedule-" + std::to_string(n % 7) + "@" + std::to_string(1'700'000'000 + n);
        case 2: return "k" + std::to_string(n);
        default: return "a-long-user-supplied-job-id-" + std::to_string(n);
        }
    };
    std::string text;
    for (int round = 0; round < 20'000; ++round) {
        const auto n = rng() % 3000;
        const auto key = key_of(n);
        const auto at = keys.find(key);
        REQUIRE(at.has_value() == (model.count(key) > 0));
        if (!at) {
            const auto [position, inserted] = keys.find_or_insert(key);
            CHECK(inserted);
            CHECK(position == keys.size() - 1);
            model[key] = true;
            REQUIRE(keys.find(key) == keys.size() - 1);
        } else if (rng() % 3 == 0) {
            CHECK(keys.find_or_insert(key) == std::pair<std::size_t, bool>(*at, false));
        } else if (rng() % 2 == 0) {
            keys.key_at(*at, text);
            REQUIRE(text == key);
            keys.erase_swap(*at);
            model.erase(key);
            REQUIRE_FALSE(keys.find(key));
        }
        REQUIRE(keys.size() == model.size());
    }
    for (const auto& [key, kept] : model) {
        const auto at = keys.find(key);
        REQUIRE(at);
        keys.key_at(*at, text);
        CHECK(text == key);
    }
    while (keys.size() > 0) keys.erase_swap(rng() % keys.size());
    CHECK(keys.pool().size() == 0);  // every long part given back
    for (const auto& [key, kept] : model) CHECK_FALSE(keys.find(key));
}
