// The text helpers of the HTTP layer: valid_utf8 (what it keeps, what it
// replaces) and excerpt (cut at a character boundary).
#include "utf8_text.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace tarry::http_detail;

namespace {
const std::string fffd = "\xEF\xBF\xBD";
}

TEST_CASE("valid_utf8: well-formed text comes back unchanged") {
    const std::vector<std::string_view> texts = {"", "plain ascii", "caf\xC3\xA9", "\xE2\x82\xAC 5", "\xF0\x9F\x98\x80",
                                     "\xEF\xBF\xBF", "\xF4\x8F\xBF\xBF", std::string_view("nul\0inside", 10)};
    for (const std::string_view s : texts) {
        CAPTURE(s);
        CHECK(valid_utf8(s) == s);
    }
}

TEST_CASE("valid_utf8: each byte of an ill-formed sequence becomes U+FFFD") {
    CHECK(valid_utf8("\x80") == fffd);                           // a lone continuation
    CHECK(valid_utf8("a\xFF" "b") == "a" + fffd + "b");          // never in UTF-8
    CHECK(valid_utf8("\xC0\xAF") == fffd + fffd);                // overlong '/'
    CHECK(valid_utf8("\xE0\x80\xAF") == fffd + fffd + fffd);     // overlong
    CHECK(valid_utf8("\xED\xA0\x80") == fffd + fffd + fffd);     // a surrogate
    CHECK(valid_utf8("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // above U+10FFFF
    CHECK(valid_utf8("\xF5\x80") == fffd + fffd);
    CHECK(valid_utf8("x\xE2\x82") == "x" + fffd + fffd);         // cut short at the end
    CHECK(valid_utf8("\xE2\x82x") == fffd + fffd + "x");
}

TEST_CASE("excerpt: short text whole, long text cut at a character boundary") {
    CHECK(excerpt("short", 64) == "short");
    CHECK(excerpt("abcdef", 3) == "abc...");
    CHECK(excerpt("\xC3\xA9\xC3\xA9\xC3\xA9", 3) == "\xC3\xA9...");
    CHECK(excerpt("\xC3\xA9\xC3\xA9", 4) == "\xC3\xA9\xC3\xA9");
    CHECK(excerpt("a\xFF", 64) == "a" + fffd);
    CHECK(excerpt(std::string(100, 'x')).size() == 64 + 3);
}
