// Added-token matching (internal): finds tokens such as "<|im_end|>" in raw
// text before any normalisation or pre-tokenisation, as HF tokenizers'
// AddedVocabulary does (leftmost-longest match; lstrip/rstrip absorb
// neighbouring whitespace; single_word requires word boundaries).
//
// Thread-safety: immutable after construction.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "agentrl/text/tokenizer.h"

namespace agentrl::text::detail {

struct AddedToken {
  TokenId id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
};

// A piece of input: either plain text to tokenize, or one added token.
struct Segment {
  std::string_view text;
  TokenId token = -1;  // >= 0: an added token
};

class AddedTokenMatcher {
 public:
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  // Splits `text` into segments. Special tokens are matched only when
  // match_special is true; non-special added tokens are always matched
  // (as in HF transformers with split_special_tokens=True).
  std::vector<Segment> split(std::string_view text, bool match_special) const;

  const std::vector<AddedToken>& tokens() const { return tokens_; }
  const AddedToken* find(TokenId id) const;
  const AddedToken* find(std::string_view content) const;

 private:
  std::vector<AddedToken> tokens_;
  std::vector<std::vector<size_t>> by_first_byte_;  // indices into tokens_, longest first
  std::unordered_map<TokenId, size_t> by_id_;
  std::unordered_map<std::string, size_t> by_content_;
};

}  // namespace agentrl::text::detail
