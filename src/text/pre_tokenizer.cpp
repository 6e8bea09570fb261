#define PCRE2_CODE_UNIT_WIDTH 8
#include "pre_tokenizer.h"

#include <pcre2.h>
#include <utf8proc.h>

#include "agentrl/core/error.h"
#include "utf8_util.h"

namespace agentrl::text::detail {
namespace {

// GPT-2's pre-tokenisation pattern, used by ByteLevel when use_regex is true
// (HF tokenizers, pre_tokenizers/byte_level.rs).
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

constexpr int kNfc = UTF8PROC_STABLE | UTF8PROC_COMPOSE;

enum class Behavior { kIsolated, kRemoved, kMergedWithPrevious, kMergedWithNext, kContiguous };

Behavior parse_behavior(const nlohmann::json& spec, const std::string& where) {
  std::string b = spec.value("behavior", std::string("Isolated"));
  if (b == "Isolated") return Behavior::kIsolated;
  if (b == "Removed") return Behavior::kRemoved;
  if (b == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return Behavior::kMergedWithNext;
  if (b == "Contiguous") return Behavior::kContiguous;
  throw FormatError(where + ": pre_tokenizer Split has unknown behavior '" + b +
                    "' (expected Isolated, Removed, MergedWithPrevious, MergedWithNext or Contiguous)");
}

std::string quote_literal(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.[]|()?*+{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// Per-thread JIT stack: PCRE2's default 32 KiB can be too small for long
// pieces; 4 MiB covers pieces of many megabytes with these patterns.
struct JitContext {
  pcre2_match_context* mcontext = nullptr;
  pcre2_jit_stack* stack = nullptr;
  JitContext() {
    mcontext = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
    if (mcontext && stack) pcre2_jit_stack_assign(mcontext, nullptr, stack);
  }
  ~JitContext() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(mcontext);
  }
};

}  // namespace

// One splitting step: a regex and what to do with its matches.
class RegexSplit {
 public:
  RegexSplit(const std::string& pattern, Behavior behavior, bool invert, const std::string& where)
      : behavior_(behavior), invert_(invert) {
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                          PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &err_offset, nullptr);
    if (!code_) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      throw FormatError(where + ": pre_tokenizer regex '" + pattern + "' does not compile at offset " +
                        std::to_string(err_offset) + ": " + reinterpret_cast<char*>(msg));
    }
    jit_ = pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE) == 0;
  }
  ~RegexSplit() { pcre2_code_free(code_); }

  // Splits each piece of `in` into `out`.
  void apply(const std::vector<std::string_view>& in, std::vector<std::string_view>& out) const;

 private:
  struct Span {
    size_t begin, end;
    bool matched;
  };
  void find_spans(std::string_view text, std::vector<Span>& spans) const;

  pcre2_code* code_ = nullptr;
  bool jit_ = false;
  Behavior behavior_;
  bool invert_;
};

void RegexSplit::find_spans(std::string_view text, std::vector<Span>& spans) const {
  static thread_local JitContext jit;
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_, nullptr);
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0, last = 0;
  while (pos <= text.size()) {
    int rc = jit_ ? pcre2_jit_match(code_, subject, text.size(), pos, 0, md, jit.mcontext)
                  : pcre2_match(code_, subject, text.size(), pos, 0, md, jit.mcontext);
    if (rc < 0) break;  // PCRE2_ERROR_NOMATCH (or a resource limit: rest is one gap)
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t b = ov[0], e = ov[1];
    if (e == b) {  // empty match: not a piece; move on by one character
      size_t n = b < text.size() ? utf8_sequence_length(text, b) : 1;
      pos = b + (n ? n : 1);
      continue;
    }
    if (b > last) spans.push_back({last, b, false});
    spans.push_back({b, e, true});
    last = pos = e;
  }
  if (last < text.size()) spans.push_back({last, text.size(), false});
  pcre2_match_data_free(md);
  if (invert_) {
    for (auto& s : spans) s.matched = !s.matched;
  }
}

// Behaviours as in HF tokenizers (normalizer.rs, NormalizedString::split).
void RegexSplit::apply(const std::vector<std::string_view>& in, std::vector<std::string_view>& out) const {
  std::vector<Span> spans;
  for (std::string_view piece : in) {
    spans.clear();
    find_spans(piece, spans);
    auto view = [&](size_t b, size_t e) { return piece.substr(b, e - b); };
    std::vector<std::pair<size_t, size_t>> parts;
    bool merge_next = false;
    for (const Span& s : spans) {
      switch (behavior_) {
        case Behavior::kIsolated:
          parts.push_back({s.begin, s.end});
          break;
        case Behavior::kRemoved:
          if (!s.matched) parts.push_back({s.begin, s.end});
          break;
        case Behavior::kMergedWithPrevious:
          if (s.matched && !parts.empty()) {
            parts.back().second = s.end;
          } else {
            parts.push_back({s.begin, s.end});
          }
          break;
        case Behavior::kMergedWithNext:
          if (merge_next) {
            parts.back().second = s.end;
          } else {
            parts.push_back({s.begin, s.end});
          }
          merge_next = s.matched;
          break;
        case Behavior::kContiguous:
          if (s.matched && merge_next) {
            parts.back().second = s.end;
          } else {
            parts.push_back({s.begin, s.end});
          }
          merge_next = s.matched;
          break;
      }
    }
    for (auto [b, e] : parts) {
      if (e > b) out.push_back(view(b, e));
    }
  }
}

PreTokenizer::PreTokenizer(const nlohmann::json& spec, const std::string& where, bool* byte_level) {
  *byte_level = false;
  if (!spec.is_null()) add_step(spec, where, byte_level);
}

