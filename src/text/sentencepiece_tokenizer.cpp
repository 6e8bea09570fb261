#include "agentrl/text/sentencepiece_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unordered_set>

#include "added_tokens.h"
#include "sentencepiece_library.h"
#include "agentrl/core/error.h"
#include "tokenizer_config.h"
#include "utf8_util.h"

namespace agentrl::text {

struct SentencePieceTokenizer::Impl {
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_holder;
  const sentencepiece::SentencePieceProcessor& sp() const { return *sp_holder; }
  std::unique_ptr<detail::AddedTokenMatcher> specials;  // matched in text before SentencePiece
  std::unordered_set<TokenId> special_ids;
  std::optional<TokenId> bos, eos, pad;
  bool add_bos = false, add_eos = false;
  bool dummy_prefix = false;  // the model prepends '▁' to the text it encodes
};

namespace {
constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 '▁'

std::optional<TokenId> role(const sentencepiece::SentencePieceProcessor& sp, const std::optional<std::string>& name,
                            int fallback, const char* key, const std::string& where) {
  if (name) {
    int id = sp.PieceToId(*name);
    if (id == sp.unk_id() && *name != sp.IdToPiece(sp.unk_id())) {
      throw FormatError(where + ": " + key + " '" + *name + "' is not a piece of the SentencePiece model");
    }
    return id;
  }
  if (fallback >= 0) return fallback;
  return std::nullopt;
}
}  // namespace

std::shared_ptr<const SentencePieceTokenizer> SentencePieceTokenizer::load(const std::string& model_path,
                                                                           const std::string& tokenizer_config_json) {
  if (!detail::file_exists(model_path)) throw IoError("cannot open " + model_path);
  auto impl = std::make_unique<Impl>();
  impl->sp_holder = detail::new_sentencepiece_processor();
  std::string err = detail::status_message(impl->sp_holder->Load(model_path));
  if (!err.empty()) throw FormatError(model_path + ": not a valid SentencePiece model: " + err);
  const auto& sp = impl->sp();
  auto cfg = detail::read_tokenizer_config(tokenizer_config_json);

  std::vector<detail::AddedToken> specials;
  for (int id = 0; id < sp.GetPieceSize(); ++id) {
    if (sp.IsControl(id) || sp.IsUnknown(id)) {
      impl->special_ids.insert(id);
      std::string piece = sp.IdToPiece(id);
      if (!piece.empty()) specials.push_back({id, piece, true, false, false, false});
    }
  }
  for (const auto& t : cfg.added_tokens) {
    if (!t.special) continue;
    if (t.id < 0 || t.id >= sp.GetPieceSize() || sp.IdToPiece(t.id) != t.content) {
      throw FormatError(tokenizer_config_json + ": added_tokens_decoder entry " + std::to_string(t.id) + " '" +
                        t.content + "' does not match the SentencePiece model " + model_path);
    }
    if (impl->special_ids.insert(t.id).second) specials.push_back(t);
  }
  impl->specials = std::make_unique<detail::AddedTokenMatcher>(std::move(specials));
  impl->bos = role(sp, cfg.bos_token, sp.bos_id(), "bos_token", tokenizer_config_json);
  impl->eos = role(sp, cfg.eos_token, sp.eos_id(), "eos_token", tokenizer_config_json);
  impl->pad = role(sp, cfg.pad_token, sp.pad_id(), "pad_token", tokenizer_config_json);
  impl->add_bos = cfg.add_bos_token.value_or(impl->bos.has_value()) && impl->bos;
  impl->add_eos = cfg.add_eos_token.value_or(false) && impl->eos;
  // The model's normalizer spec is not exposed by the processor API: probe it.
  std::vector<std::string> probe;
  sp.Encode("a", &probe);
  impl->dummy_prefix = !probe.empty() && probe[0].compare(0, kSpaceMark.size(), kSpaceMark) == 0;
  return std::make_shared<SentencePieceTokenizer>(std::move(impl));
}

SentencePieceTokenizer::SentencePieceTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<TokenId> SentencePieceTokenizer::encode(std::string_view text, bool add_special_tokens,
                                                    bool parse_special) const {
  std::vector<TokenId> out;
  if (add_special_tokens && impl_->add_bos) out.push_back(*impl_->bos);
  std::vector<int> ids;
  for (const auto& seg : impl_->specials->split(text, parse_special)) {
    if (seg.token >= 0) {
      out.push_back(seg.token);
      continue;
    }
    ids.clear();
    impl_->sp().Encode(seg.text, &ids);
    out.insert(out.end(), ids.begin(), ids.end());
  }
  if (add_special_tokens && impl_->add_eos) out.push_back(*impl_->eos);
  return out;
}

std::string SentencePieceTokenizer::token_bytes(TokenId id) const {
  const auto& sp = impl_->sp();
  if (id < 0 || id >= sp.GetPieceSize()) return "";
  std::string piece = sp.IdToPiece(id);
  if (sp.IsByte(id) && piece.size() == 6) {  // "<0xAB>"
    return std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
  }
  if (impl_->special_ids.count(id)) return piece;
  std::string out;
  size_t pos = 0, hit;
  while ((hit = piece.find(kSpaceMark, pos)) != std::string::npos) {
    out.append(piece, pos, hit - pos);
    out += ' ';
    pos = hit + kSpaceMark.size();
  }
  out.append(piece, pos, std::string::npos);
  return out;
}

std::string SentencePieceTokenizer::decode(const std::vector<TokenId>& ids, bool skip_special_tokens) const {
  std::string bytes;
  bool first_text = true;
  for (TokenId id : ids) {
    bool special = is_special(id);
    if (skip_special_tokens && special) continue;
    std::string b = token_bytes(id);
    // SentencePiece's own decoder removes the dummy-prefix space once, at the
    // start of the text.
    if (!special && first_text && impl_->dummy_prefix && !b.empty() && b[0] == ' ') b.erase(0, 1);
    if (!special) first_text = false;
    bytes += b;
  }
  return detail::to_valid_utf8(bytes);
}

std::string SentencePieceTokenizer::id_to_piece(TokenId id) const {
  if (id < 0 || id >= impl_->sp().GetPieceSize()) return "";
  return impl_->sp().IdToPiece(id);
}

std::optional<TokenId> SentencePieceTokenizer::piece_to_id(const std::string& piece) const {
  int id = impl_->sp().PieceToId(piece);
  if (id == impl_->sp().unk_id() && piece != impl_->sp().IdToPiece(id)) return std::nullopt;
  return id;
}

int32_t SentencePieceTokenizer::vocab_size() const { return impl_->sp().GetPieceSize(); }
bool SentencePieceTokenizer::is_special(TokenId id) const { return impl_->special_ids.count(id) > 0; }
std::optional<TokenId> SentencePieceTokenizer::bos_id() const { return impl_->bos; }
std::optional<TokenId> SentencePieceTokenizer::eos_id() const { return impl_->eos; }
std::optional<TokenId> SentencePieceTokenizer::pad_id() const { return impl_->pad; }

// ---- Training -----------------------------------------------------------------

namespace {
// ChatML as a Jinja template, so that HF transformers can render it too and
// agentrl's template detection ("<|im_start|>") picks chatml.
constexpr const char* kChatMlJinja =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

void write_tokenizer_config(const std::string& out_dir, const SentencePieceTokenizer& tok,
                            const SentencePieceTrainOptions& options) {
  nlohmann::json added = nlohmann::json::object();
  for (const auto& sym : options.user_defined_symbols) {
    auto id = tok.piece_to_id(sym);
    if (!id) continue;
    added[std::to_string(*id)] = {{"content", sym}, {"lstrip", false}, {"normalized", false},
                                  {"rstrip", false}, {"single_word", false}, {"special", true}};
  }
  auto has = [&](const char* s) {
    return std::find(options.user_defined_symbols.begin(), options.user_defined_symbols.end(), s) !=
           options.user_defined_symbols.end();
  };
  nlohmann::json cfg = {
      {"tokenizer_class", "LlamaTokenizer"},
      {"add_bos_token", false},
      {"add_eos_token", false},
      {"bos_token", nullptr},
      {"unk_token", "<unk>"},
      {"eos_token", has("<|im_end|>") ? nlohmann::json("<|im_end|>") : nlohmann::json(nullptr)},
      {"pad_token", has("<|endoftext|>") ? nlohmann::json("<|endoftext|>") : nlohmann::json(nullptr)},
      {"added_tokens_decoder", added},
      {"clean_up_tokenization_spaces", false},
      {"legacy", false},
  };
  if (has("<|im_start|>") && has("<|im_end|>")) cfg["chat_template"] = kChatMlJinja;
  std::string path = out_dir + "/tokenizer_config.json";
  std::ofstream out(path);
  out << cfg.dump(2) << "\n";
  if (!out) throw IoError("cannot write " + path);
}
}  // namespace

void train_sentencepiece(const std::string& corpus_path, int vocab_size, const std::string& out_dir,
                         const SentencePieceTrainOptions& options) {
  if (!detail::file_exists(corpus_path)) throw IoError("cannot open corpus " + corpus_path);
  if (vocab_size < 8) throw ConfigError("vocab size must be at least 8, got " + std::to_string(vocab_size));
  if (options.model_type != "unigram" && options.model_type != "bpe") {
    throw ConfigError("sentencepiece model type '" + options.model_type + "' is not supported (expected unigram or bpe)");
  }
  std::string symbols;
  for (const auto& s : options.user_defined_symbols) {
    if (s.empty() || s.find(',') != std::string::npos) {
      throw ConfigError("user-defined symbol '" + s + "' must be non-empty and contain no comma");
    }
    symbols += (symbols.empty() ? "" : ",") + s;
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw IoError("cannot create directory " + out_dir + ": " + ec.message());

  std::unordered_map<std::string, std::string> args = {
      {"input", corpus_path},
      {"model_prefix", out_dir + "/tokenizer"},
      {"vocab_size", std::to_string(vocab_size)},
      {"model_type", options.model_type},
      {"byte_fallback", "true"},
      {"character_coverage", std::to_string(options.character_coverage)},
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"add_dummy_prefix", "false"},
      {"split_digits", options.split_digits ? "true" : "false"},
      {"allow_whitespace_only_pieces", "true"},
      {"max_sentence_length", std::to_string(options.max_sentence_length)},
      {"input_sentence_size", "0"},  // use every line: no random sampling
      {"shuffle_input_sentence", "false"},
      {"hard_vocab_limit", options.hard_vocab_limit ? "true" : "false"},
      {"num_threads", "1"},          // multi-threaded EM is not bit-reproducible
      {"unk_id", "0"},
      {"bos_id", "-1"},
      {"eos_id", "-1"},
      {"pad_id", "-1"},
      {"minloglevel", "2"},
  };
  if (!symbols.empty()) args["user_defined_symbols"] = symbols;
  std::string err = detail::train_sentencepiece_model(args, options.seed);
  if (!err.empty()) throw ConfigError("sentencepiece training on " + corpus_path + " failed: " + err);
  std::filesystem::remove(out_dir + "/tokenizer.vocab", ec);  // not used by agentrl or HF
  auto tok = SentencePieceTokenizer::load(out_dir + "/tokenizer.model");
  write_tokenizer_config(out_dir, *tok, options);
}

}  // namespace agentrl::text
