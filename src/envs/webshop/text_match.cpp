// difflib / fuzzywuzzy / normalize.py reimplementations; see text_match.h.
// Written from the algorithms' documented behaviour (CPython Lib/difflib.py
// SequenceMatcher.find_longest_match / get_matching_blocks, fuzzywuzzy
// fuzz._token_set), not from their source text.
#include "agentrl/envs/webshop/text_match.h"
#include "agentrl/core/strings.h"

#include <xapian.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace agentrl::envs::webshop {

std::u32string utf8_to_u32(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    char32_t cp;
    int extra;
    if (c < 0x80) {
      cp = c;
      extra = 0;
    } else if ((c >> 5) == 0x6) {
      cp = c & 0x1F;
      extra = 1;
    } else if ((c >> 4) == 0xE) {
      cp = c & 0x0F;
      extra = 2;
    } else if ((c >> 3) == 0x1E) {
      cp = c & 0x07;
      extra = 3;
    } else {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    bool ok = true;
    for (int k = 1; k <= extra; ++k) {
      if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    if (!ok) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += extra + 1;
  }
  return out;
}

std::string u32_to_utf8(const std::u32string& s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t cp : s) Xapian::Unicode::append_utf8(out, static_cast<unsigned>(cp));
  return out;
}

std::string unicode_lower(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : utf8_to_u32(s)) Xapian::Unicode::append_utf8(out, Xapian::Unicode::tolower(static_cast<unsigned>(c)));
  return out;
}

namespace {

struct Block {
  size_t i, j, size;
};

// difflib's SequenceMatcher with isjunk = None and autojunk = True: b2j maps
// each element of b to its positions; when len(b) >= 200, elements occurring
// more than len(b) / 100 + 1 times are "popular" and dropped from b2j (they
// can still extend a match, as in difflib, because they are not junk).
class SequenceMatcher {
 public:
  SequenceMatcher(const std::u32string& a, const std::u32string& b) : a_(a), b_(b) {
    for (size_t j = 0; j < b_.size(); ++j) b2j_[b_[j]].push_back(j);
    if (b_.size() >= 200) {
      const size_t ntest = b_.size() / 100 + 1;
      for (auto it = b2j_.begin(); it != b2j_.end();) {
        if (it->second.size() > ntest)
          it = b2j_.erase(it);
        else
          ++it;
      }
    }
  }

  // Longest matching block in a[alo:ahi], b[blo:bhi]; ties broken like
  // difflib (earliest in a, then earliest in b).
  Block find_longest_match(size_t alo, size_t ahi, size_t blo, size_t bhi) const {
    size_t besti = alo, bestj = blo, bestsize = 0;
    std::unordered_map<size_t, size_t> j2len, newj2len;
    for (size_t i = alo; i < ahi; ++i) {
      newj2len.clear();
      auto it = b2j_.find(a_[i]);
      if (it != b2j_.end()) {
        for (size_t j : it->second) {
          if (j < blo) continue;
          if (j >= bhi) break;
          size_t prev = 0;
          if (j > 0) {
            auto p = j2len.find(j - 1);
            if (p != j2len.end()) prev = p->second;
          }
          size_t k = prev + 1;
          newj2len[j] = k;
          if (k > bestsize) {
            besti = i + 1 - k;
            bestj = j + 1 - k;
            bestsize = k;
          }
        }
      }
      std::swap(j2len, newj2len);
    }
    // Extend with equal (non-junk; there is no junk here) elements on both
    // sides: this is how popular elements join a match.
    while (besti > alo && bestj > blo && a_[besti - 1] == b_[bestj - 1]) {
      --besti;
      --bestj;
      ++bestsize;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a_[besti + bestsize] == b_[bestj + bestsize])
      ++bestsize;
    return {besti, bestj, bestsize};
  }

  size_t matched_total() const {
    size_t total = 0;
    struct Range {
      size_t alo, ahi, blo, bhi;
    };
    std::vector<Range> queue{{0, a_.size(), 0, b_.size()}};
    while (!queue.empty()) {
      Range r = queue.back();
      queue.pop_back();
      Block m = find_longest_match(r.alo, r.ahi, r.blo, r.bhi);
      if (m.size == 0) continue;
      total += m.size;
      if (r.alo < m.i && r.blo < m.j) queue.push_back({r.alo, m.i, r.blo, m.j});
      if (m.i + m.size < r.ahi && m.j + m.size < r.bhi) queue.push_back({m.i + m.size, r.ahi, m.j + m.size, r.bhi});
    }
    return total;
  }

