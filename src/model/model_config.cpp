#include "agentrl/model/model_config.h"

#include "agentrl/core/error.h"

namespace agentrl::model {

void ModelInitConfig::visit(config::Visitor& v) {
  v.field("model_type", model_type, "architecture family", {"qwen2", "qwen3", "llama", "mistral"});
  v.field("vocab_size", vocab_size, "vocabulary size (0 = the tokenizer's)", config::Range::at_least(0));
  v.field("hidden_size", hidden_size, "model width", config::Range::at_least(1));
  v.field("num_hidden_layers", num_hidden_layers, "decoder layers", config::Range::at_least(1));
  v.field("num_attention_heads", num_attention_heads, "query heads", config::Range::at_least(1));
  v.field("num_key_value_heads", num_key_value_heads, "KV heads (GQA; divides num_attention_heads)",
          config::Range::at_least(1));
  v.field("head_dim", head_dim, "per-head width (0 = hidden_size / num_attention_heads)", config::Range::at_least(0));
  v.field("intermediate_size", intermediate_size, "MLP width", config::Range::at_least(1));
  v.field("rope_theta", rope_theta, "RoPE base", config::Range::positive());
  v.field("rms_norm_eps", rms_norm_eps, "RMSNorm epsilon", config::Range::positive());
  v.field("tie_word_embeddings", tie_word_embeddings, "share the embedding with lm_head");
  v.field("max_position_embeddings", max_position_embeddings, "longest supported context",
          config::Range::at_least(1));
  v.field("seed", seed, "seed of the random initialisation", config::Range::at_least(0));
  v.field("initializer_range", initializer_range, "std of the normal init of weight matrices",
          config::Range::positive());
}

ModelArgs ModelInitConfig::to_args(int64_t tokenizer_vocab) const {
  ModelArgs a;
  a.model_type = model_type;
  a.vocab_size = vocab_size > 0 ? vocab_size : tokenizer_vocab;
  if (a.vocab_size <= 0)
    throw ConfigError("model.init.vocab_size is 0 and no tokenizer vocabulary size is known; set model.init.vocab_size");
  a.hidden_size = hidden_size;
  a.intermediate_size = intermediate_size;
  a.num_hidden_layers = num_hidden_layers;
  a.num_attention_heads = num_attention_heads;
  a.num_key_value_heads = num_key_value_heads;
  a.head_dim = head_dim;
  a.rms_norm_eps = rms_norm_eps;
  a.rope_theta = rope_theta;
  a.max_position_embeddings = max_position_embeddings;
  a.tie_word_embeddings = tie_word_embeddings;
  a.attention_bias = model_type == "qwen2";
  a.qk_norm = model_type == "qwen3";
  return a;
}

void LoraConfig::visit(config::Visitor& v) {
  v.field("enabled", enabled, "train LoRA adapters on a frozen base instead of all weights");
  v.field("rank", rank, "adapter rank r", config::Range::at_least(1));
  v.field("alpha", alpha, "lora_alpha: the adapter's output is scaled by alpha / rank", config::Range::positive());
  v.field("dropout", dropout, "dropout on the adapter's input while training", config::Range::closed(0.0, 0.99));
  v.field("target_modules", target_modules, "linear layers to adapt (PEFT's module names)",
          {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"});
  v.field("init", init, "A's initialisation (B starts at zero either way)", {"default", "gaussian"});
  v.field("use_rslora", use_rslora, "rank-stabilised scaling alpha / sqrt(rank)");
  v.field("path", path, "PEFT adapter directory to continue from (\"\" = fresh adapters)");
}

void PolicyConfig::visit(config::Visitor& v) {
  v.field("path", path, "Hugging Face model directory to load (\"\" = random init from model.init)");
  v.section("init", init, "architecture of a randomly initialised policy (used when path is empty)");
  v.field("dtype", dtype, "parameter/activation dtype (bfloat16 needs CUDA)", {"float32", "bfloat16"});
  v.field("device", device, "where the policy runs", {"cpu", "cuda", "auto"});
  v.field("gradient_checkpointing", gradient_checkpointing, "recompute each layer in backward to save memory");
  v.field("attention", attention,
          "attention kernel: sdpa (LibTorch's fused scaled_dot_product_attention, LibTorch >= 2.1), fused "
          "(agentrl's tiled kernel for float32 on the CPU, every LibTorch; the explicit path elsewhere), eager "
          "(explicit, every LibTorch), auto (sdpa where available, else fused)",
          {"auto", "eager", "fused", "sdpa"});
  v.field("logprob_chunk_tokens", logprob_chunk_tokens, "tokens per chunk of the log-prob/entropy computation",
          config::Range::at_least(1));
  v.section("lora", lora, "LoRA adapters (PEFT-compatible) instead of full fine-tuning");
}

}  // namespace agentrl::model
