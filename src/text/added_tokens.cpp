#include "added_tokens.h"

#include <algorithm>
#include <cstring>

#include <utf8proc.h>

#include "utf8_util.h"

namespace agentrl::text::detail {
namespace {
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Whether the character ending right before `pos` (or starting at `pos` when
// `before` is false) is a word character (letter, number, or '_').
bool word_char_at(std::string_view s, size_t pos, bool before) {
  if (before) {
    if (pos == 0) return false;
    size_t start = pos - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    pos = start;
  } else if (pos >= s.size()) {
    return false;
  }
  size_t n = utf8_sequence_length(s, pos);
  if (n == 0) return false;
  uint32_t cp = decode_utf8(s, pos, n);
  if (cp == '_') return true;
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) ||
         (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO);
}
}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  by_first_byte_.resize(256);
  for (size_t i = 0; i < tokens_.size(); ++i) {
    by_id_[tokens_[i].id] = i;
    by_content_.emplace(tokens_[i].content, i);
    if (tokens_[i].content.empty()) continue;
    by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
  }
  for (auto& list : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(),
                     [&](size_t a, size_t b) { return tokens_[a].content.size() > tokens_[b].content.size(); });
  }
}

const AddedToken* AddedTokenMatcher::find(TokenId id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

const AddedToken* AddedTokenMatcher::find(std::string_view content) const {
  auto it = by_content_.find(std::string(content));
  return it == by_content_.end() ? nullptr : &tokens_[it->second];
}

std::vector<Segment> AddedTokenMatcher::split(std::string_view text, bool match_special) const {
  std::vector<Segment> out;
  size_t plain_start = 0, i = 0;
  while (i < text.size()) {
    const AddedToken* hit = nullptr;
    for (size_t idx : by_first_byte_[static_cast<unsigned char>(text[i])]) {
      const AddedToken& t = tokens_[idx];
      if (t.special && !match_special) continue;
      if (t.content.size() > text.size() - i || std::memcmp(text.data() + i, t.content.data(), t.content.size()) != 0) {
        continue;
      }
      if (t.single_word && (word_char_at(text, i, true) || word_char_at(text, i + t.content.size(), false))) continue;
      hit = &t;  // candidates are sorted longest first
      break;
    }
    if (!hit) {
      ++i;
      continue;
    }
    size_t begin = i, end = i + hit->content.size();
    if (hit->lstrip) {
      while (begin > plain_start && is_space(text[begin - 1])) --begin;
    }
    if (hit->rstrip) {
      while (end < text.size() && is_space(text[end])) ++end;
    }
    if (begin > plain_start) out.push_back({text.substr(plain_start, begin - plain_start), -1});
    out.push_back({text.substr(i, hit->content.size()), hit->id});
    plain_start = i = end;
  }
  if (plain_start < text.size()) out.push_back({text.substr(plain_start), -1});
  return out;
}

}  // namespace agentrl::text::detail
