// HF model directories <-> modules; see hf_checkpoint.h. The directory
// layout and shard naming follow transformers' save_pretrained
// (modeling_utils.py: "model-00001-of-00002.safetensors", index with
// metadata.total_size and weight_map; safetensors metadata {"format": "pt"},
// which transformers requires when loading).
#include "agentrl/model/hf_checkpoint.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/strings.h"
#include "agentrl/model/hf_config.h"
#include "agentrl/model/lora.h"
#include "atomic_file.h"
#include "tensor_mismatch.h"

namespace agentrl::model {

namespace fs = std::filesystem;

const std::vector<std::string> kTokenizerFiles = {
    "tokenizer.json",   "tokenizer_config.json", "tokenizer.model", "special_tokens_map.json",
    "added_tokens.json", "vocab.json",           "merges.txt",      "chat_template.jinja",
    "chat_template.json"};

namespace {

using detail::shape_text;
using strings::ends_with;

}  // namespace

void load_state_dict(torch::nn::Module& m, const SafetensorsSet& st, const LoadOptions& opts) {
  std::vector<std::pair<std::string, torch::Tensor>> targets;  // (name, destination)
  std::set<std::string> known;
  detail::TensorMismatch mismatch;
  for (const auto& item : m.named_parameters(/*recurse=*/true)) {
    if (is_lora_parameter_name(item.key())) continue;  // adapters load from PEFT's format (lora_peft.h)
    known.insert(item.key());
    if (!st.contains(item.key())) {
      if (!(opts.tie_word_embeddings && item.key() == "lm_head.weight")) mismatch.missing.push_back(item.key());
      continue;
    }
    targets.emplace_back(item.key(), item.value());
  }
  for (const auto& item : m.named_buffers(/*recurse=*/true)) {
    known.insert(item.key());
    if (st.contains(item.key())) targets.emplace_back(item.key(), item.value());
  }
  for (const auto& [name, dst] : targets) mismatch.check_shape(name, "checkpoint", st.info(name).shape, dst.sizes());
  for (const std::string& name : st.names()) {
    if (known.count(name) || ends_with(name, "rotary_emb.inv_freq")) continue;
    if (opts.tie_word_embeddings && name == "lm_head.weight") continue;
    mismatch.unexpected.push_back(name);
  }
  mismatch.throw_if_any(st.source(), "checkpoint does not match the model");
  torch::NoGradGuard no_grad;
  for (auto& [name, dst] : targets) dst.copy_(st.tensor(name));  // converts dtype, moves device
}

Pretrained load_pretrained(const std::string& dir, torch::Device device, torch::Dtype dtype) {
  Pretrained out;
  out.args = parse_hf_config((fs::path(dir) / "config.json").string());
  SafetensorsSet st = SafetensorsSet::open(dir);
  out.model = TransformerLM(out.args);
  out.model->to(device, dtype);
  load_state_dict(*out.model, st, LoadOptions{out.args.tie_word_embeddings});
  return out;
}

// ---- Saving ---------------------------------------------------------------------

namespace {

std::string shard_name(size_t k, size_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "model-%05zu-of-%05zu.safetensors", k, n);
  return buf;
}

// Greedy split in parameter order, as transformers' shard_checkpoint does.
std::vector<std::vector<size_t>> plan_shards(const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                                             torch::Dtype dtype, uint64_t max_bytes) {
  std::vector<std::vector<size_t>> shards(1);
  uint64_t current = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    uint64_t b = stored_bytes(tensors[i].second, dtype);
    if (!shards.back().empty() && current + b > max_bytes) {
      shards.emplace_back();
      current = 0;
    }
    shards.back().push_back(i);
    current += b;
  }
  return shards;
}

void write_weights(const std::vector<std::pair<std::string, torch::Tensor>>& tensors, torch::Dtype dtype,
                   uint64_t max_bytes, const fs::path& dir) {
  const std::map<std::string, std::string> meta = {{"format", "pt"}};
  uint64_t total = 0;
  for (const auto& t : tensors) total += stored_bytes(t.second, dtype);
  if (total <= max_bytes) {
    save_safetensors((dir / "model.safetensors").string(), tensors, meta, dtype);
    return;
  }
  auto shards = plan_shards(tensors, dtype, max_bytes);
  nlohmann::json weight_map = nlohmann::json::object();
  for (size_t k = 0; k < shards.size(); ++k) {
    std::string file = shard_name(k + 1, shards.size());
    std::vector<std::pair<std::string, torch::Tensor>> part;
    for (size_t i : shards[k]) {
      part.push_back(tensors[i]);
      weight_map[tensors[i].first] = file;
    }
    save_safetensors((dir / file).string(), part, meta, dtype);
  }
  nlohmann::json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
  write_file_atomic((dir / "model.safetensors.index.json").string(), index.dump(2) + "\n");
}

}  // namespace

