// Hugging Face config.json <-> ModelArgs.
//
// Reads the config.json of a qwen2 / qwen3 / llama / mistral checkpoint into
// ModelArgs, applying the defaults of the corresponding transformers config
// class (Qwen2Config, Qwen3Config, LlamaConfig, MistralConfig) for keys that
// are absent, and refusing values this implementation does not compute
// (hidden_act other than silu, rope_scaling yarn/dynamic/longrope, sliding
// window attention, mlp_bias). Writes config.json / generation_config.json
// that transformers and vLLM load with the matching *ForCausalLM class.
//
// Users: model/hf_checkpoint.* (load_pretrained / save_pretrained), the
// `agentrl model init` command.
//
// Errors: ConfigError naming the file, the key and the offending value, and
// what was expected. Thread-safety: pure functions.
#pragma once

#include <string>

#include "agentrl/model/model_args.h"

namespace agentrl::model {

// Parses config.json at `path`. Throws IoError (unreadable), ConfigError.
ModelArgs parse_hf_config(const std::string& path);
// Same, from JSON text; `name` is used in messages.
ModelArgs parse_hf_config_text(const std::string& json_text, const std::string& name);
// A model description for `agentrl model init`: a config.json, or a YAML file
// with the same keys (`model_type: qwen2`, `hidden_size: 896`, ...). Chosen by
// the file extension (.json = JSON, anything else = YAML).
ModelArgs parse_model_description(const std::string& path);

// The transformers class for a model_type, e.g. "Qwen2ForCausalLM".
std::string hf_architecture(const std::string& model_type);
// transformers_version written into exported configs (Qwen3 needs >= 4.51).
extern const char* const kExportTransformersVersion;

// config.json text for `args` (2-space indented, sorted keys, as
// transformers' save_pretrained writes it). `torch_dtype` overrides
// args.torch_dtype when non-empty. Throws ConfigError when args cannot be
// expressed in the HF class of its model_type (e.g. qwen2 without q/k/v bias).
std::string hf_config_json(const ModelArgs& args, const std::string& torch_dtype = "");
// generation_config.json text (bos/eos/pad token ids).
std::string hf_generation_config_json(const ModelArgs& args);

// Both written atomically. Throw IoError / ConfigError.
void write_hf_config(const ModelArgs& args, const std::string& path, const std::string& torch_dtype = "");
void write_generation_config(const ModelArgs& args, const std::string& path);

}  // namespace agentrl::model
