// load_tokenizer(dir): picks the implementation from the files in a model
// directory (declared in tokenizer.h).
#include "agentrl/core/error.h"
#include "agentrl/text/bpe_tokenizer.h"
#include "agentrl/text/sentencepiece_tokenizer.h"
#include "tokenizer_config.h"

namespace agentrl::text {

std::shared_ptr<const Tokenizer> load_tokenizer(const std::string& dir) {
  const std::string json = dir + "/tokenizer.json";
  const std::string model = dir + "/tokenizer.model";
  const std::string config = dir + "/tokenizer_config.json";
  const bool has_json = detail::file_exists(json), has_model = detail::file_exists(model);
  // A Mistral/Llama-2 directory ships both: its tokenizer.json is a
  // SentencePiece-style (Metaspace) file that BpeTokenizer does not handle,
  // while tokenizer.model is the original. Byte-level files always win.
  if (has_json && (!has_model || BpeTokenizer::supports(json))) return BpeTokenizer::load(json, config);
  if (has_model) return SentencePieceTokenizer::load(model, config);
  throw ConfigError("no tokenizer in " + dir + ": expected tokenizer.json (HF byte-level BPE) or tokenizer.model "
                    "(SentencePiece)");
}

}  // namespace agentrl::text
