#include "agentrl/text/bpe_tokenizer.h"

#include <algorithm>

#include "added_tokens.h"
#include "agentrl/core/error.h"
#include "bpe_model.h"
#include "byte_level.h"
#include "pre_tokenizer.h"
#include "tokenizer_config.h"
#include "utf8_util.h"

namespace agentrl::text {

using nlohmann::json;

struct BpeTokenizer::Impl {
  std::unique_ptr<detail::Normalizer> normalizer;
  std::unique_ptr<detail::PreTokenizer> pre_tokenizer;
  std::unique_ptr<detail::BpeModel> model;
  std::unique_ptr<detail::AddedTokenMatcher> added;
  bool byte_level = false;
  std::vector<TokenId> prefix, suffix;  // post-processor, single sequence
  std::optional<TokenId> bos, eos, pad;
  int32_t vocab_size = 0;
};

namespace {

detail::BpeModelSpec parse_model(const json& m, bool byte_level, const std::string& where) {
  if (m.value("type", std::string("BPE")) != "BPE") {
    throw FormatError(where + ": model.type '" + m.value("type", std::string()) + "' is not supported (expected BPE)");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (m.contains(key) && m.at(key).is_string() && !m.at(key).get<std::string>().empty()) {
      throw FormatError(where + ": model." + key + " is not supported (got '" + m.at(key).get<std::string>() + "')");
    }
  }
  if (m.value("byte_fallback", false)) throw FormatError(where + ": model.byte_fallback=true is not supported");
  if (m.contains("dropout") && !m.at("dropout").is_null()) {
    throw FormatError(where + ": model.dropout is not supported (BPE dropout is for training only)");
  }
  detail::BpeModelSpec spec;
  spec.byte_level = byte_level;
  spec.ignore_merges = m.value("ignore_merges", false);
  if (m.contains("unk_token") && m.at("unk_token").is_string()) spec.unk_token = m.at("unk_token").get<std::string>();
  const json& vocab = m.at("vocab");
  if (!vocab.is_object()) throw FormatError(where + ": model.vocab must be an object of token -> id");
  spec.vocab.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) spec.vocab.emplace(it.key(), it.value().get<TokenId>());
  const json& merges = m.at("merges");
  spec.merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& e = merges[i];
    if (e.is_array() && e.size() == 2) {  // newer format: ["a", "b"]
      spec.merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
    } else if (e.is_string()) {  // older format: "a b"
      const std::string& s = e.get_ref<const std::string&>();
      size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos) {
        throw FormatError(where + ": model.merges[" + std::to_string(i) + "] = '" + s + "' is not two tokens");
      }
      spec.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else {
      throw FormatError(where + ": model.merges[" + std::to_string(i) + "] must be \"a b\" or [\"a\", \"b\"]");
    }
  }
  return spec;
}

std::vector<detail::AddedToken> parse_added(const json& arr, const std::string& where) {
  std::vector<detail::AddedToken> out;
  if (arr.is_null()) return out;
  for (const json& t : arr) {
    detail::AddedToken a;
    a.id = t.at("id").get<TokenId>();
    a.content = t.at("content").get<std::string>();
    if (a.content.empty()) throw FormatError(where + ": added token " + std::to_string(a.id) + " has empty content");
    a.special = t.value("special", false);
    a.lstrip = t.value("lstrip", false);
    a.rstrip = t.value("rstrip", false);
    a.single_word = t.value("single_word", false);
    out.push_back(std::move(a));
  }
  return out;
}

// Post-processor for a single sequence: ids before and after it.
void parse_post_processor(const json& pp, std::vector<TokenId>& prefix, std::vector<TokenId>& suffix,
                          const std::string& where) {
  if (pp.is_null()) return;
  std::string type = pp.value("type", std::string());
  if (type == "ByteLevel") return;  // only adjusts offsets
  if (type == "Sequence") {
    for (const json& sub : pp.at("processors")) parse_post_processor(sub, prefix, suffix, where);
    return;
  }
  if (type == "TemplateProcessing") {
    bool after = false;
    for (const json& item : pp.at("single")) {
      if (item.contains("Sequence")) {
        after = true;
      } else if (item.contains("SpecialToken")) {
        std::string name = item.at("SpecialToken").at("id").get<std::string>();
        const json& st = pp.at("special_tokens");
        if (!st.contains(name)) {
          throw FormatError(where + ": post_processor TemplateProcessing uses '" + name + "' missing from special_tokens");
        }
        for (const json& id : st.at(name).at("ids")) (after ? suffix : prefix).push_back(id.get<TokenId>());
      }
    }
    return;
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    prefix.push_back(pp.at("cls").at(1).get<TokenId>());
    suffix.push_back(pp.at("sep").at(1).get<TokenId>());
    return;
  }
  throw FormatError(where + ": unsupported post_processor type '" + type +
                    "' (supported: ByteLevel, TemplateProcessing, BertProcessing, RobertaProcessing, Sequence)");
}

bool has_byte_level(const json& j) {
  if (j.is_object()) {
    if (j.value("type", std::string()) == "ByteLevel") return true;
    for (const auto& [k, v] : j.items()) {
      if (has_byte_level(v)) return true;
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      if (has_byte_level(v)) return true;
    }
  }
  return false;
}

