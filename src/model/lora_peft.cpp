// PEFT-format LoRA adapters; see lora_peft.h.
#include "agentrl/model/lora_peft.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/strings.h"
#include "agentrl/model/safetensors.h"
#include "atomic_file.h"
#include "tensor_mismatch.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace agentrl::model {
namespace {

constexpr const char* kConfigFile = "adapter_config.json";
constexpr const char* kWeightsFile = "adapter_model.safetensors";
constexpr const char* kKeyPrefix = "base_model.model.";

const std::vector<std::string>& all_linear() {
  static const std::vector<std::string> names = LoraOptions{}.target_modules;
  return names;
}

// A field that must be absent, null, false, empty or equal to `ok` (a
// feature of PEFT that agentrl does not implement).
void refuse_unless_default(const json& j, const std::string& file, const char* key, const json& ok = nullptr) {
  if (!j.contains(key)) return;
  const json& v = j.at(key);
  if (v.is_null() || v == false || (v.is_object() && v.empty()) || (v.is_array() && v.empty()) || v == ok) return;
  throw ConfigError(file + ": " + key + " = " + v.dump() + " is not supported by agentrl's LoRA (expected " +
                    (ok.is_null() ? std::string("null, false or empty") : ok.dump()) + ")");
}

std::vector<std::string> read_targets(const json& j, const std::string& file) {
  if (!j.contains("target_modules")) throw FormatError(file + ": missing key target_modules");
  const json& t = j.at("target_modules");
  if (t.is_string()) {
    if (t.get<std::string>() == "all-linear") return all_linear();
    throw ConfigError(file + ": target_modules = " + t.dump() +
                      " (a regular expression) is not supported; expected a list of module names or \"all-linear\"");
  }
  if (!t.is_array() || t.empty()) throw FormatError(file + ": target_modules must be a non-empty list of names");
  std::vector<std::string> out;
  for (const auto& x : t) {
    if (!x.is_string()) throw FormatError(file + ": target_modules holds a non-string " + x.dump());
    out.push_back(x.get<std::string>());
  }
  return out;
}

LoraInit read_init(const json& j) {
  if (j.contains("init_lora_weights") && j.at("init_lora_weights") == "gaussian") return LoraInit::kGaussian;
  return LoraInit::kDefault;  // true, false or another scheme: only the start differs, the loaded weights rule
}

}  // namespace

std::string peft_key(const std::string& name) { return kKeyPrefix + name + ".weight"; }

PeftAdapterConfig read_peft_config(const std::string& dir) {
  const std::string file = (fs::path(dir) / kConfigFile).string();
  if (!fs::is_regular_file(file))
    throw ConfigError("no PEFT adapter at " + dir + ": " + kConfigFile + " is missing");
  json j;
  try {
    j = json::parse(read_file(file));
  } catch (const json::exception& e) {
    throw FormatError(file + ": not valid JSON: " + e.what());
  }
  const std::string type = j.value("peft_type", std::string());
  if (type != "LORA") throw ConfigError(file + ": peft_type = \"" + type + "\"; expected \"LORA\"");
  refuse_unless_default(j, file, "use_dora");
  refuse_unless_default(j, file, "fan_in_fan_out");
  refuse_unless_default(j, file, "rank_pattern");
  refuse_unless_default(j, file, "alpha_pattern");
  refuse_unless_default(j, file, "layers_to_transform");
  refuse_unless_default(j, file, "modules_to_save");
  refuse_unless_default(j, file, "lora_bias");
  refuse_unless_default(j, file, "bias", "none");
  PeftAdapterConfig c;
  try {
    c.options.rank = j.at("r").get<int64_t>();
    c.options.alpha = j.value("lora_alpha", 8.0);  // PEFT's default lora_alpha
    c.options.dropout = j.value("lora_dropout", 0.0);
    c.options.use_rslora = j.value("use_rslora", false);
  } catch (const json::exception& e) {
    throw FormatError(file + ": r, lora_alpha, lora_dropout or use_rslora missing or mistyped: " + e.what());
  }
  c.options.target_modules = read_targets(j, file);
  c.options.init = read_init(j);
  if (j.contains("base_model_name_or_path") && j.at("base_model_name_or_path").is_string())
    c.base_model_name_or_path = j.at("base_model_name_or_path").get<std::string>();
  return c;
}

