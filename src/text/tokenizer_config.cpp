#include "tokenizer_config.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "agentrl/core/error.h"

namespace agentrl::text::detail {

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open " + path);
  std::stringstream buf;
  buf << in.rdbuf();
  try {
    return nlohmann::json::parse(buf.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(path + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
}

namespace {
std::optional<std::string> token_role(const nlohmann::json& cfg, const char* key, const std::string& path) {
  if (!cfg.contains(key) || cfg.at(key).is_null()) return std::nullopt;
  const auto& v = cfg.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v.at("content").is_string()) return v.at("content").get<std::string>();
  throw FormatError(path + ": key '" + key + "' must be a string or an object with \"content\", got " + v.dump());
}

std::optional<bool> flag(const nlohmann::json& cfg, const char* key, const std::string& path) {
  if (!cfg.contains(key) || cfg.at(key).is_null()) return std::nullopt;
  if (!cfg.at(key).is_boolean()) throw FormatError(path + ": key '" + key + "' must be true or false, got " + cfg.at(key).dump());
  return cfg.at(key).get<bool>();
}
}  // namespace

namespace {
TokenizerConfigFile parse_tokenizer_config(const nlohmann::json& cfg, const std::string& path);
}  // namespace

TokenizerConfigFile read_tokenizer_config(const std::string& path) {
  if (path.empty() || !file_exists(path)) return {};
  nlohmann::json cfg = read_json_file(path);
  try {
    return parse_tokenizer_config(cfg, path);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(path + ": unexpected structure: " + e.what());
  }
}

namespace {
TokenizerConfigFile parse_tokenizer_config(const nlohmann::json& cfg, const std::string& path) {
  TokenizerConfigFile out;
  if (!cfg.is_object()) throw FormatError(path + ": expected a JSON object at the top level");
  out.present = true;
  out.bos_token = token_role(cfg, "bos_token", path);
  out.eos_token = token_role(cfg, "eos_token", path);
  out.pad_token = token_role(cfg, "pad_token", path);
  out.unk_token = token_role(cfg, "unk_token", path);
  out.add_bos_token = flag(cfg, "add_bos_token", path);
  out.add_eos_token = flag(cfg, "add_eos_token", path);
  if (cfg.contains("chat_template")) {
    const auto& t = cfg.at("chat_template");
    if (t.is_string()) {
      out.chat_template = t.get<std::string>();
    } else if (t.is_array()) {
      // Named templates: [{"name": "default", "template": ...}, ...]
      for (const auto& e : t) {
        if (e.value("name", std::string()) == "default" || out.chat_template.empty()) {
          out.chat_template = e.value("template", std::string());
        }
      }
    }
  }
  if (cfg.contains("added_tokens_decoder") && cfg.at("added_tokens_decoder").is_object()) {
    for (const auto& [key, v] : cfg.at("added_tokens_decoder").items()) {
      AddedToken t;
      try {
        t.id = std::stoi(key);
      } catch (const std::exception&) {
        throw FormatError(path + ": added_tokens_decoder key '" + key + "' is not a token id");
      }
      t.content = v.value("content", std::string());
      t.special = v.value("special", false);
      t.lstrip = v.value("lstrip", false);
      t.rstrip = v.value("rstrip", false);
      t.single_word = v.value("single_word", false);
      out.added_tokens.push_back(std::move(t));
    }
  }
  return out;
}
}  // namespace

}  // namespace agentrl::text::detail