std::optional<TokenId> resolve_role(const BpeTokenizer& tok, const std::optional<std::string>& name, const char* key,
                                    const std::string& where) {
  if (!name) return std::nullopt;
  auto id = tok.piece_to_id(*name);
  if (!id) throw FormatError(where + ": " + key + " '" + *name + "' is not a token of the tokenizer");
  return id;
}

}  // namespace

bool BpeTokenizer::supports(const std::string& tokenizer_json) {
  json j = detail::read_json_file(tokenizer_json);
  if (!j.is_object() || !j.contains("model") || !j.at("model").is_object()) return false;
  const json& m = j.at("model");
  bool bpe = !m.contains("type") || m.at("type") == "BPE";
  return bpe && (has_byte_level(j.value("pre_tokenizer", json())) || has_byte_level(j.value("decoder", json())));
}

std::shared_ptr<const BpeTokenizer> BpeTokenizer::load(const std::string& tokenizer_json,
                                                       const std::string& tokenizer_config_json) {
  const std::string& where = tokenizer_json;
  json j = detail::read_json_file(tokenizer_json);
  auto impl = std::make_unique<Impl>();
  try {
    if (!j.is_object() || !j.contains("model")) throw FormatError(where + ": no \"model\" object (not a tokenizer.json?)");
    impl->normalizer = std::make_unique<detail::Normalizer>(j.value("normalizer", json()), where);
    impl->pre_tokenizer = std::make_unique<detail::PreTokenizer>(j.value("pre_tokenizer", json()), where, &impl->byte_level);
    if (!impl->byte_level) {
      throw FormatError(where + ": pre_tokenizer has no ByteLevel step; only byte-level BPE tokenizer.json files are "
                        "supported (use tokenizer.model for SentencePiece models)");
    }
    impl->model = std::make_unique<detail::BpeModel>(parse_model(j.at("model"), impl->byte_level, where), where);
    impl->added = std::make_unique<detail::AddedTokenMatcher>(parse_added(j.value("added_tokens", json()), where));
    parse_post_processor(j.value("post_processor", json()), impl->prefix, impl->suffix, where);
  } catch (const json::exception& e) {
    throw FormatError(where + ": unexpected structure: " + e.what());
  }
  TokenId max_id = impl->model->max_id();
  for (const auto& t : impl->added->tokens()) max_id = std::max(max_id, t.id);
  impl->vocab_size = max_id + 1;
  Impl* raw = impl.get();
  auto tok = std::make_shared<BpeTokenizer>(std::move(impl));
  auto cfg = detail::read_tokenizer_config(tokenizer_config_json);
  raw->bos = resolve_role(*tok, cfg.bos_token, "bos_token", tokenizer_config_json);
  raw->eos = resolve_role(*tok, cfg.eos_token, "eos_token", tokenizer_config_json);
  raw->pad = resolve_role(*tok, cfg.pad_token, "pad_token", tokenizer_config_json);
  return tok;
}

BpeTokenizer::BpeTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpeTokenizer::~BpeTokenizer() = default;

std::vector<TokenId> BpeTokenizer::encode(std::string_view text, bool add_special_tokens, bool parse_special) const {
  std::vector<TokenId> ids;
  if (add_special_tokens) ids = impl_->prefix;
  std::vector<std::string_view> pieces;
  std::string normalized;
  for (const detail::Segment& seg : impl_->added->split(text, parse_special)) {
    if (seg.token >= 0) {
      ids.push_back(seg.token);
      continue;
    }
    std::string_view view = seg.text;
    if (!impl_->normalizer->identity()) {
      normalized = impl_->normalizer->normalize(seg.text);
      view = normalized;
    }
    pieces.clear();
    impl_->pre_tokenizer->split(view, pieces);
    for (std::string_view p : pieces) impl_->model->encode_piece(p, ids);
  }
  if (add_special_tokens) ids.insert(ids.end(), impl_->suffix.begin(), impl_->suffix.end());
  return ids;
}

std::string BpeTokenizer::token_bytes(TokenId id) const {
  if (const auto* a = impl_->added->find(id)) return a->content;
  const std::string* text = impl_->model->token_text(id);
  if (!text) return "";  // no such token: HF's decode skips it too
  std::string out;
  if (!impl_->byte_level || !detail::ByteLevelAlphabet::get().decode(*text, out)) return *text;
  return out;
}

std::string BpeTokenizer::decode(const std::vector<TokenId>& ids, bool skip_special_tokens) const {
  std::string bytes;
  for (TokenId id : ids) {
    if (skip_special_tokens && is_special(id)) continue;
    bytes += token_bytes(id);
  }
  return detail::to_valid_utf8(bytes);
}

std::string BpeTokenizer::id_to_piece(TokenId id) const {
  if (const auto* a = impl_->added->find(id)) return a->content;
  const std::string* text = impl_->model->token_text(id);
  return text ? *text : std::string();
}

std::optional<TokenId> BpeTokenizer::piece_to_id(const std::string& piece) const {
  if (const auto* a = impl_->added->find(piece)) return a->id;
  return impl_->model->token_id(piece);
}

int32_t BpeTokenizer::vocab_size() const { return impl_->vocab_size; }

bool BpeTokenizer::is_special(TokenId id) const {
  const auto* a = impl_->added->find(id);
  return a && a->special;
}

std::optional<TokenId> BpeTokenizer::bos_id() const { return impl_->bos; }
std::optional<TokenId> BpeTokenizer::eos_id() const { return impl_->eos; }
std::optional<TokenId> BpeTokenizer::pad_id() const { return impl_->pad; }

}  // namespace agentrl::text
