// Shared helpers of the train-layer tests: the tiny policy they update, and
// the error a config load gives.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "agentrl/core/error.h"
#include "agentrl/model/transformer.h"
#include "agentrl/train/experiment_config.h"

namespace agentrl::train::testing {

// A 1-layer model over 32 tokens (tied embeddings), initialised with
// init_weights(3, std), in `dtype` on the CPU. "llama" for tests that export
// it (a qwen2 config needs the q/k/v biases this one lacks).
inline model::TransformerLM tiny_train_model(double std = 0.02, torch::Dtype dtype = torch::kFloat32,
                                             const std::string& model_type = "qwen2") {
  model::ModelArgs a;
  a.model_type = model_type;
  a.vocab_size = 32;
  a.hidden_size = 16;
  a.intermediate_size = 32;
  a.num_hidden_layers = 1;
  a.num_attention_heads = 2;
  a.num_key_value_heads = 1;
  a.tie_word_embeddings = true;
  model::TransformerLM m(a);
  m->init_weights(3, std);
  m->to(torch::kCPU, dtype);
  return m;
}

// The ConfigError message of loading `path` with `overrides`, or
// "(accepted)" when it loads.
inline std::string config_error(const std::string& path, const std::vector<std::string>& overrides) {
  try {
    load_experiment_config(path, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace agentrl::train::testing
