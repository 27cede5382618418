// Whether a text contains a part: how the unit tests check error details
// and messages. One home for every unit test program (several are compiled
// as one translation unit, where two such helpers would clash).
#pragma once

#include <string_view>

namespace unit_test_text {

/// True when `text` contains `part`.
inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace unit_test_text
