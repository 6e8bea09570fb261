// Hugging Face model directories: load into / save from a TransformerLM.
//
// A model directory holds config.json, generation_config.json, the weights
// (model.safetensors, or model-0000k-of-0000n.safetensors shards with
// model.safetensors.index.json) and the tokenizer files. Parameter names are
// HF's (see transformer.h), so loading is a 1:1 name match; anything that
// does not match is reported in one error, never skipped silently.
//
// Users: the trainer (policy and reference model), checkpoint export, the
// `agentrl model init|info|score` commands.
//
// Thread-safety: functions are reentrant; a module being loaded or saved
// must not be used concurrently by other threads.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agentrl/model/model_args.h"
#include "agentrl/model/safetensors.h"
#include "agentrl/model/transformer.h"

namespace agentrl::model {

struct LoadOptions {
  // lm_head.weight may be absent from the checkpoint (the module's lm_head is
  // the embedding), and is ignored when present but the module has none.
  bool tie_word_embeddings = false;
};

// Copies every parameter of `m` (named_parameters(), recursive) from the
// tensor of the same name in `st`, converting dtype and moving to the
// parameter's device; buffers are loaded when the checkpoint has them.
// Checkpoint keys ending in "rotary_emb.inv_freq" (old Llama exports) are
// ignored. Missing, unexpected and wrongly shaped tensors are collected and
// thrown as ONE FormatError listing all of them; nothing is copied then.
void load_state_dict(torch::nn::Module& m, const SafetensorsSet& st, const LoadOptions& opts = {});

struct Pretrained {
  ModelArgs args;
  TransformerLM model{nullptr};
};

// Reads dir/config.json and the weights in dir into a new TransformerLM on
// `device` with parameters of `dtype` (checkpoint dtypes are converted).
// Throws ConfigError (bad config), FormatError (bad or mismatched weights),
// IoError.
Pretrained load_pretrained(const std::string& dir, torch::Device device = torch::kCPU,
                           torch::Dtype dtype = torch::kFloat32);

struct SaveOptions {
  std::string dtype = "float32";  // stored dtype of floating tensors: float32 | bfloat16 | float16
  // Shard above this many bytes of tensor data (transformers' default
  // max_shard_size is "5GB" = 5e9 bytes). One tensor never spans shards.
  uint64_t max_shard_bytes = 5'000'000'000ULL;
  // Copy tokenizer files (kTokenizerFiles) that exist in this directory.
  std::string tokenizer_dir;
  // Replace an existing non-empty `dir`; otherwise that is an IoError.
  bool overwrite = false;
  // Tensors written instead of the module's parameters of the same name (the
  // fp32 master weights of a bf16 model, so that its checkpoint keeps full
  // precision). Each must have the parameter's shape (FormatError otherwise).
  std::map<std::string, torch::Tensor> replace;
};

// Tokenizer-related files copied by save_pretrained when present.
extern const std::vector<std::string> kTokenizerFiles;

// Writes an HF directory for `model`: config.json (torch_dtype = the saved
// dtype), generation_config.json, safetensors weights (sharded with an index
// above max_shard_bytes; lm_head.weight omitted when tied, as transformers
// does), metadata {"format": "pt"}, and the tokenizer files. Everything is
// written into a temporary sibling directory which is renamed to `dir` at
// the end, so a crash never leaves a half-written model directory.
void save_pretrained(TransformerLM& model, const std::string& dir, const SaveOptions& opts = {});
// Same for any module with HF parameter names and the args describing it.
void save_pretrained(torch::nn::Module& m, const ModelArgs& args, const std::string& dir,
                     const SaveOptions& opts = {});

// A TransformerLM with weights from init_weights(seed, initializer_range),
// saved with save_pretrained (the `agentrl model init` command).
void write_random_init(const ModelArgs& args, uint64_t seed, double initializer_range, const std::string& dir,
                       const SaveOptions& opts = {});

// Summary of a model directory without building the model: config fields,
// tensor count, parameter count and stored bytes per dtype, and one line per
// tensor (name, dtype, shape). Throws like SafetensorsSet::open.
std::string describe_checkpoint(const std::string& dir);

}  // namespace agentrl::model
