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
  virtual std::string decode(const std::vector<TokenId>& ids, bool skip_special_tokens = false) const = 0;

  // Raw bytes a token stands for (byte-level tokens mapped back to bytes;
  // special tokens as their text). Used by the incremental decoder.
  virtual std::string token_bytes(TokenId id) const = 0;
  virtual std::string id_to_piece(TokenId id) const = 0;
  virtual std::optional<TokenId> piece_to_id(const std::string& piece) const = 0;

  virtual int32_t vocab_size() const = 0;
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
// Never returns a partial UTF-8 sequence; flush() returns what is left
// (invalid trailing bytes replaced by U+FFFD).
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
