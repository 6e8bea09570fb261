#include "agentrl/envs/text_case.h"

#include <utf8proc.h>

#include <vector>

namespace agentrl::envs {
namespace {

struct CodePoint {
  utf8proc_int32_t cp;  // -1: an invalid byte, kept as it is
  size_t begin;
};

std::vector<CodePoint> decode(const std::string& s) {
  std::vector<CodePoint> out;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  size_t i = 0;
  while (i < s.size()) {
    utf8proc_int32_t cp = -1;
    const utf8proc_ssize_t n = utf8proc_iterate(p + i, static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
    if (n <= 0) {
      out.push_back({-1, i});
      ++i;
    } else {
      out.push_back({cp, i});
      i += static_cast<size_t>(n);
    }
  }
  return out;
}

bool is_cased(utf8proc_int32_t cp) {
  if (cp < 0) return false;
  const auto cat = utf8proc_category(cp);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
}

void append(std::string& out, utf8proc_int32_t cp) {
  utf8proc_uint8_t buf[4];
  const auto n = utf8proc_encode_char(cp, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

}  // namespace

std::string python_lower(const std::string& s) {
  const auto cps = decode(s);
  std::string out;
  out.reserve(s.size());
  for (size_t k = 0; k < cps.size(); ++k) {
    const auto cp = cps[k].cp;
    if (cp < 0) {
      out += s[cps[k].begin];
    } else if (cp < 0x80) {
      out += static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp - 'A' + 'a' : cp);
    } else if (cp == 0x130) {  // İ: Python's full mapping keeps the dot
      out += 'i';
      append(out, 0x307);
    } else if (cp == 0x3A3) {  // Σ: final form at the end of a word
      const bool after_letter = k > 0 && is_cased(cps[k - 1].cp);
      const bool before_letter = k + 1 < cps.size() && is_cased(cps[k + 1].cp);
      append(out, after_letter && !before_letter ? 0x3C2 : 0x3C3);
    } else {
      append(out, utf8proc_tolower(cp));
    }
  }
  return out;
}

}  // namespace agentrl::envs
