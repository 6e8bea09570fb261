// Python's str.lower() for UTF-8 text, where a published protocol lower-cases
// (verl-agent's projections, Search-R1's answer normalisation): every letter
// folds by Unicode's case mapping (utf8proc), not only ASCII.
//
// Reproduced: the simple lower-case mapping of every code point, U+0130
// (İ) -> "i" + U+0307 as Python's full mapping does, and the final sigma
// (Σ -> ς after a cased letter when no cased letter follows). Bytes that are
// not valid UTF-8 pass through unchanged (Python would not have such a str).
//
// Thread-safety: pure function.
#pragma once

#include <string>

namespace agentrl::envs {

std::string python_lower(const std::string& utf8);

}  // namespace agentrl::envs
