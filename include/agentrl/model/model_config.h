// Config section "model": which policy to build and how to run it.
//
// Either `path` names a Hugging Face model directory to load (config.json +
// safetensors, model/hf_checkpoint.h), or, when path is empty, a randomly
// initialised model is built from the `init` fields (a policy trained from
// scratch; vocab_size 0 = the tokenizer's vocabulary size).
//
// Users: the trainer and CLI commands. Thread-safety: plain values. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agentrl/core/config.h"
#include "agentrl/model/model_args.h"

namespace agentrl::model {

struct ModelInitConfig {
  std::string model_type = "qwen2";
  int64_t vocab_size = 0;  // 0 = from the tokenizer
  int64_t hidden_size = 256;
  int64_t num_hidden_layers = 4;
  int64_t num_attention_heads = 4;
  int64_t num_key_value_heads = 2;
  int64_t head_dim = 0;  // 0 = hidden_size / num_attention_heads
  int64_t intermediate_size = 768;
  double rope_theta = 1000000.0;
  double rms_norm_eps = 1e-6;
  bool tie_word_embeddings = true;
  int64_t max_position_embeddings = 32768;
  int64_t seed = 0;
  double initializer_range = 0.02;

  void visit(config::Visitor& v);
  // ModelArgs for these fields; vocab_size 0 is replaced by tokenizer_vocab.
  // Throws ConfigError when neither gives a vocabulary size.
  ModelArgs to_args(int64_t tokenizer_vocab) const;
};

// model.lora: train LoRA adapters instead of the whole model (model/lora.h;
// PEFT's names and defaults). The base weights are frozen; the optimizer,
// gradients and checkpoints hold the adapters only; the KL reference is the
// base with the adapters switched off.
struct LoraConfig {
  bool enabled = false;
  int64_t rank = 8;      // PEFT's r
  double alpha = 8;      // PEFT's lora_alpha; scaling alpha / rank
  double dropout = 0.0;  // PEFT's lora_dropout
  std::vector<std::string> target_modules = {"q_proj", "k_proj", "v_proj", "o_proj",
                                             "gate_proj", "up_proj", "down_proj"};
  std::string init = "default";  // default (A kaiming-uniform) | gaussian (A ~ N(0, 1/r)); B = 0
  bool use_rslora = false;       // scaling alpha / sqrt(rank)
  std::string path;              // a PEFT adapter directory to continue from ("" = fresh adapters)

  void visit(config::Visitor& v);
};

struct PolicyConfig {
  std::string path;  // HF model directory; "" = random init from `init`
  ModelInitConfig init;
  std::string dtype = "float32";  // float32 | bfloat16
  std::string device = "auto";    // cpu | cuda | auto
  bool gradient_checkpointing = false;
  std::string attention = "auto";  // auto | eager | sdpa (model/attention.h)
  int64_t logprob_chunk_tokens = 1024;
  LoraConfig lora;

  void visit(config::Visitor& v);
};

}  // namespace agentrl::model
