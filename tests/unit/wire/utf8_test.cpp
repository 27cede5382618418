// Well-formed UTF-8 sequences: every boundary of RFC 3629's table.
#include "tarry/amqp/wire/utf8.hpp"

#include <doctest/doctest.h>

#include <string>

using tarry::amqp::wire::utf8_sequence;

TEST_CASE("utf8_sequence: the length of the well-formed sequence at the start, else 0") {
    CHECK(utf8_sequence("") == 0);
    CHECK(utf8_sequence("a") == 1);
    CHECK(utf8_sequence(std::string_view("\0x", 2)) == 1);
    CHECK(utf8_sequence("\xc3\xa9 rest") == 2);          // é
    CHECK(utf8_sequence("\xe2\x82\xac") == 3);           // €
    CHECK(utf8_sequence("\xf0\x9f\x98\x80") == 4);       // U+1F600
    CHECK(utf8_sequence("\xf4\x8f\xbf\xbf") == 4);       // U+10FFFF
    CHECK(utf8_sequence("\xed\x9f\xbf") == 3);           // U+D7FF, below the surrogates
    CHECK(utf8_sequence("\xee\x80\x80") == 3);           // U+E000, above them
}

TEST_CASE("utf8_sequence: what is not well-formed is 0") {
    for (const std::string bad : {"\x80", "\xbf", "\xc0\x80", "\xc1\xbf",  // stray continuation; overlong 2-byte
                                  "\xc3", "\xe2\x82", "\xf0\x9f\x98",      // cut
                                  "\xe0\x80\x80", "\xe0\x9f\xbf",           // overlong 3-byte
                                  "\xed\xa0\x80", "\xed\xbf\xbf",           // surrogates
                                  "\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf",   // overlong 4-byte
                                  "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",   // above U+10FFFF
                                  "\xff", "\xc3\x28", "\xe2\x28\xa1"}) {    // bad continuation
        CAPTURE(bad.size());
        CHECK(utf8_sequence(bad) == 0);
    }
}