PreTokenizer::~PreTokenizer() = default;

void PreTokenizer::add_step(const nlohmann::json& spec, const std::string& where, bool* byte_level) {
  std::string type = spec.value("type", std::string());
  if (type == "Sequence") {
    for (const auto& sub : spec.at("pretokenizers")) add_step(sub, where, byte_level);
  } else if (type == "Split") {
    const auto& pat = spec.at("pattern");
    std::string regex = pat.contains("Regex") ? pat.at("Regex").get<std::string>()
                                              : quote_literal(pat.at("String").get<std::string>());
    steps_.push_back(std::make_unique<RegexSplit>(regex, parse_behavior(spec, where), spec.value("invert", false), where));
  } else if (type == "ByteLevel") {
    if (spec.value("add_prefix_space", false)) {
      throw FormatError(where + ": pre_tokenizer ByteLevel with add_prefix_space=true is not supported");
    }
    *byte_level = true;
    if (spec.value("use_regex", true)) {
      steps_.push_back(std::make_unique<RegexSplit>(kGpt2Pattern, Behavior::kIsolated, false, where));
    }
  } else if (type == "Digits") {
    const char* pattern = spec.value("individual_digits", false) ? R"(\p{Nd})" : R"(\p{Nd}+)";
    steps_.push_back(std::make_unique<RegexSplit>(pattern, Behavior::kIsolated, false, where));
  } else {
    throw FormatError(where + ": unsupported pre_tokenizer type '" + type +
                      "' (supported: Sequence, Split, ByteLevel, Digits)");
  }
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& out) const {
  std::vector<std::string_view> cur{text}, next;
  for (const auto& step : steps_) {
    next.clear();
    step->apply(cur, next);
    cur.swap(next);
  }
  out.insert(out.end(), cur.begin(), cur.end());
}

Normalizer::Normalizer(const nlohmann::json& spec, const std::string& where) {
  if (spec.is_null()) return;
  std::string type = spec.value("type", std::string());
  if (type == "Sequence") {
    for (const auto& sub : spec.at("normalizers")) {
      Normalizer n(sub, where);
      forms_.insert(forms_.end(), n.forms_.begin(), n.forms_.end());
    }
  } else if (type == "NFC") {
    forms_.push_back(kNfc);
  } else if (type == "NFD") {
    forms_.push_back(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
  } else if (type == "NFKC") {
    forms_.push_back(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
  } else if (type == "NFKD") {
    forms_.push_back(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  } else {
    throw FormatError(where + ": unsupported normalizer type '" + type +
                      "' (supported: NFC, NFD, NFKC, NFKD, Sequence)");
  }
}

namespace {
std::string normalize_valid(std::string_view valid, int options) {
  utf8proc_uint8_t* out = nullptr;
  utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(valid.data()),
                                    static_cast<utf8proc_ssize_t>(valid.size()), &out,
                                    static_cast<utf8proc_option_t>(options));
  if (n < 0) return std::string(valid);  // cannot happen for well-formed input
  std::string s(reinterpret_cast<char*>(out), static_cast<size_t>(n));
  free(out);
  return s;
}
// True if NFC(text) == text can be seen without normalising (UAX #15 quick
// check, made stricter): every code point has NFC_Quick_Check=Yes (no full
// composition exclusion) and none can combine with what precedes it (non-zero
// combining class, second half of a composition pair, Hangul jamo, which
// compose algorithmically and are checked by range).
bool obviously_nfc(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = utf8_sequence_length(text, i);
    if (n == 0) return false;
    uint32_t cp = decode_utf8(text, i, n);
    i += n;
    if ((cp >= 0x1100 && cp <= 0x11FF) || (cp >= 0xA960 && cp <= 0xA97F) || (cp >= 0xD7B0 && cp <= 0xD7FF)) return false;
    const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
    if (p->combining_class != 0) return false;
    if (p->decomp_seqindex != UINT16_MAX && p->decomp_type == 0) {
      // A canonical decomposition is undone by composition unless the code
      // point is a full composition exclusion (e.g. the singleton U+212B
      // ANGSTROM SIGN -> U+00C5): decompose and recompose it, allocation-free.
      if (p->comp_exclusion) return false;
      utf8proc_int32_t buf[8];
      int last = 0;
      utf8proc_ssize_t len = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buf, 8,
                                                     static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE), &last);
      if (len < 1 || len > 8) return false;
      len = utf8proc_normalize_utf32(buf, len, static_cast<utf8proc_option_t>(kNfc));
      if (len != 1 || static_cast<uint32_t>(buf[0]) != cp) return false;
    }
    if (p->comb_index != UINT16_MAX && p->comb_index >= 0x8000) return false;  // second of a pair
  }
  return true;
}
}  // namespace

std::string Normalizer::normalize(std::string_view text) const {
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (forms_.empty() || ascii) return std::string(text);  // every normal form is the identity on ASCII
  std::string cur(text);
  for (int options : forms_) {
    if (options == kNfc && obviously_nfc(cur)) continue;
    std::string out;
    size_t i = 0, run = 0;
    while (i < cur.size()) {
      size_t n = utf8_sequence_length(cur, i);
      if (n > 0) {
        i += n;
        continue;
      }
      out += normalize_valid(std::string_view(cur).substr(run, i - run), options);
      out += cur[i];  // ill-formed byte kept verbatim
      run = ++i;
    }
    out += normalize_valid(std::string_view(cur).substr(run), options);
    cur.swap(out);
  }
  return cur;
}

}  // namespace agentrl::text::detail
