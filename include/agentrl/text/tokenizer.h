// Tokenizer interface: text <-> token ids.
//
// Implementations: SentencePiece models (text/sentencepiece_tokenizer.*) and
// Hugging Face tokenizer.json byte-level BPE (text/bpe_tokenizer.*). Ids equal
// those of the reference implementation exactly. load_tokenizer(dir) picks the
// implementation from the files in a model directory.
//
// Thread-safety: all const methods are safe to call concurrently on one
// instance. IncrementalDecoder is per stream (one thread).
//
// Related headers: text/bpe_tokenizer.h, text/sentencepiece_tokenizer.h
// (implementations, SentencePiece training), text/chat_template.h (turning
// chat messages into ids and loss-mask spans), text/token_ids_io.h (the JSON
// lines of `agentrl tokenizer encode|decode`).
//
// This layer is torch-free.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentrl::text {

using TokenId = int32_t;

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Encodes text. Special/added tokens written literally in the text (e.g.
  // "<|im_end|>") are matched as single tokens when parse_special is true.
  // add_special_tokens adds the model's BOS/EOS as its post-processor does.
  virtual std::vector<TokenId> encode(std::string_view text, bool add_special_tokens = false,
                                      bool parse_special = true) const = 0;
  // Ill-formed UTF-8 in the result is replaced by U+FFFD (as HF does); ids
  // that name no token (beyond the tokenizer's vocabulary, e.g. padding rows
  // of a model's embedding) contribute nothing.
  virtual std::string decode(const std::vector<TokenId>& ids, bool skip_special_tokens = false) const = 0;

  // Raw bytes a token stands for (byte-level tokens mapped back to bytes;
  // special tokens as their text). Used by the incremental decoder.
  virtual std::string token_bytes(TokenId id) const = 0;
  virtual std::string id_to_piece(TokenId id) const = 0;
  virtual std::optional<TokenId> piece_to_id(const std::string& piece) const = 0;

  // Highest token id + 1 (added tokens included); may be smaller than a
  // model's vocab_size (Qwen: 151669 here, 151936 embedding rows).
  virtual int32_t vocab_size() const = 0;
  // Special tokens (<|im_end|>, <s>, ...) are dropped by skip_special_tokens;
  // non-special added tokens (Qwen's <think>) are not.
  virtual bool is_special(TokenId id) const = 0;
  virtual std::optional<TokenId> bos_id() const = 0;
  virtual std::optional<TokenId> eos_id() const = 0;
  virtual std::optional<TokenId> pad_id() const = 0;
};

// Loads tokenizer.json (preferred) or tokenizer.model from `dir`, reading
// tokenizer_config.json for special-token roles when present. Throws
// FormatError naming the file on malformed input, ConfigError if none exists.
std::shared_ptr<const Tokenizer> load_tokenizer(const std::string& dir);

// Streaming decode: push ids one at a time, get the text that became complete.
// Never returns a partial or ill-formed UTF-8 sequence: bytes of an unfinished
// character are held back; bytes that can never form a character come out as
// U+FFFD at once. flush() returns what is left (an unfinished character
// becomes U+FFFD). For byte-level BPE the concatenated output equals
// decode(all ids).
class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(std::shared_ptr<const Tokenizer> tokenizer, bool skip_special_tokens = false);
  std::string push(TokenId id);
  std::string flush();

 private:
  std::shared_ptr<const Tokenizer> tok_;
  bool skip_special_;
  std::string pending_;
};

}  // namespace agentrl::text
