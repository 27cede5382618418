// The words of a line separated by blanks (spaces, tabs): how cron
// expressions and schedule specs are read. Not installed.
#pragma once

#include <string_view>
#include <vector>

namespace tarry::periodic::detail {

inline std::vector<std::string_view> blank_separated(std::string_view text) {
    std::vector<std::string_view> words;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        const auto begin = i;
        while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
        if (i > begin) words.push_back(text.substr(begin, i - begin));
    }
    return words;
}

}  // namespace tarry::periodic::detail