void save_pretrained(torch::nn::Module& m, const ModelArgs& args, const std::string& dir_in, const SaveOptions& opts) {
  fs::path dir = fs::path(dir_in).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  if (dir.parent_path().empty()) dir = fs::path(".") / dir;
  std::error_code ec;
  if (!opts.overwrite && fs::exists(dir, ec) && !fs::is_empty(dir, ec))
    throw IoError("cannot save model to " + dir.string() + ": directory exists and is not empty (use overwrite)");
  const torch::Dtype dtype = resolve_dtype(opts.dtype);
  if (dtype != torch::kFloat32 && dtype != torch::kBFloat16 && dtype != torch::kFloat16)
    throw ConfigError("save dtype '" + opts.dtype + "' is not supported (expected float32, bfloat16 or float16)");
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const auto& item : m.named_parameters(/*recurse=*/true)) {
    if (args.tie_word_embeddings && item.key() == "lm_head.weight") continue;  // transformers drops tied weights
    if (is_lora_parameter_name(item.key())) continue;  // adapters are saved in PEFT's format (lora_peft.h)
    auto r = opts.replace.find(item.key());
    if (r != opts.replace.end() && r->second.sizes() != item.value().sizes())
      throw FormatError("cannot save " + item.key() + ": replacement of shape " + shape_text(r->second.sizes()) +
                        " for a parameter of shape " + shape_text(item.value().sizes()));
    tensors.emplace_back(item.key(), r == opts.replace.end() ? item.value() : r->second);
  }
  ensure_dir(dir.parent_path().string());
  fs::path tmp = detail::temp_sibling(dir, "tmp");
  try {
    fs::create_directory(tmp);
    write_weights(tensors, dtype, opts.max_shard_bytes, tmp);
    write_hf_config(args, (tmp / "config.json").string(), opts.dtype);
    write_generation_config(args, (tmp / "generation_config.json").string());
    if (!opts.tokenizer_dir.empty()) {
      for (const std::string& f : kTokenizerFiles) {
        fs::path src = fs::path(opts.tokenizer_dir) / f;
        if (fs::is_regular_file(src, ec)) write_file_atomic((tmp / f).string(), read_file(src.string()));
      }
    }
    fsync_dir(tmp.string());
    detail::commit_dir(tmp, dir, opts.overwrite);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw IoError("cannot save model to " + dir.string() + ": " + e.what());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

void save_pretrained(TransformerLM& model, const std::string& dir, const SaveOptions& opts) {
  save_pretrained(*model, model->args(), dir, opts);
}

void write_random_init(const ModelArgs& args, uint64_t seed, double initializer_range, const std::string& dir,
                       const SaveOptions& opts) {
  TransformerLM model(args);
  model->init_weights(seed, initializer_range);
  save_pretrained(model, dir, opts);
}

std::string describe_checkpoint(const std::string& dir) {
  std::ostringstream out;
  fs::path cfg = fs::path(dir) / "config.json";
  if (fs::exists(cfg)) {
    ModelArgs a = parse_hf_config(cfg.string());
    out << "model_type " << a.model_type << ", vocab " << a.vocab_size << ", hidden " << a.hidden_size << ", layers "
        << a.num_hidden_layers << ", heads " << a.num_attention_heads << " (kv " << a.num_key_value_heads
        << ", head_dim " << a.head_dim << "), intermediate " << a.intermediate_size << ", tied "
        << (a.tie_word_embeddings ? "yes" : "no") << ", rope_theta " << a.rope_theta << "\n";
  }
  SafetensorsSet st = SafetensorsSet::open(dir);
  int64_t params = 0;
  std::map<std::string, uint64_t> bytes;
  std::ostringstream lines;
  for (const std::string& name : st.names()) {
    const StTensorInfo& t = st.info(name);
    params += t.numel();
    bytes[st_dtype_name(t.dtype)] += t.end - t.begin;
    lines << "  " << name << "  " << st_dtype_name(t.dtype) << " " << shape_text(t.shape) << "\n";
  }
  out << "tensors " << st.names().size() << ", parameters " << params;
  for (const auto& [dt, b] : bytes) out << ", " << dt << " " << b << " bytes";
  out << "\n" << lines.str();
  return out.str();
}

}  // namespace agentrl::model
