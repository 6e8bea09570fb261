// TransformerLM: the decoder-only policy (Qwen2 / Qwen3 / Llama / Mistral).
//
// Architecture as in Hugging Face transformers' modeling_{qwen2,qwen3,llama,
// mistral}.py: token embedding, N pre-norm blocks (RMSNorm -> GQA attention
// with RoPE -> residual, RMSNorm -> SiLU-gated MLP -> residual), final RMSNorm,
// lm_head (tied to the embedding when tie_word_embeddings). Parameter names
// are HF's, so named_parameters() maps 1:1 onto safetensors keys:
//   model.embed_tokens.weight
//   model.layers.{i}.input_layernorm.weight
//   model.layers.{i}.self_attn.{q,k,v,o}_proj.weight   (+ q/k/v bias: attention_bias)
//   model.layers.{i}.self_attn.{q,k}_norm.weight        (qk_norm, Qwen3)
//   model.layers.{i}.post_attention_layernorm.weight
//   model.layers.{i}.mlp.{gate,up,down}_proj.weight
//   model.norm.weight
//   lm_head.weight                                      (absent when tied)
//
// Users: the trainer (forward_hidden + logprobs.h), the generation engine
// (forward_cached with a KvCache), the weights loader (named_parameters()).
//
// Computation follows the parameters' dtype and device (float32, float64 for
// gradient checks, bfloat16 on CUDA); RMSNorm and softmax run in float32 as HF
// does. Attention is computed in query blocks with a boolean mask shared by
// all heads, so no [T,T] float mask per head is ever built.
//
// Thread-safety: like any torch::nn::Module: concurrent forward calls are safe
// only when nobody mutates the parameters at the same time (the generation
// engine's lock_weights() serialises optimizer steps against decoding).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "agentrl/model/attention.h"
#include "agentrl/model/dense.h"
#include "agentrl/model/model_args.h"

namespace agentrl::model {

class KvCache;  // model/kv_cache.h

// Throws ConfigError naming the field when `args` describes a model this
// implementation does not support (unknown model_type, hidden_act other than
// silu, heads not divisible by kv heads, unknown rope_scaling type, ...).
void validate_model_args(const ModelArgs& args);
// head_dim, or hidden_size / num_attention_heads when head_dim is 0.
int64_t effective_head_dim(const ModelArgs& args);

// "cpu" | "cuda" | "cuda:N" | "auto" (cuda when available, else cpu).
// Throws ConfigError on other names or when CUDA is requested but absent.
torch::Device resolve_device(const std::string& name);
// "float32" | "bfloat16" | "float16" | "float64". Throws ConfigError.
torch::Dtype resolve_dtype(const std::string& name);

// One sequence's share of a ragged cached step (see forward_cached).
struct CacheSegment {
  int64_t slot = 0;    // KvCache slot holding this sequence
  int64_t start = 0;   // tokens already in the slot = position of the first new token
  int64_t length = 0;  // new tokens of this sequence in the step (>= 1)
};

// SiLU-gated MLP: down(silu(gate(x)) * up(x)).
class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(const ModelArgs& args);
  torch::Tensor forward(const torch::Tensor& x);
  Dense gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(Mlp);

// Pre-norm block: h += attn(norm(h)); h += mlp(norm(h)).
class DecoderLayerImpl : public torch::nn::Module {
 public:
  explicit DecoderLayerImpl(const ModelArgs& args);
  torch::Tensor forward(const torch::Tensor& h, const torch::Tensor& cos, const torch::Tensor& sin,
                        const torch::Tensor& allowed);
  // The block's output at rows [B,Q] (time indices) only: h [B,T,H] in,
  // [B,Q,H] out (see AttentionImpl::forward_rows).
  torch::Tensor forward_rows(const torch::Tensor& h, const torch::Tensor& cos, const torch::Tensor& sin,
                             const torch::Tensor& allowed, const torch::Tensor& rows);
  Attention self_attn{nullptr};
  Mlp mlp{nullptr};
  RMSNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
};
TORCH_MODULE(DecoderLayer);

// HF's Qwen2Model / LlamaModel: registered as "model" inside TransformerLM.
class DecoderStackImpl : public torch::nn::Module {
 public:
  explicit DecoderStackImpl(const ModelArgs& args);
  Dense embed_tokens{nullptr};  // "embed_tokens.weight" [V,H] (a Dense(H, V) used as a lookup table)
  torch::nn::ModuleList layer_list{nullptr};  // "layers.{i}"
  std::vector<DecoderLayer> layers;
  RMSNorm norm{nullptr};
};
TORCH_MODULE(DecoderStack);

class TransformerLMImpl : public torch::nn::Module {
 public:
  // Builds the modules with uninitialised (zero) weights; call init_weights()
  // or load weights. Throws ConfigError (validate_model_args).
  explicit TransformerLMImpl(const ModelArgs& args);

  const ModelArgs& args() const { return args_; }

