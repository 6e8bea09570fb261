// Model shapes shared by the model and engine benchmarks, with random
// weights created once per shape: 0 = tiny (hidden 256, 4 layers, 4/2 heads,
// intermediate 768, vocab 4096); 1 = Qwen2.5-0.5B (896, 24, 14/2, 4864, 151936);
// 2 = the quickstart's policy (128, 2, 4/2, 384, 1000, tied).
// The models' attention kernel is model.attention's default (auto: sdpa on
// LibTorch >= 2.1, else agentrl's fused CPU kernel) unless AGENTRL_ATTENTION
// names another (eager, fused, sdpa).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>

#include "agentrl/model/transformer.h"

namespace agentrl::bench {

inline model::ModelArgs shape(int64_t which) {
  model::ModelArgs a;
  a.model_type = "qwen2";
  a.attention_bias = true;
  a.rope_theta = 1e6;
  if (which == 0) {
    a.vocab_size = 4096, a.hidden_size = 256, a.num_hidden_layers = 4, a.num_attention_heads = 4;
    a.num_key_value_heads = 2, a.intermediate_size = 768;
  } else if (which == 2) {
    a.vocab_size = 1000, a.hidden_size = 128, a.num_hidden_layers = 2, a.num_attention_heads = 4;
    a.num_key_value_heads = 2, a.intermediate_size = 384, a.tie_word_embeddings = true;
  } else {
    a.vocab_size = 151936, a.hidden_size = 896, a.num_hidden_layers = 24, a.num_attention_heads = 14;
    a.num_key_value_heads = 2, a.intermediate_size = 4864, a.tie_word_embeddings = true;
  }
  return a;
}

inline model::TransformerLM& model_for(int64_t which) {
  static std::map<int64_t, model::TransformerLM> cache;
  auto it = cache.find(which);
  if (it == cache.end()) {
    model::TransformerLM m(shape(which));
    m->init_weights(0);
    const char* kernel = std::getenv("AGENTRL_ATTENTION");
    m->set_attention_kernel(model::resolve_attention_kernel(kernel ? kernel : "auto"));
    it = cache.emplace(which, m).first;
  }
  return it->second;
}

}  // namespace agentrl::bench
