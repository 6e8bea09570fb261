// config.json <-> ModelArgs. Defaults are those of the transformers config
// classes (configuration_qwen2.py, configuration_qwen3.py,
// configuration_llama.py, configuration_mistral.py); rope_scaling follows
// modeling_rope_utils.py (keys "rope_type", or the legacy "type").
#include "agentrl/model/hf_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"

namespace agentrl::model {

const char* const kExportTransformersVersion = "4.51.0";

namespace {

using json = nlohmann::json;

// Typed access to one config.json object with messages naming file and key.
class ConfigReader {
 public:
  ConfigReader(const json& j, std::string file, std::string prefix = "")
      : j_(j), file_(std::move(file)), prefix_(std::move(prefix)) {}

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  const json& at(const char* key) const { return j_.at(key); }

  [[noreturn]] void fail(const char* key, const std::string& expected) const {
    std::string value = j_.contains(key) ? j_.at(key).dump() : "(missing)";
    throw ConfigError(file_ + ": key '" + prefix_ + key + "' = " + value + ": expected " + expected);
  }
  [[noreturn]] void unsupported(const char* key, const std::string& why) const {
    throw ConfigError(file_ + ": key '" + prefix_ + key + "' = " + j_.at(key).dump() + " is not supported: " + why);
  }

  int64_t integer(const char* key, const json& v) const {
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_float()) {
      double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<int64_t>(d);
    }
    fail(key, "an integer");
  }
  int64_t positive_int(const char* key) const {
    if (!has(key)) fail(key, "a positive integer (this key is required)");
    int64_t v = integer(key, at(key));
    if (v <= 0) fail(key, "a positive integer");
    return v;
  }
  int64_t positive_int_or(const char* key, int64_t dflt) const { return has(key) ? positive_int(key) : dflt; }
  double positive_number_or(const char* key, double dflt) const {
    if (!has(key)) return dflt;
    if (!at(key).is_number() || !(at(key).get<double>() > 0)) fail(key, "a positive number");
    return at(key).get<double>();
  }
  bool boolean_or(const char* key, bool dflt) const {
    if (!has(key)) return dflt;
    if (!at(key).is_boolean()) fail(key, "true or false");
    return at(key).get<bool>();
  }
  std::string string_or(const char* key, const std::string& dflt) const {
    if (!has(key)) return dflt;
    if (!at(key).is_string()) fail(key, "a string");
    return at(key).get<std::string>();
  }
  // Token ids: an integer, null (-1), or a list whose first element is used
  // (ModelArgs holds one id; Llama-3 Instruct lists several EOS ids).
  int64_t token_id(const char* key) const {
    if (!has(key)) return -1;
    const json& v = at(key);
    if (v.is_array()) {
      if (v.empty()) return -1;
      return integer(key, v.at(0));
    }
    return integer(key, v);
  }