  // Full-sequence forward for training and scoring.
  //   input_ids, position_ids: [B,T] int64; attention_mask: [B,T] bool
  //   (true = real token). Left or right padding; packed sequences are
  //   expressed by position_ids restarts: a token attends only to earlier real
  //   tokens of its own segment, where a new segment starts wherever
  //   position_ids[t] != position_ids[t-1] + 1.
  // Returns the final hidden states [B,T,H] (after the final norm), in the
  // parameter dtype. Rows at padding positions are finite but meaningless.
  torch::Tensor forward_hidden(const torch::Tensor& input_ids, const torch::Tensor& position_ids,
                               const torch::Tensor& attention_mask);
  // The same, returning the final hidden states only at rows [B,Q] int64
  // (time indices into T, repeats allowed) -> [B,Q,H]; undefined rows = all.
  // Every layer but the last runs on all T tokens (later tokens attend to
  // their keys and values); the last runs its query projection, attention,
  // MLP and norms for the Q rows only. A loss over a few positions (an RL or
  // SFT loss over the generated tokens, ~15% of a multi-turn episode) pays
  // for those rows' last layer and logits instead of all T's.
  torch::Tensor forward_hidden_rows(const torch::Tensor& input_ids, const torch::Tensor& position_ids,
                                    const torch::Tensor& attention_mask, const torch::Tensor& rows);
  // logits [B,T,V] in the parameter dtype (small models and tests only: use
  // logprobs_and_entropy() for real vocabularies).
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& position_ids,
                        const torch::Tensor& attention_mask);

  // Incremental (KV-cache) forward over a ragged batch: `tokens` [N] int64 is
  // the concatenation of every segment's new tokens (sum of lengths = N).
  // Each segment's tokens get positions start..start+length-1, attend to the
  // slot's cached tokens [0,start) and causally to each other, and their K/V
  // are written into the slot. Returns the final hidden state at the last new
  // token of each segment, [S,H]. Runs without autograd. Requires
  // start + length <= cache.capacity().
  // decode_kv_multiple > 1: the keys that decode rows (segments of one token)
  // attend over are padded, behind the mask, to a multiple of it (capped at
  // the capacity), so that consecutive decode steps have equal shapes while
  // the longest sequence stays in one multiple; the result is the same up to
  // float rounding (padded keys get weight exactly 0).
  // fused_cpu: a float32 model on the CPU (decode_kv_multiple 1) runs its
  // norms, RoPE, SiLU gate, KV writes and decode attention on fused kernels
  // (src/model/infer_kernels.h: one op each instead of several ATen ops),
  // and the weight products of a step of at most 64 rows on the few-row
  // kernel (src/model/few_rows_linear.h; not for unmerged LoRA layers);
  // a step of more than 512 rows runs as blocks of at most 512 (a segment
  // split between blocks as chunked prefill splits it), which keeps a
  // layer's activations in the caches; a step (or block) of at least 16 rows
  // per intra-op thread runs each layer split by rows, one range of rows per
  // thread, instead of splitting each op (so its bits depend on the thread
  // count); equal to the ATen path up to float rounding. false: the ATen
  // ops only, the whole step at once.
  torch::Tensor forward_cached(const torch::Tensor& tokens, const std::vector<CacheSegment>& segments,
                               KvCache& cache, int64_t decode_kv_multiple = 1, bool fused_cpu = true);

  // hidden [...,H] -> logits [...,V] in the parameter dtype.
  torch::Tensor logits(const torch::Tensor& hidden);
  // The same with the lm head computed in float32 (inputs and weight cast up,
  // fp32 accumulation and output). The engine samples from these, and the
  // trainer's logprobs_and_entropy computes its logits the same way, so that
  // in bf16 the behaviour and the trainer's log-probs round alike (a bf16
  // logit has ~3 significant digits). For an fp32 model it equals logits().
  // fused_cpu (the engine's, as in forward_cached): a float32 model on the
  // CPU computes up to 64 rows [R,H] with the few-row kernel of the fused
  // step, equal up to float rounding.
  torch::Tensor logits_fp32(const torch::Tensor& hidden, bool fused_cpu = false);
  // [V,H]: lm_head.weight, or the embedding when tied.
  torch::Tensor lm_head_weight();

  // Per-layer activation checkpointing: the forward of each decoder layer
  // keeps only its input; backward recomputes it. Gradients equal the plain
  // model's.
  void set_gradient_checkpointing(bool on) { gradient_checkpointing_ = on; }
  bool gradient_checkpointing() const { return gradient_checkpointing_; }

  // The attention kernel of every layer, in training and in forward_cached
  // (attention.h; eager by default). The engine and the trainer share the
  // model, so their log-probs round alike either way.
  void set_attention_kernel(AttentionKernel kernel);
  AttentionKernel attention_kernel() const { return attention_kernel_; }

  // Deterministic init from `seed`: every matrix and the embedding ~ N(0,
  // std^2) (HF initializer_range), biases 0, norm weights 1. Same seed -> same
  // weights on every platform (drawn from agentrl::Rng, then copied).
  void init_weights(uint64_t seed, double std = 0.02);

  torch::Device device() const;
  torch::Dtype dtype() const;

  // Module::to, and the RoPE inverse frequencies (not a parameter: they stay
  // float32 whatever the dtype) move to the new device with the weights, so
  // no forward copies them.
  void to(torch::Device device, torch::Dtype dtype, bool non_blocking = false) override;
  void to(torch::Dtype dtype, bool non_blocking = false) override;
  void to(torch::Device device, bool non_blocking = false) override;

  // Submodules (HF names); public for the loader and tests.
  DecoderStack model{nullptr};
  Dense lm_head{nullptr};  // "lm_head.weight"; null when tied

 private:

  ModelArgs args_;
  bool gradient_checkpointing_ = false;
  AttentionKernel attention_kernel_ = AttentionKernel::kEager;
  torch::Tensor inv_freq_;  // RoPE inverse frequencies [head_dim/2], float32 (or float64)
};
TORCH_MODULE(TransformerLM);

// Number of parameters (tied weights counted once).
int64_t parameter_count(TransformerLM& model);
// Approximate forward FLOPs per token at context length `ctx` (2 * matmul
// MACs incl. attention scores), used by the benchmarks.
double forward_flops_per_token(const ModelArgs& args, int64_t ctx);

}  // namespace agentrl::model