 private:
  const std::u32string& a_;
  const std::u32string& b_;
  std::unordered_map<char32_t, std::vector<size_t>> b2j_;
};

bool python_word_char(char32_t c) {
  if (c == U'_') return true;
  using namespace Xapian::Unicode;
  switch (get_category(static_cast<unsigned>(c))) {
    case UPPERCASE_LETTER:
    case LOWERCASE_LETTER:
    case TITLECASE_LETTER:
    case MODIFIER_LETTER:
    case OTHER_LETTER:
    case DECIMAL_DIGIT_NUMBER:
    case LETTER_NUMBER:
    case OTHER_NUMBER:
      return true;
    default:
      return false;
  }
}

std::vector<std::u32string> split_spaces(const std::u32string& s) {
  std::vector<std::u32string> out;
  std::u32string cur;
  for (char32_t c : s) {
    if (c == U' ') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::u32string join_sorted(const std::set<std::u32string>& tokens) {
  std::u32string out;
  for (const auto& t : tokens) {
    if (!out.empty()) out.push_back(U' ');
    out += t;
  }
  return out;
}

std::u32string strip_spaces(const std::u32string& s) {
  size_t b = s.find_first_not_of(U' ');
  if (b == std::u32string::npos) return U"";
  size_t e = s.find_last_not_of(U' ');
  return s.substr(b, e - b + 1);
}

}  // namespace

double sequence_matcher_ratio(const std::u32string& a, const std::u32string& b) {
  const size_t total = a.size() + b.size();
  if (total == 0) return 1.0;
  SequenceMatcher m(a, b);
  return 2.0 * static_cast<double>(m.matched_total()) / static_cast<double>(total);
}

std::u32string fuzz_full_process(const std::string& s) {
  std::u32string out;
  for (char32_t c : utf8_to_u32(s)) {
    if (c >= 128 && c <= 255) continue;  // force_ascii: asciidammit drops Latin-1
    if (!python_word_char(c)) {
      out.push_back(U' ');
    } else {
      out.push_back(static_cast<char32_t>(Xapian::Unicode::tolower(static_cast<unsigned>(c))));
    }
  }
  return strip_spaces(out);
}

int fuzz_ratio(const std::u32string& a, const std::u32string& b) {
  if (a == b) return 100;
  if (a.empty() || b.empty()) return 0;
  // Python's round() is round-half-even; nearbyint under the default
  // rounding mode is the same.
  return static_cast<int>(std::nearbyint(100.0 * sequence_matcher_ratio(a, b)));
}

int token_set_ratio(const std::string& s1, const std::string& s2) {
  const std::u32string p1 = fuzz_full_process(s1), p2 = fuzz_full_process(s2);
  if (p1.empty() || p2.empty()) return 0;
  std::set<std::u32string> t1, t2, inter, d12, d21;
  for (auto& t : split_spaces(p1)) t1.insert(t);
  for (auto& t : split_spaces(p2)) t2.insert(t);
  for (const auto& t : t1) (t2.count(t) ? inter : d12).insert(t);
  for (const auto& t : t2)
    if (!t1.count(t)) d21.insert(t);
  const std::u32string sect = join_sorted(inter);
  const std::u32string c12 = strip_spaces(sect + U" " + join_sorted(d12));
  const std::u32string c21 = strip_spaces(sect + U" " + join_sorted(d21));
  const std::u32string sect_s = strip_spaces(sect);
  return std::max({fuzz_ratio(sect_s, c12), fuzz_ratio(sect_s, c21), fuzz_ratio(c12, c21)});
}

const std::vector<std::string>& color_set() {
  static const std::vector<std::string> colors = {
      "alabaster", "apricot",  "aqua",      "ash",       "asphalt",   "azure",      "banana",   "beige",
      "black",     "blue",     "blush",     "bordeaux",  "bronze",    "brown",      "burgundy", "camel",
      "camo",      "caramel",  "champagne", "charcoal",  "cheetah",   "chestnut",   "chocolate", "christmas",
      "coffee",    "cognac",   "copper",    "coral",     "cranberry", "cream",      "crystal",  "dark",
      "denim",     "eggplant", "elephant",  "espresso",  "fuchsia",   "gold",       "granite",  "grape",
      "graphite",  "grass",    "gray",      "green",     "grey",      "heather",    "indigo",   "ivory",
      "ivy",       "khaki",    "lavender",  "lemon",     "leopard",   "light",      "lilac",    "lime",
      "magenta",   "maroon",   "mauve",     "merlot",    "midnight",  "mint",       "mocha",    "multicolor",
      "mushroom",  "mustard",  "natural",   "navy",      "nude",      "olive",      "orange",   "peach",
      "pewter",    "pink",     "plum",      "purple",    "rainbow",   "red",        "rose",     "royal",
      "rust",      "sand",     "sapphire",  "seashell",  "silver",    "skull",      "slate",    "steel",
      "stone",     "stonewash", "sunflower", "tan",      "taupe",     "teal",       "tiger",    "turquoise",
      "violet",    "walnut",   "wheat",     "white",     "wine",      "yellow"};
  return colors;
}

std::string normalize_color(const std::string& s) {
  for (const auto& c : color_set())
    if (s.find(c) != std::string::npos) return c;
  return s;
}

// ------------------------------------------------------------ noun filter

namespace {

const std::unordered_set<std::string>& function_words() {
  static const std::unordered_set<std::string> w = {
      "a",     "an",    "the",   "and",    "or",     "but",   "nor",     "for",   "of",     "in",    "on",
      "at",    "by",    "with",  "without", "to",    "from",  "into",    "onto",  "over",   "under", "up",
      "down",  "out",   "off",   "about",  "as",     "than",  "then",    "so",    "if",     "is",    "are",
      "was",   "were",  "be",    "been",   "being",  "it",    "its",     "this",  "that",   "these", "those",
      "my",    "your",  "our",   "their",  "his",    "her",   "i",       "you",   "we",     "they",  "he",
      "she",   "me",    "us",    "them",   "all",    "any",   "each",    "every", "some",   "no",    "not",
      "only",  "very",  "more",  "most",   "less",   "few",   "many",    "much",  "own",    "same",  "other",
      "such",  "can",   "will",  "just",   "also",   "per",   "via",     "vs",    "etc",    "w",     "&",
      "while", "when",  "which", "who",    "what",   "where", "how",     "both",  "either", "after", "before",
      "between", "through", "against", "during", "around", "inside", "outside", "within", "above", "below",
      "do",    "does",  "has",   "have",   "had",    "s",     "t",       "x"};
  return w;
}

const std::unordered_set<std::string>& adjectives() {
  static const std::unordered_set<std::string> w = {
      "new",      "high",      "low",       "small",     "large",     "big",       "mini",      "ultra",
      "super",    "extra",     "premium",   "best",      "great",     "good",      "soft",      "hard",
      "heavy",    "casual",    "natural",   "organic",   "fresh",     "free",      "non",       "anti",
      "multi",    "double",    "single",    "long",      "short",     "wide",      "slim",      "thick",
      "thin",     "full",      "half",      "hot",       "cold",      "cool",      "warm",      "dry",
      "wet",      "clean",     "clear",     "easy",      "quick",     "fast",      "smart",     "digital",
      "electric", "automatic", "manual",    "modern",    "classic",   "vintage",   "cute",      "funny",
      "unique",   "perfect",   "beautiful", "pretty",    "luxury",    "elegant",   "simple",    "strong",
      "safe",     "healthy",   "real",      "pure",      "original",  "genuine",   "official",  "authentic",
      "multiple", "various",   "assorted",  "different", "sturdy",    "flexible",  "lightweight", "universal",
      "professional", "compact", "deep",    "fine",      "little",    "tall",      "round",     "square",
      "open",     "mens",      "womens",    "men's",     "women's",   "kids",      "unisex",    "novelty",
      "sexy",     "comfy",     "solid",     "plain",     "raw",       "sweet",     "rich",      "dark",
      "bright",   "true",      "old",       "young",     "top",       "ultimate",  "special",   "standard",
      "basic",    "general",   "personal",  "local",     "main",      "major",     "regular",   "large-capacity"};
  return w;
}

bool has_letter(const std::string& t) {
  for (char32_t c : utf8_to_u32(t)) {
    using namespace Xapian::Unicode;
    auto cat = get_category(static_cast<unsigned>(c));
    if (cat >= UPPERCASE_LETTER && cat <= OTHER_LETTER) return true;
  }
  return false;
}

using strings::ends_with;

bool adjective_by_suffix(const std::string& t) {
  if (t.size() < 6) return false;  // "table", "cable" ... short words are mostly nouns
  for (const char* suf : {"able", "ible", "ful", "ous", "ive", "less", "ish"})
    if (ends_with(t, suf)) return true;
  // Past participles ("listed", "padded"); "-eed" words are nouns (seed, speed).
  return ends_with(t, "ed") && !ends_with(t, "eed");
}

}  // namespace

std::vector<std::string> title_nouns(const std::string& title) {
  // Token characters: word characters plus '.' and '\'' inside a token.
  std::vector<std::string> tokens;
  std::u32string cur;
  auto flush = [&] {
    while (!cur.empty() && (cur.back() == U'.' || cur.back() == U'\'')) {
      // spaCy keeps a trailing '.' on abbreviations like "D.O.N."; keep it
      // when the token already contains an inner '.'.
      if (cur.back() == U'.' && cur.find(U'.') != cur.size() - 1) break;
      cur.pop_back();
    }
    while (!cur.empty() && (cur.front() == U'.' || cur.front() == U'\'')) cur.erase(cur.begin());
    if (!cur.empty()) {
      std::u32string lower;
      for (char32_t c : cur) lower.push_back(static_cast<char32_t>(Xapian::Unicode::tolower(static_cast<unsigned>(c))));
      tokens.push_back(u32_to_utf8(lower));
    }
    cur.clear();
  };
  for (char32_t c : utf8_to_u32(title)) {
    if (python_word_char(c) || c == U'.' || c == U'\'')
      cur.push_back(c);
    else
      flush();
  }
  flush();
  std::vector<std::string> nouns;
  for (const auto& t : tokens) {
    if (!has_letter(t)) continue;
    if (function_words().count(t) || adjectives().count(t)) continue;
    if (adjective_by_suffix(t)) continue;
    nouns.push_back(t);
  }
  return nouns;
}

}  // namespace agentrl::envs::webshop