 private:
  const json& j_;
  std::string file_;
  std::string prefix_;
};

int64_t default_max_positions(const std::string& model_type) {
  if (model_type == "llama") return 2048;       // LlamaConfig
  if (model_type == "mistral") return 131072;   // MistralConfig: 4096 * 32
  return 32768;                                 // Qwen2Config, Qwen3Config
}

RopeScaling parse_rope_scaling(const ConfigReader& top, const json& rs, const std::string& file, const char* key) {
  RopeScaling out;
  if (!rs.is_object()) top.fail(key, "null or an object with 'rope_type'");
  ConfigReader r(rs, file, std::string(key) + ".");
  std::string type = r.has("rope_type") ? r.string_or("rope_type", "") : r.string_or("type", "");
  const char* type_key = r.has("rope_type") ? "rope_type" : "type";
  if (type.empty()) top.fail(key, "an object with a 'rope_type' string");
  if (type == "default") return out;
  if (type != "linear" && type != "llama3")
    r.unsupported(type_key, "only rope types default, linear and llama3 are implemented");
  out.type = type;
  if (!r.has("factor")) r.fail("factor", "a positive number (required for rope type " + type + ")");
  out.factor = r.positive_number_or("factor", 1.0);
  if (type == "llama3") {
    for (const char* k : {"low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
      if (!r.has(k)) r.fail(k, "a positive number (required for rope type llama3)");
    out.low_freq_factor = r.positive_number_or("low_freq_factor", 1.0);
    out.high_freq_factor = r.positive_number_or("high_freq_factor", 4.0);
    out.original_max_position_embeddings = r.positive_int("original_max_position_embeddings");
    if (!(out.high_freq_factor > out.low_freq_factor))
      r.fail("high_freq_factor", "a number larger than low_freq_factor");
  }
  return out;
}

// Keys whose non-default values change the computation and are not implemented.
void refuse_unsupported(const ConfigReader& r, const ModelArgs& a) {
  if (a.hidden_act != "silu") r.unsupported("hidden_act", "only silu is implemented");
  if (r.boolean_or("mlp_bias", false)) r.unsupported("mlp_bias", "MLP projections have no bias here");
  if (r.boolean_or("use_sliding_window", false))
    r.unsupported("use_sliding_window", "sliding-window attention is not implemented");
  if (a.model_type == "mistral" && r.has("sliding_window")) {
    int64_t w = r.integer("sliding_window", r.at("sliding_window"));
    if (w < a.max_position_embeddings)
      r.unsupported("sliding_window", "sliding-window attention is not implemented (use null)");
  }
  const std::string dt = a.torch_dtype;
  if (dt != "float32" && dt != "bfloat16" && dt != "float16")
    throw ConfigError("key 'torch_dtype' = \"" + dt + "\" is not supported: expected float32, bfloat16 or float16");
}

ModelArgs parse_json(const json& j, const std::string& file) {
  if (!j.is_object()) throw ConfigError(file + ": expected a JSON object with the model's config");
  ConfigReader r(j, file);
  ModelArgs a;
  if (!r.has("model_type")) r.fail("model_type", "one of qwen2, qwen3, llama, mistral (this key is required)");
  a.model_type = r.string_or("model_type", "");
  if (a.model_type != "qwen2" && a.model_type != "qwen3" && a.model_type != "llama" && a.model_type != "mistral")
    r.fail("model_type", "one of qwen2, qwen3, llama, mistral");
  a.vocab_size = r.positive_int("vocab_size");
  a.hidden_size = r.positive_int("hidden_size");
  a.intermediate_size = r.positive_int("intermediate_size");
  a.num_hidden_layers = r.positive_int("num_hidden_layers");
  a.num_attention_heads = r.positive_int("num_attention_heads");
  a.num_key_value_heads = r.positive_int_or("num_key_value_heads", a.num_attention_heads);
  if (a.num_attention_heads % a.num_key_value_heads != 0)
    r.fail("num_key_value_heads", "a divisor of num_attention_heads (" + std::to_string(a.num_attention_heads) + ")");
  if (r.has("head_dim")) {
    a.head_dim = r.positive_int("head_dim");
  } else {
    if (a.hidden_size % a.num_attention_heads != 0)
      r.fail("hidden_size", "a multiple of num_attention_heads when head_dim is absent");
    a.head_dim = a.hidden_size / a.num_attention_heads;
  }
  if (a.head_dim % 2 != 0) r.fail("head_dim", "an even number (RoPE rotates pairs)");
  a.rms_norm_eps = r.positive_number_or("rms_norm_eps", 1e-6);
  a.max_position_embeddings = r.positive_int_or("max_position_embeddings", default_max_positions(a.model_type));
  a.tie_word_embeddings = r.boolean_or("tie_word_embeddings", false);
  a.hidden_act = r.string_or("hidden_act", "silu");
  // transformers >= 4.56 writes "dtype"; older versions "torch_dtype".
  a.torch_dtype = r.has("torch_dtype") ? r.string_or("torch_dtype", "float32") : r.string_or("dtype", "float32");
  // Qwen2 always has q/k/v bias and Mistral never (modeling_qwen2.py /
  // modeling_mistral.py hard-code it); Llama and Qwen3 read attention_bias.
  if (a.model_type == "qwen2") a.attention_bias = true;
  else if (a.model_type == "mistral") a.attention_bias = false;
  else a.attention_bias = r.boolean_or("attention_bias", false);
  a.qk_norm = a.model_type == "qwen3";
  // RoPE: top-level rope_theta / rope_scaling, or (transformers >= 4.56)
  // a rope_parameters object holding both.
  a.rope_theta = r.positive_number_or("rope_theta", 10000.0);
  if (r.has("rope_scaling")) a.rope_scaling = parse_rope_scaling(r, r.at("rope_scaling"), file, "rope_scaling");
  if (r.has("rope_parameters")) {
    const json& rp = r.at("rope_parameters");
    a.rope_scaling = parse_rope_scaling(r, rp, file, "rope_parameters");
    ConfigReader rr(rp, file, "rope_parameters.");
    a.rope_theta = rr.positive_number_or("rope_theta", a.rope_theta);
  }
  a.bos_token_id = r.token_id("bos_token_id");
  a.eos_token_id = r.token_id("eos_token_id");
  a.pad_token_id = r.token_id("pad_token_id");
  try {
    refuse_unsupported(r, a);
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    throw ConfigError(msg.rfind(file, 0) == 0 ? msg : file + ": " + msg);
  }
  return a;
}

// YAML node -> JSON value. Plain scalars are typed the YAML 1.2 core-schema
// way (null, true/false, integers, floats), quoted scalars stay strings.
json yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& e : n) out.push_back(yaml_to_json(e));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : n) out[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  try {
    size_t pos = 0;
    long long v = std::stoll(s, &pos);
    if (pos == s.size()) return v;
  } catch (...) {
  }
  try {
    size_t pos = 0;
    double d = std::stod(s, &pos);
    if (pos == s.size()) return d;
  } catch (...) {
  }
  return s;
}

}  // namespace

ModelArgs parse_hf_config_text(const std::string& json_text, const std::string& name) {
  json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ConfigError(name + ": not valid JSON");
  return parse_json(j, name);
}

ModelArgs parse_hf_config(const std::string& path) { return parse_hf_config_text(read_file(path), path); }

