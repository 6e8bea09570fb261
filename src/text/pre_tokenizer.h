// Normalizer and pre-tokenizer of a tokenizer.json (internal).
//
// Supported (everything the Qwen2.5/Qwen3, Llama-3 and GPT-2 files use):
//   normalizer:    null, NFC, NFD, NFKC, NFKD (utf8proc), Sequence of these
//   pre_tokenizer: null, Split (Regex or String pattern; behaviours Isolated,
//                  Removed, MergedWithPrevious, MergedWithNext, Contiguous;
//                  invert), ByteLevel (use_regex = GPT-2 pattern), Digits,
//                  Sequence of these
// Anything else throws FormatError naming the file and the type.
//
// Regexes are PCRE2 in UTF + UCP mode (so \p{L}, \s, \w are Unicode-aware,
// as in Oniguruma which HF tokenizers uses), JIT-compiled. Ill-formed UTF-8
// is tolerated (PCRE2_MATCH_INVALID_UTF): invalid bytes never match and end
// up in pieces of their own, so encoding stays lossless.
//
// Thread-safety: immutable after construction; split() and normalize() may be
// called concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace agentrl::text::detail {

class Normalizer {
 public:
  // `spec` is the "normalizer" value (may be null).
  Normalizer(const nlohmann::json& spec, const std::string& where);
  bool identity() const { return forms_.empty(); }
  // Applies the normal forms in order; ill-formed bytes are kept as they are
  // and the valid runs between them are normalised.
  std::string normalize(std::string_view text) const;

 private:
  std::vector<int> forms_;  // utf8proc option sets
};

class RegexSplit;

class PreTokenizer {
 public:
  // `spec` is the "pre_tokenizer" value (may be null). Sets *byte_level when a
  // ByteLevel step is present.
  PreTokenizer(const nlohmann::json& spec, const std::string& where, bool* byte_level);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the pieces of `text` (views into it, in order) to `out`.
  void split(std::string_view text, std::vector<std::string_view>& out) const;

 private:
  void add_step(const nlohmann::json& spec, const std::string& where, bool* byte_level);
  std::vector<std::unique_ptr<RegexSplit>> steps_;
};

}  // namespace agentrl::text::detail
