// Hugging Face tokenizer.json byte-level BPE tokenizer (Qwen2.5/Qwen3,
// Llama-3, GPT-2 style), producing exactly the ids of HF tokenizers.
//
// Pipeline of encode(), as in HF tokenizers (tokenizer/mod.rs):
//   1. added tokens ("added_tokens") are matched in the raw text, leftmost-
//      longest; the text between them goes through steps 2-4;
//   2. normalizer (NFC for Qwen, via utf8proc);
//   3. pre_tokenizer: Split with the file's regex (PCRE2, JIT, UTF + UCP),
//      then ByteLevel (GPT-2 byte -> code point alphabet);
//   4. BPE merges by rank (models/bpe), cached for short pieces;
//   5. post_processor when add_special_tokens: TemplateProcessing (e.g. a
//      BOS before the text), Bert/RobertaProcessing, ByteLevel (no-op for
//      ids), or a Sequence of these.
// decode() maps tokens back to bytes (ByteLevel decoder) and replaces
// ill-formed UTF-8 by U+FFFD, as HF does. transformers' optional
// clean_up_tokenization_spaces is NOT applied (it is lossy).
//
// Special-token roles (bos/eos/pad) come from tokenizer_config.json next to
// tokenizer.json when present.
//
// Thread-safety: immutable after load except for an internal, mutex-guarded
// merge cache; all methods may be called concurrently.
#pragma once

#include <memory>
#include <string>

#include "agentrl/text/tokenizer.h"

namespace agentrl::text {

class BpeTokenizer final : public Tokenizer {
 public:
  // Loads `tokenizer_json` and, if `tokenizer_config_json` is non-empty and
  // exists, the special-token roles from it. Throws IoError if a file cannot
  // be read, FormatError naming the file for malformed or unsupported
  // content (e.g. a WordPiece model, an unknown pre_tokenizer type).
  static std::shared_ptr<const BpeTokenizer> load(const std::string& tokenizer_json,
                                                  const std::string& tokenizer_config_json = "");

  // True if `tokenizer_json` describes a model this class supports (BPE with
  // a ByteLevel pre-tokenizer or decoder). Throws like load() on bad JSON.
  static bool supports(const std::string& tokenizer_json);

  ~BpeTokenizer() override;

  std::vector<TokenId> encode(std::string_view text, bool add_special_tokens = false,
                              bool parse_special = true) const override;
  std::string decode(const std::vector<TokenId>& ids, bool skip_special_tokens = false) const override;
  std::string token_bytes(TokenId id) const override;
  std::string id_to_piece(TokenId id) const override;
  std::optional<TokenId> piece_to_id(const std::string& piece) const override;
  int32_t vocab_size() const override;  // highest id + 1, added tokens included
  bool is_special(TokenId id) const override;
  std::optional<TokenId> bos_id() const override;
  std::optional<TokenId> eos_id() const override;
  std::optional<TokenId> pad_id() const override;

  struct Impl;
  explicit BpeTokenizer(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentrl::text
