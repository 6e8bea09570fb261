#include "agentrl/envs/projection.h"

#include "agentrl/core/strings.h"
#include "agentrl/envs/text_case.h"

namespace agentrl::envs {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

bool has_cjk_unified_ideograph(const std::string& s) {
  // U+4E00..U+9FFF are the 3-byte sequences E4 B8 80 .. E9 BF BF.
  for (size_t i = 0; i + 2 < s.size(); ++i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0xE4 || b0 > 0xE9) continue;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (!is_continuation(b1) || !is_continuation(static_cast<unsigned char>(s[i + 2]))) continue;
    const unsigned cp = ((b0 & 0x0Fu) << 12) | ((b1 & 0x3Fu) << 6) | (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
    if (cp >= 0x4E00 && cp <= 0x9FFF) return true;
  }
  return false;
}

std::string last_code_points(const std::string& s, size_t n) {
  size_t start = s.size(), count = 0;
  while (start > 0 && count < n) {
    --start;
    // A code point starts at every byte that is not a continuation byte.
    if (!is_continuation(static_cast<unsigned char>(s[start]))) ++count;
  }
  return s.substr(start);
}

Projection verl_agent_projection(const std::string& response, size_t fallback_chars) {
  const std::string lowered = python_lower(response);
  const std::string open = "<action>", close = "</action>";
  const size_t start = lowered.find(open), end = lowered.find(close);
  Projection p;
  if (start == std::string::npos || end == std::string::npos) {
    p.action = last_code_points(lowered, fallback_chars);
    return p;  // invalid
  }
  const size_t body = start + open.size();
  // Python's s[a:b] is empty when b <= a.
  p.action = end > body ? strings::trim(lowered.substr(body, end - body)) : "";
  p.valid = response.find("<think>") != std::string::npos && response.find("</think>") != std::string::npos &&
            !has_cjk_unified_ideograph(response);
  return p;
}

}  // namespace agentrl::envs
