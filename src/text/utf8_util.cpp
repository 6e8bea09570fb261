#include "utf8_util.h"

namespace agentrl::text::detail {
namespace {
inline unsigned char byte_at(std::string_view s, size_t i) { return static_cast<unsigned char>(s[i]); }

// Number of bytes of s[i..] that form a valid *prefix* of a UTF-8 sequence
// (Table 3-7), and the full length that the lead byte announces.
void valid_prefix(std::string_view s, size_t i, size_t& valid, size_t& need) {
  unsigned char c = byte_at(s, i);
  valid = 0;
  need = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c < 0x80) {
    valid = need = 1;
    return;
  } else if (c >= 0xC2 && c <= 0xDF) {
    need = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return;  // 0x80..0xC1, 0xF5..0xFF never start a sequence
  }
  valid = 1;
  for (size_t k = 1; k < need && i + k < s.size(); ++k) {
    unsigned char d = byte_at(s, i + k);
    if (d < lo || d > hi) return;
    lo = 0x80;
    hi = 0xBF;
    ++valid;
  }
}
}  // namespace

size_t utf8_sequence_length(std::string_view s, size_t i) {
  size_t valid, need;
  valid_prefix(s, i, valid, need);
  return (need > 0 && valid == need) ? need : 0;
}

std::string to_valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t valid, need;
    valid_prefix(s, i, valid, need);
    if (need > 0 && valid == need) {
      out.append(s.substr(i, need));
      i += need;
    } else {
      out += "\xEF\xBF\xBD";  // one U+FFFD per maximal subpart
      i += valid > 0 ? valid : 1;
    }
  }
  return out;
}

size_t complete_utf8_prefix(std::string_view s) {
  size_t n = s.size();
  // An unfinished sequence is at most 3 bytes long: find its lead byte.
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    size_t start = n - back;
    unsigned char c = byte_at(s, start);
    if ((c & 0xC0) == 0x80) continue;
    size_t valid, need;
    valid_prefix(s, start, valid, need);
    // Held back only if everything from the lead byte on is a valid but
    // unfinished sequence.
    return (need > back && valid == back) ? start : n;
  }
  return n;
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

uint32_t decode_utf8(std::string_view s, size_t i, size_t n) {
  unsigned char c = byte_at(s, i);
  if (n == 1) return c;
  uint32_t cp = c & (0xFF >> (n + 1));
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (byte_at(s, i + k) & 0x3F);
  return cp;
}

}  // namespace agentrl::text::detail
