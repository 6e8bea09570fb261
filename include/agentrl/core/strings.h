// Small string helpers shared by every layer (ASCII only: UTF-8 text passes
// through unchanged, byte for byte, except for the ASCII bytes named).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agentrl::strings {

// ASCII whitespace as Python's str.strip() and C's isspace() see it.
inline constexpr const char* kWhitespace = " \t\n\r\f\v";

// `s` without leading and trailing ASCII whitespace.
std::string trim(std::string_view s);
// True when `s` is empty or only ASCII whitespace (a blank line).
bool is_blank(std::string_view s);
// `s` with A-Z mapped to a-z; other bytes (UTF-8 included) unchanged.
std::string lower_ascii(std::string s);
// Every non-overlapping occurrence of `from`, left to right, replaced by `to`
// (text inserted by a replacement is not searched again). Empty `from`:
// `s` unchanged.
std::string replace_all(std::string s, std::string_view from, std::string_view to);
// Items joined by `sep` ("" for no items).
std::string join(const std::vector<std::string>& items, std::string_view sep);
bool starts_with(std::string_view s, std::string_view prefix);
// Number of UTF-8 code points (Python's len() of the decoded text): bytes
// that are not continuation bytes.
size_t utf8_code_points(std::string_view s);
bool ends_with(std::string_view s, std::string_view suffix);

}  // namespace agentrl::strings
