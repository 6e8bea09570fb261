// Shared helpers of the model tests: tiny random models.
#pragma once

#include <torch/torch.h>

#include "agentrl/model/model_args.h"
#include "agentrl/model/transformer.h"

namespace agentrl::model::test_util {

inline ModelArgs tiny_args(const std::string& type = "qwen2") {
  ModelArgs a;
  a.model_type = type;
  a.vocab_size = 97;
  a.hidden_size = 32;
  a.intermediate_size = 48;
  a.num_hidden_layers = 2;
  a.num_attention_heads = 4;
  a.num_key_value_heads = 2;
  a.head_dim = 0;
  a.rope_theta = 10000.0;
  a.rms_norm_eps = 1e-6;
  a.tie_word_embeddings = false;
  a.attention_bias = type == "qwen2";
  a.qk_norm = type == "qwen3";
  return a;
}

// Random model; std 0.2 so that the logits are far from uniform (a real test
// of the attention/MLP paths, not of near-zero activations).
inline TransformerLM tiny_model(const ModelArgs& a, uint64_t seed = 1, double std = 0.2) {
  TransformerLM m(a);
  m->init_weights(seed, std);
  // Non-trivial norm weights and biases (init sets 1 and 0).
  torch::NoGradGuard g;
  torch::manual_seed(seed);
  for (auto& p : m->named_parameters()) {
    const auto& n = p.key();
    if (n.find("norm") != std::string::npos) p.value().copy_(1.0 + 0.3 * torch::randn(p.value().sizes()));
    if (n.find("bias") != std::string::npos) p.value().copy_(0.3 * torch::randn(p.value().sizes()));
  }
  return m;
}

inline torch::Tensor random_ids(int64_t B, int64_t T, int64_t V, uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randint(V, {B, T}, torch::TensorOptions().dtype(torch::kInt64));
}

inline torch::Tensor arange_positions(int64_t B, int64_t T) {
  return torch::arange(T, torch::TensorOptions().dtype(torch::kInt64)).unsqueeze(0).expand({B, T}).contiguous();
}

inline torch::Tensor full_mask(int64_t B, int64_t T) {
  return torch::ones({B, T}, torch::TensorOptions().dtype(torch::kBool));
}

inline double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

}  // namespace agentrl::model::test_util