void check_peft_matches(const LoraOptions& configured, const PeftAdapterConfig& adapter, const std::string& dir,
                        const std::string& key_prefix) {
  const LoraOptions& a = adapter.options;
  auto differ = [&](const std::string& key, const std::string& ours, const std::string& theirs) {
    throw ConfigError(key_prefix + "." + key + ": " + ours + ", but the adapter at " + dir + " has " + theirs +
                      " (set " + key_prefix + "." + key + " to the adapter's value)");
  };
  if (configured.rank != a.rank) differ("rank", std::to_string(configured.rank), std::to_string(a.rank));
  if (configured.alpha != a.alpha) differ("alpha", std::to_string(configured.alpha), std::to_string(a.alpha));
  if (configured.use_rslora != a.use_rslora)
    differ("use_rslora", configured.use_rslora ? "true" : "false", a.use_rslora ? "true" : "false");
  const std::set<std::string> ours(configured.target_modules.begin(), configured.target_modules.end());
  const std::set<std::string> theirs(a.target_modules.begin(), a.target_modules.end());
  if (ours != theirs)
    differ("target_modules", "[" + strings::join(configured.target_modules, ", ") + "]",
           "[" + strings::join(a.target_modules, ", ") + "]");
}

void save_peft_adapter(torch::nn::Module& model, const PeftAdapterConfig& config, const std::string& dir_in,
                       torch::Dtype dtype) {
  auto named = named_lora_parameters(model);
  if (named.empty()) throw Error("cannot save a PEFT adapter to " + dir_in + ": the model has no LoRA adapters");
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (auto& [name, t] : named) tensors.emplace_back(peft_key(name), t.detach());
  const LoraOptions& o = config.options;
  json j = {{"peft_type", "LORA"},
            {"task_type", "CAUSAL_LM"},
            {"base_model_name_or_path", config.base_model_name_or_path},
            {"r", o.rank},
            {"lora_alpha", o.alpha},
            {"lora_dropout", o.dropout},
            {"target_modules", o.target_modules},
            {"use_rslora", o.use_rslora},
            {"init_lora_weights", o.init == LoraInit::kGaussian ? json("gaussian") : json(true)},
            {"bias", "none"},
            {"fan_in_fan_out", false},
            {"inference_mode", true},
            {"use_dora", false},
            {"modules_to_save", nullptr},
            {"layers_to_transform", nullptr},
            {"layers_pattern", nullptr},
            {"rank_pattern", json::object()},
            {"alpha_pattern", json::object()},
            {"revision", nullptr},
            {"auto_mapping", nullptr}};
  fs::path dir = fs::path(dir_in).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  if (dir.parent_path().empty()) dir = fs::path(".") / dir;
  ensure_dir(dir.parent_path().string());
  const fs::path tmp = detail::temp_sibling(dir, "tmp");
  std::error_code ec;
  try {
    fs::create_directory(tmp);
    save_safetensors((tmp / kWeightsFile).string(), tensors, {{"format", "pt"}}, dtype);
    write_file_atomic((tmp / kConfigFile).string(), j.dump(2) + "\n");
    fsync_dir(tmp.string());
    detail::commit_dir(tmp, dir, /*overwrite=*/true);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw IoError("cannot save PEFT adapter to " + dir.string() + ": " + e.what());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

void load_peft_adapter(torch::nn::Module& model, const std::string& dir) {
  const std::string file = (fs::path(dir) / kWeightsFile).string();
  if (!fs::is_regular_file(file)) throw ConfigError("no PEFT adapter weights at " + file);
  auto st = SafetensorsSet::open(file);
  auto named = named_lora_parameters(model);
  if (named.empty()) throw Error("cannot load the PEFT adapter " + dir + ": the model has no LoRA adapters attached");
  std::set<std::string> expected;
  detail::TensorMismatch mismatch;
  for (const auto& [name, t] : named) {
    const std::string key = peft_key(name);
    expected.insert(key);
    if (!st.contains(key)) {
      mismatch.missing.push_back(key);
      continue;
    }
    mismatch.check_shape(key, "adapter", st.info(key).shape, t.sizes());
  }
  for (const auto& key : st.names())
    if (!expected.count(key)) mismatch.unexpected.push_back(key);
  mismatch.throw_if_any(file, "the adapter does not match the model's adapters");
  torch::NoGradGuard no_grad;
  for (auto& [name, t] : named) t.copy_(st.tensor(peft_key(name)));
}

}  // namespace agentrl::model
