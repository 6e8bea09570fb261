// UTF-8 helpers shared by the tokenizers and the incremental decoder
// (internal to the text layer).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace agentrl::text::detail {

// Length (1..4) of the well-formed UTF-8 sequence starting at s[i], or 0 if
// the bytes there are not a well-formed sequence (Unicode 15, Table 3-7:
// no overlongs, no surrogates, nothing above U+10FFFF).
size_t utf8_sequence_length(std::string_view s, size_t i);

// Replaces every ill-formed subsequence by U+FFFD using the "maximal subpart"
// practice of Unicode 15 section 3.9 (the same as Rust's String::from_utf8_lossy,
// which HF tokenizers' decoders use), so decode() output equals HF's.
std::string to_valid_utf8(std::string_view s);

// Length of the longest prefix of `s` after which no UTF-8 sequence is left
// unfinished: a trailing, so far well-formed, but incomplete sequence is held
// back; anything ill-formed counts as complete (it will become U+FFFD).
size_t complete_utf8_prefix(std::string_view s);

// Appends the UTF-8 encoding of code point `cp` to `out`.
void append_utf8(uint32_t cp, std::string& out);

// Decodes the code point at s[i] (which must start a well-formed sequence of
// length n = utf8_sequence_length(s, i) > 0).
uint32_t decode_utf8(std::string_view s, size_t i, size_t n);

}  // namespace agentrl::text::detail
