// LoRA adapters in PEFT's on-disk format (huggingface/peft `save_pretrained`
// of a LoRA PeftModel), so that adapters trained here load in PEFT and in
// vLLM's LoRA loader, and PEFT adapters continue training here:
//   adapter_config.json        peft_type "LORA", r, lora_alpha, lora_dropout,
//                              target_modules, use_rslora, init_lora_weights,
//                              base_model_name_or_path, task_type "CAUSAL_LM", …
//   adapter_model.safetensors  "base_model.model.<module>.lora_A.weight" [r,in]
//                              "base_model.model.<module>.lora_B.weight" [out,r]
// (<module> is the HF name of the adapted linear layer, e.g.
// "model.layers.0.self_attn.q_proj"; PEFT drops the adapter name "default"
// from saved keys).
//
// What agentrl cannot represent is refused, never dropped: DoRA, per-layer
// rank/alpha patterns, layers_to_transform, trained biases, modules_to_save,
// fan_in_fan_out, regex target_modules.
//
// Errors: ConfigError / FormatError naming the file, the key and the expected
// value; IoError. Thread-safety: like the model (not during forwards/updates).
#pragma once

#include <string>

#include <torch/torch.h>

#include "agentrl/model/lora.h"

namespace agentrl::model {

struct PeftAdapterConfig {
  LoraOptions options;                  // r, alpha, dropout, targets, rslora, init
  std::string base_model_name_or_path;  // informative (a hub id or a path)
};

// adapter_config.json of `dir`, checked as above.
PeftAdapterConfig read_peft_config(const std::string& dir);

// Writes `dir` (adapter_config.json + adapter_model.safetensors, the adapters
// in float32 unless `dtype` says otherwise) atomically: built in a hidden
// sibling and renamed, replacing an existing `dir`. Throws Error when the
// model has no adapters or they are merged.
void save_peft_adapter(torch::nn::Module& model, const PeftAdapterConfig& config, const std::string& dir,
                       torch::Dtype dtype = torch::kFloat32);

// Copies dir/adapter_model.safetensors into the model's adapters (attached
// with options equal to the file's config: check_peft_matches). Every adapter
// of the model must be in the file and every file tensor must be one of the
// model's adapters, with the model's shape: otherwise one FormatError lists
// all missing, unexpected and wrongly shaped tensors and nothing is copied.
void load_peft_adapter(torch::nn::Module& model, const std::string& dir);

// Throws ConfigError naming `key_prefix`.<field> when `configured` and the
// adapter's config disagree in rank, alpha, rslora or target modules.
void check_peft_matches(const LoraOptions& configured, const PeftAdapterConfig& adapter, const std::string& dir,
                        const std::string& key_prefix);

// PEFT's key of an adapter parameter ("model.layers.0.self_attn.q_proj.lora_A"
// -> "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight").
std::string peft_key(const std::string& lora_parameter_name);

}  // namespace agentrl::model
