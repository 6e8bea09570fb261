// Architecture hyper-parameters of a decoder-only transformer, as read from a
// Hugging Face config.json (model/hf_config.*). Plain value type, torch-free.
#pragma once

#include <cstdint>
#include <string>

namespace agentrl::model {

struct RopeScaling {
  std::string type = "none";  // none | linear | llama3
  double factor = 1.0;
  // llama3 only:
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

struct ModelArgs {
  std::string model_type = "qwen2";  // qwen2 | qwen3 | llama | mistral
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;  // 0 in config.json means hidden_size / num_attention_heads
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  int64_t max_position_embeddings = 32768;
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // q/k/v projection bias (Qwen2)
  bool qk_norm = false;         // per-head RMSNorm on q and k (Qwen3)
  std::string hidden_act = "silu";
  std::string torch_dtype = "float32";  // as written in config.json
  int64_t bos_token_id = -1;
  int64_t eos_token_id = -1;
  int64_t pad_token_id = -1;
};

}  // namespace agentrl::model