ModelArgs parse_model_description(const std::string& path) {
  std::string text = read_file(path);
  if (std::filesystem::path(path).extension() == ".json") return parse_hf_config_text(text, path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ": line " + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
  return parse_json(yaml_to_json(root), path);
}

std::string hf_architecture(const std::string& model_type) {
  if (model_type == "qwen2") return "Qwen2ForCausalLM";
  if (model_type == "qwen3") return "Qwen3ForCausalLM";
  if (model_type == "llama") return "LlamaForCausalLM";
  if (model_type == "mistral") return "MistralForCausalLM";
  throw ConfigError("unsupported model_type '" + model_type + "' (expected qwen2, qwen3, llama or mistral)");
}

namespace {

void check_expressible(const ModelArgs& a) {
  auto bad = [&](const std::string& what) {
    throw ConfigError("cannot export model_type " + a.model_type + " with " + what + " as a " +
                      hf_architecture(a.model_type) + " config.json");
  };
  if (a.model_type == "qwen2" && !a.attention_bias) bad("attention_bias=false (Qwen2 always has q/k/v bias)");
  if (a.model_type == "mistral" && a.attention_bias) bad("attention_bias=true (Mistral has no q/k/v bias)");
  if (a.model_type == "qwen3" && !a.qk_norm) bad("qk_norm=false (Qwen3 always has q/k norms)");
  if (a.model_type != "qwen3" && a.qk_norm) bad("qk_norm=true (only Qwen3 has q/k norms)");
  if (a.hidden_act != "silu") bad("hidden_act=" + a.hidden_act);
}

json rope_scaling_json(const RopeScaling& r) {
  if (r.type == "none" || r.type == "default") return nullptr;
  // Both keys: "rope_type" for transformers >= 4.43, "type" for older
  // versions and other readers.
  json out = {{"rope_type", r.type}, {"type", r.type}, {"factor", r.factor}};
  if (r.type == "llama3") {
    out["low_freq_factor"] = r.low_freq_factor;
    out["high_freq_factor"] = r.high_freq_factor;
    out["original_max_position_embeddings"] = r.original_max_position_embeddings;
  }
  return out;
}

}  // namespace

std::string hf_config_json(const ModelArgs& a, const std::string& torch_dtype) {
  check_expressible(a);
  const int64_t head_dim = a.head_dim > 0 ? a.head_dim : a.hidden_size / a.num_attention_heads;
  json j = {
      {"architectures", {hf_architecture(a.model_type)}},
      {"model_type", a.model_type},
      {"vocab_size", a.vocab_size},
      {"hidden_size", a.hidden_size},
      {"intermediate_size", a.intermediate_size},
      {"num_hidden_layers", a.num_hidden_layers},
      {"num_attention_heads", a.num_attention_heads},
      {"num_key_value_heads", a.num_key_value_heads},
      {"head_dim", head_dim},
      {"hidden_act", a.hidden_act},
      {"rms_norm_eps", a.rms_norm_eps},
      {"rope_theta", a.rope_theta},
      {"rope_scaling", rope_scaling_json(a.rope_scaling)},
      {"max_position_embeddings", a.max_position_embeddings},
      {"tie_word_embeddings", a.tie_word_embeddings},
      {"torch_dtype", torch_dtype.empty() ? a.torch_dtype : torch_dtype},
      {"transformers_version", kExportTransformersVersion},
      {"attention_dropout", 0.0},
      {"initializer_range", 0.02},
      {"use_cache", true},
  };
  if (a.model_type == "llama" || a.model_type == "qwen3") j["attention_bias"] = a.attention_bias;
  if (a.model_type == "llama") j["mlp_bias"] = false;
  if (a.model_type == "qwen2" || a.model_type == "qwen3") {
    j["use_sliding_window"] = false;
    j["sliding_window"] = nullptr;
    j["max_window_layers"] = a.num_hidden_layers;
  }
  if (a.model_type == "mistral") j["sliding_window"] = nullptr;
  if (a.bos_token_id >= 0) j["bos_token_id"] = a.bos_token_id;
  if (a.eos_token_id >= 0) j["eos_token_id"] = a.eos_token_id;
  if (a.pad_token_id >= 0) j["pad_token_id"] = a.pad_token_id;
  return j.dump(2) + "\n";
}

std::string hf_generation_config_json(const ModelArgs& a) {
  json j = {{"_from_model_config", true}, {"transformers_version", kExportTransformersVersion}};
  if (a.bos_token_id >= 0) j["bos_token_id"] = a.bos_token_id;
  if (a.eos_token_id >= 0) j["eos_token_id"] = a.eos_token_id;
  if (a.pad_token_id >= 0) j["pad_token_id"] = a.pad_token_id;
  return j.dump(2) + "\n";
}

void write_hf_config(const ModelArgs& args, const std::string& path, const std::string& torch_dtype) {
  write_file_atomic(path, hf_config_json(args, torch_dtype));
}

void write_generation_config(const ModelArgs& args, const std::string& path) {
  write_file_atomic(path, hf_generation_config_json(args));
}

}  // namespace agentrl::model
