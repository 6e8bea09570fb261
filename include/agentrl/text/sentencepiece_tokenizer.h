// SentencePiece tokenizer (tokenizer.model: Llama-2, Mistral, Gemma, and the
// models agentrl trains from scratch), through libsentencepiece, plus
// training a new model for a from-scratch policy.
//
// encode(): control/special pieces written in the text ("<s>", and the
// special tokens listed in tokenizer_config.json) are matched first when
// parse_special is true; the text between them goes to SentencePiece.
// add_special_tokens adds BOS/EOS according to tokenizer_config.json's
// add_bos_token / add_eos_token (defaults: BOS yes if the model has one, EOS
// no: transformers' LlamaTokenizer defaults). Note that SentencePiece always
// matches user-defined symbols (e.g. the ChatML tokens of a trained model),
// even with parse_special=false.
// token_bytes(): '▁' becomes a space and <0xAB> byte pieces their byte, so
// concatenated token_bytes are exactly the text (decode() additionally drops
// the dummy-prefix space SentencePiece adds at the start, if the model does).
//
// Thread-safety: all const methods may be called concurrently
// (SentencePieceProcessor's encode/decode are const and thread-safe).
// train_sentencepiece is not reentrant (libsentencepiece's trainer uses
// global state); call it from one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agentrl/text/tokenizer.h"

namespace agentrl::text {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Loads `model_path` (tokenizer.model) and, when `tokenizer_config_json` is
  // non-empty and exists, special-token roles from it. Throws IoError /
  // FormatError naming the file.
  static std::shared_ptr<const SentencePieceTokenizer> load(const std::string& model_path,
                                                            const std::string& tokenizer_config_json = "");
  ~SentencePieceTokenizer() override;

  std::vector<TokenId> encode(std::string_view text, bool add_special_tokens = false,
                              bool parse_special = true) const override;
  std::string decode(const std::vector<TokenId>& ids, bool skip_special_tokens = false) const override;
  std::string token_bytes(TokenId id) const override;
  std::string id_to_piece(TokenId id) const override;
  std::optional<TokenId> piece_to_id(const std::string& piece) const override;
  int32_t vocab_size() const override;
  bool is_special(TokenId id) const override;
  std::optional<TokenId> bos_id() const override;
  std::optional<TokenId> eos_id() const override;
  std::optional<TokenId> pad_id() const override;

  struct Impl;
  explicit SentencePieceTokenizer(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// Options of train_sentencepiece. Defaults suit a small policy trained from
// scratch on environment text.
struct SentencePieceTrainOptions {
  std::string model_type = "unigram";  // unigram | bpe
  // Pieces always kept whole; the ChatML tokens make the "chatml" chat
  // template usable with the trained model.
  std::vector<std::string> user_defined_symbols = {"<|im_start|>", "<|im_end|>", "<|endoftext|>"};
  double character_coverage = 1.0;  // rare characters fall back to bytes anyway
  int max_sentence_length = 65536;  // bytes; longer lines are skipped by SentencePiece
  unsigned int seed = 0;            // SentencePiece's random generator seed
  // false: vocab_size is an upper bound (SentencePiece's soft limit), for
  // corpora too small to support the requested number of pieces.
  bool hard_vocab_limit = true;
  // false: digit runs still stand apart from other text (SentencePiece's
  // split_by_number) but may merge into multi-digit pieces.
  bool split_digits = true;
};

// Trains a SentencePiece model on `corpus_path` (one sentence per line) with
// byte_fallback on, identity normalisation (text is kept as is: whitespace
// runs and case matter to agents), digits split (unless options say not), and one thread, so that the
// same corpus and options always give the same model. Writes
// out_dir/tokenizer.model and out_dir/tokenizer_config.json (eos
// "<|im_end|>", pad "<|endoftext|>", no BOS added, ChatML chat template,
// the user-defined symbols as special tokens). Creates out_dir if needed.
// Throws ConfigError for bad options (vocab size too large for the corpus:
// the message is SentencePiece's, which names the largest possible size),
// IoError if the corpus cannot be read or out_dir written.
void train_sentencepiece(const std::string& corpus_path, int vocab_size, const std::string& out_dir,
                         const SentencePieceTrainOptions& options = {});

}  // namespace agentrl::text
