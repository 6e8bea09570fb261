#include "agentrl/model/transformer.h"

#include <ATen/Parallel.h>

#include <optional>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>

#include "agentrl/core/error.h"
#include "agentrl/core/rng.h"
#include "agentrl/model/kv_cache.h"
#include "agentrl/model/rope.h"
#include "few_rows_linear.h"
#include "infer_kernels.h"

namespace agentrl::model {

int64_t effective_head_dim(const ModelArgs& a) {
  if (a.head_dim > 0) return a.head_dim;
  return a.num_attention_heads > 0 ? a.hidden_size / a.num_attention_heads : 0;
}

void validate_model_args(const ModelArgs& a) {
  static const std::set<std::string> kTypes = {"qwen2", "qwen3", "llama", "mistral"};
  if (!kTypes.count(a.model_type))
    throw ConfigError("unsupported model_type '" + a.model_type + "' (expected qwen2, qwen3, llama or mistral)");
  if (a.hidden_act != "silu")
    throw ConfigError("unsupported hidden_act '" + a.hidden_act + "' (only silu is implemented)");
  auto positive = [](const char* key, int64_t v) {
    if (v <= 0) throw ConfigError(std::string("model config: ") + key + " must be > 0, got " + std::to_string(v));
  };
  positive("vocab_size", a.vocab_size);
  positive("hidden_size", a.hidden_size);
  positive("intermediate_size", a.intermediate_size);
  positive("num_hidden_layers", a.num_hidden_layers);
  positive("num_attention_heads", a.num_attention_heads);
  positive("num_key_value_heads", a.num_key_value_heads);
  positive("max_position_embeddings", a.max_position_embeddings);
  if (a.num_attention_heads % a.num_key_value_heads != 0)
    throw ConfigError("num_attention_heads (" + std::to_string(a.num_attention_heads) +
                      ") must be a multiple of num_key_value_heads (" + std::to_string(a.num_key_value_heads) + ")");
  const int64_t hd = effective_head_dim(a);
  if (hd <= 0 || hd % 2 != 0)
    throw ConfigError("head_dim must be a positive even number, got " + std::to_string(hd));
  if (a.head_dim == 0 && a.hidden_size % a.num_attention_heads != 0)
    throw ConfigError("hidden_size (" + std::to_string(a.hidden_size) + ") is not divisible by num_attention_heads (" +
                      std::to_string(a.num_attention_heads) + ") and head_dim is not given");
  if (!(a.rms_norm_eps > 0)) throw ConfigError("rms_norm_eps must be > 0");
  if (!(a.rope_theta > 0)) throw ConfigError("rope_theta must be > 0");
  const auto& t = a.rope_scaling.type;
  if (t != "none" && t != "default" && t != "linear" && t != "llama3")
    throw ConfigError("unsupported rope_scaling type '" + t + "' (expected none, linear or llama3)");
}

torch::Device resolve_device(const std::string& name) {
  if (name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    if (!torch::cuda::is_available())
      throw ConfigError("device '" + name + "' requested but CUDA is not available in this build/machine");
    std::optional<torch::Device> d;
    try {
      d.emplace(name);
    } catch (const c10::Error&) {
      throw ConfigError("unknown device '" + name + "' (expected cpu, cuda, cuda:N or auto)");
    }
    const auto visible = static_cast<int64_t>(torch::cuda::device_count());
    if (d->has_index() && d->index() >= visible)
      throw ConfigError("device '" + name + "': only " + std::to_string(visible) + " CUDA device" +
                        (visible == 1 ? " is" : "s are") + " visible to this process");
    return *d;
  }
  throw ConfigError("unknown device '" + name + "' (expected cpu, cuda, cuda:N or auto)");
}

torch::Dtype resolve_dtype(const std::string& name) {
  if (name == "float32" || name == "fp32") return torch::kFloat32;
  if (name == "bfloat16" || name == "bf16") return torch::kBFloat16;
  if (name == "float16" || name == "fp16") return torch::kFloat16;
  if (name == "float64") return torch::kFloat64;
  throw ConfigError("unknown dtype '" + name + "' (expected float32 or bfloat16)");
}

MlpImpl::MlpImpl(const ModelArgs& a) {
  gate_proj = register_module("gate_proj", Dense(a.hidden_size, a.intermediate_size, false));
  up_proj = register_module("up_proj", Dense(a.hidden_size, a.intermediate_size, false));
  down_proj = register_module("down_proj", Dense(a.intermediate_size, a.hidden_size, false));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
  return down_proj(torch::silu(gate_proj(x)) * up_proj(x));
}

DecoderLayerImpl::DecoderLayerImpl(const ModelArgs& a) {
  self_attn = register_module("self_attn", Attention(a));
  mlp = register_module("mlp", Mlp(a));
  input_layernorm = register_module("input_layernorm", RMSNorm(a.hidden_size, a.rms_norm_eps));
  post_attention_layernorm = register_module("post_attention_layernorm", RMSNorm(a.hidden_size, a.rms_norm_eps));
}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& h, const torch::Tensor& cos, const torch::Tensor& sin,
                                        const torch::Tensor& allowed) {
  auto x = h + self_attn(input_layernorm(h), cos, sin, allowed);
  return x + mlp(post_attention_layernorm(x));
}

torch::Tensor DecoderLayerImpl::forward_rows(const torch::Tensor& h, const torch::Tensor& cos, const torch::Tensor& sin,
                                             const torch::Tensor& allowed, const torch::Tensor& rows) {
  auto residual = h.gather(1, rows.unsqueeze(-1).expand({h.size(0), rows.size(1), h.size(2)}));
  auto x = residual + self_attn->forward_rows(input_layernorm(h), cos, sin, allowed, rows);
  return x + mlp(post_attention_layernorm(x));
}

DecoderStackImpl::DecoderStackImpl(const ModelArgs& a) {
  embed_tokens = register_module("embed_tokens", Dense(a.hidden_size, a.vocab_size, false));
  layer_list = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < a.num_hidden_layers; ++i) {
    layers.push_back(DecoderLayer(a));
    layer_list->push_back(layers.back());
  }
  norm = register_module("norm", RMSNorm(a.hidden_size, a.rms_norm_eps));
}

namespace {

// Activation checkpointing of one decoder layer (LibTorch has no
// torch.utils.checkpoint): forward runs without building a graph and keeps
// only the layer input; backward re-runs the layer with grad enabled and
// back-propagates through the recomputed graph. The recomputation is exact:
// in training mode (where LoRA adapters may apply dropout) the random
// generator's state at forward time is kept and restored for the rerun, as
// torch.utils.checkpoint's preserve_rng_state does.
//
// Parameter gradients are not routed through the Function's outputs (LibTorch
// 1.13 counts a TensorList argument as one input and cannot return per-tensor
// gradients for it). Instead, backward runs a nested backward pass over the
// recomputed graph, which accumulates into every parameter's .grad exactly
// as the plain graph would ("reentrant" checkpointing, as in PyTorch's
// torch.utils.checkpoint with use_reentrant=True). Consequently the loss must
// be differentiated with backward(), not with autograd::grad(), and the
// layer input must require grad for backward to reach the layer at all (the
// caller makes sure of it when only adapters train: the embedding is frozen).
struct LayerCheckpoint : public torch::autograd::Function<LayerCheckpoint> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& h,
                               const torch::Tensor& cos, const torch::Tensor& sin, const torch::Tensor& allowed,
                               int64_t layer_ptr) {
    auto* layer = reinterpret_cast<DecoderLayerImpl*>(layer_ptr);
    ctx->save_for_backward({h, cos, sin, allowed});
    ctx->saved_data["layer"] = layer_ptr;
    if (layer->is_training()) {
      auto gen = at::globalContext().defaultGenerator(h.device());
      std::lock_guard<std::mutex> lock(gen.mutex());
      ctx->saved_data["rng"] = gen.get_state();
    }
    torch::NoGradGuard no_graph;  // keep only the input; recompute in backward
    return layer->forward(h, cos, sin, allowed);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    auto saved = ctx->get_saved_variables();
    auto* layer = reinterpret_cast<DecoderLayerImpl*>(ctx->saved_data["layer"].toInt());
    const bool replay = ctx->saved_data.count("rng") > 0;
    auto gen = at::globalContext().defaultGenerator(saved[0].device());
    torch::Tensor state_now;
    if (replay) {  // the forward's random draws again, then the stream where it was
      std::lock_guard<std::mutex> lock(gen.mutex());
      state_now = gen.get_state();
      gen.set_state(ctx->saved_data["rng"].toTensor());
    }
    torch::AutoGradMode enable(true);
    auto h = saved[0].detach().requires_grad_(true);
    auto out = layer->forward(h, saved[1], saved[2], saved[3]);
    if (replay) {
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(state_now);
    }
    torch::autograd::backward({out}, {grad_out[0]});
    return {h.grad(), torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// True when some parameter of the layers trains (requires_grad): a LoRA
// model's adapters, while its embedding is frozen.
bool layers_train(DecoderStackImpl& stack) {
  for (auto& layer : stack.layers)
    for (const auto& p : layer->parameters())
      if (p.requires_grad()) return true;
  return false;
}

// allowed[b,i,j]: j <= i, j is a real token, j in i's packed segment; plus
// the diagonal so that padding rows never see an empty key set (their
// outputs are meaningless but finite).
torch::Tensor attention_allowed(const torch::Tensor& position_ids, const torch::Tensor& mask) {
  const int64_t T = position_ids.size(1);
  auto opts = torch::TensorOptions().dtype(torch::kBool).device(position_ids.device());
  auto starts = torch::ones_like(position_ids, opts);
  if (T > 1) {
    auto cont = position_ids.narrow(1, 1, T - 1) == position_ids.narrow(1, 0, T - 1) + 1;
    starts.narrow(1, 1, T - 1).copy_(cont.logical_not());
  }
  auto seg = starts.to(torch::kInt64).cumsum(1);  // [B,T]
  auto causal = torch::ones({T, T}, opts).tril();
  auto allowed = (seg.unsqueeze(2) == seg.unsqueeze(1)).logical_and_(mask.to(torch::kBool).unsqueeze(1));
  allowed.logical_and_(causal);
  allowed.logical_or_(torch::eye(T, opts));
  return allowed;
}

}  // namespace

TransformerLMImpl::TransformerLMImpl(const ModelArgs& args) : args_(args) {
  validate_model_args(args_);
  model = register_module("model", DecoderStack(args_));
  if (!args_.tie_word_embeddings) lm_head = register_module("lm_head", Dense(args_.hidden_size, args_.vocab_size, false));
  inv_freq_ = rope_inv_freq(args_, effective_head_dim(args_), torch::kFloat32);
}

torch::Device TransformerLMImpl::device() const { return model->embed_tokens->weight.device(); }
torch::Dtype TransformerLMImpl::dtype() const { return model->embed_tokens->weight.scalar_type(); }

void TransformerLMImpl::to(torch::Device device, torch::Dtype dtype, bool non_blocking) {
  torch::nn::Module::to(device, dtype, non_blocking);
  inv_freq_ = inv_freq_.to(device);
}

void TransformerLMImpl::to(torch::Dtype dtype, bool non_blocking) { torch::nn::Module::to(dtype, non_blocking); }

void TransformerLMImpl::to(torch::Device device, bool non_blocking) {
  torch::nn::Module::to(device, non_blocking);
  inv_freq_ = inv_freq_.to(device);
}

torch::Tensor TransformerLMImpl::lm_head_weight() {
  return lm_head ? lm_head->weight : model->embed_tokens->weight;
}

torch::Tensor TransformerLMImpl::logits(const torch::Tensor& hidden) {
  return torch::nn::functional::linear(hidden, lm_head_weight());
}

torch::Tensor TransformerLMImpl::logits_fp32(const torch::Tensor& hidden, bool fused_cpu) {
  const auto w = lm_head_weight();
  if (fused_cpu && detail::few_rows_linear_applies(hidden, w, {})) return detail::few_rows_linear(hidden, w, {});
  if (w.scalar_type() == torch::kFloat32 && hidden.scalar_type() == torch::kFloat32) return logits(hidden);
  return torch::nn::functional::linear(hidden.to(torch::kFloat32), w.to(torch::kFloat32));
}

torch::Tensor TransformerLMImpl::forward_hidden(const torch::Tensor& input_ids, const torch::Tensor& position_ids,
                                                const torch::Tensor& attention_mask) {
  return forward_hidden_rows(input_ids, position_ids, attention_mask, torch::Tensor());
}

torch::Tensor TransformerLMImpl::forward_hidden_rows(const torch::Tensor& input_ids, const torch::Tensor& position_ids,
                                                     const torch::Tensor& attention_mask, const torch::Tensor& rows) {
  TORCH_CHECK(input_ids.dim() == 2, "input_ids must be [B,T]");
  TORCH_CHECK(!rows.defined() || (rows.dim() == 2 && rows.size(0) == input_ids.size(0)), "rows must be [B,Q]");
  const auto dt = dtype();
  const auto dev = device();
  auto ids = input_ids.to(dev, torch::kInt64);
  auto pos = position_ids.to(dev, torch::kInt64);
  auto mask = attention_mask.to(dev, torch::kBool);
  // RoPE angles in float64 when the model is float64 (gradient checks).
  auto inv = dt == torch::kFloat64 ? rope_inv_freq(args_, effective_head_dim(args_), torch::kFloat64).to(dev) : inv_freq_;
  auto [cos, sin] = rope_cos_sin(pos, inv, dt);  // [B,T,D]
  auto allowed = attention_allowed(pos, mask);
  auto h = torch::embedding(model->embed_tokens->weight, ids);
  const bool ckpt = gradient_checkpointing_ && torch::GradMode::is_enabled();
  // A frozen embedding (LoRA) gives an input without grad: the checkpointed
  // layers would then be cut off from backward (PEFT's
  // enable_input_require_grads fixes the same for HF models).
  if (ckpt && !h.requires_grad() && layers_train(*model)) h = h.detach().requires_grad_(true);
  const size_t full = model->layers.size() - (rows.defined() && !model->layers.empty() ? 1 : 0);
  for (size_t i = 0; i < full; ++i) {
    auto& layer = model->layers[i];
    if (ckpt) {
      h = LayerCheckpoint::apply(h, cos, sin, allowed, reinterpret_cast<int64_t>(layer.get()));
    } else {
      h = layer->forward(h, cos, sin, allowed);
    }
  }
  // The last layer for the wanted rows only (not checkpointed: its
  // activations are those of Q rows, plus the keys and values of all T).
  if (rows.defined()) {
    auto r = rows.to(dev, torch::kInt64);
    h = model->layers.empty() ? h.gather(1, r.unsqueeze(-1).expand({h.size(0), r.size(1), h.size(2)}))
                              : model->layers.back()->forward_rows(h, cos, sin, allowed, r);
  }
  return model->norm(h);
}

torch::Tensor TransformerLMImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& position_ids,
                                         const torch::Tensor& attention_mask) {
  return logits(forward_hidden(input_ids, position_ids, attention_mask));
}

namespace {

// The decode segments (one new token each) of a cached step, gathered once
// for all layers: they are attended to as one batch (decode_attention).
struct DecodeBatch {
  // On the model's device: rows int64 [B] (undefined when `all`), and for
  // the ATen path only slots int64 [B], hidden bool [B, max_len].
  torch::Tensor rows, slots, hidden;
  std::vector<int64_t> host_slots, lengths;  // the fused CPU kernel's: row b sees keys [0, lengths[b])
  bool all = false;                   // every segment decodes (rows are 0..N-1)
  bool empty() const { return lengths.empty(); }
};

// Prefill chunks of a cached step attended as one padded batch
// (chunk_attention): every chunk's queries padded to the longest one.
struct ChunkBatch {
  torch::Tensor slots;   // int64 [S]
  torch::Tensor gather;  // int64 [S * qmax]: the packed row behind each padded query (pads repeat the last)
  torch::Tensor hidden;  // bool [S, qmax, L]
  torch::Tensor real;    // int64 [n]: the padded rows that are real queries...
  torch::Tensor rows;    // int64 [n]: ...and their packed rows
  int64_t qmax = 0;
};

// How the rows of a cached step are attended, worked out once for all
// layers: decode rows as one batch, prefill chunks in padded batches, a
// segment that would be alone in its batch in place (the gather, scatter
// and mask of a batch cost more than they save for one sequence).
struct StepPlan {
  torch::Tensor slots, positions;  // int64 [N]: where each row's new key and value go (ATen path only)
  std::vector<int64_t> host_slots, host_positions;  // the same, for the fused CPU kernels
  DecodeBatch dec;
  std::vector<ChunkBatch> chunks;
  std::vector<size_t> alone;      // segments attended one by one...
  std::vector<int64_t> offsets;   // ...and the packed row of each segment's first token
};

torch::Tensor to_device(const std::vector<int64_t>& v, const torch::Device& dev) {
  return torch::tensor(v, torch::TensorOptions().dtype(torch::kInt64)).to(dev);
}

// `fused`: only what the fused CPU kernel reads (host vectors, and the rows
// when not every segment decodes): the ATen path's device tensors would be
// a few small tensor constructions per step that nothing reads.
DecodeBatch decode_batch(const std::vector<CacheSegment>& segments, const std::vector<size_t>& which,
                         const std::vector<int64_t>& offsets, const torch::Device& dev, int64_t kv_multiple,
                         int64_t capacity, bool fused) {
  std::vector<int64_t> rows, slots, positions;
  int64_t max_len = 0;
  for (size_t i : which) {
    rows.push_back(offsets[i]);
    slots.push_back(segments[i].slot);
    positions.push_back(segments[i].start);
    max_len = std::max(max_len, segments[i].start + 1);
  }
  if (kv_multiple > 1) max_len = std::min(capacity, (max_len + kv_multiple - 1) / kv_multiple * kv_multiple);
  DecodeBatch d;
  d.host_slots = slots;
  for (int64_t p : positions) d.lengths.push_back(p + 1);
  d.all = which.size() == segments.size();
  if (!d.all) d.rows = to_device(rows, dev);
  if (fused) return d;
  d.slots = to_device(slots, dev);
  // Key j of row b is hidden when j > positions[b].
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  d.hidden = torch::arange(max_len, i64).unsqueeze(0).gt(torch::tensor(positions, i64).unsqueeze(1)).to(dev);
  return d;
}

ChunkBatch chunk_batch(const std::vector<CacheSegment>& segments, const std::vector<size_t>& which,
                       const std::vector<int64_t>& offsets, const torch::Device& dev) {
  int64_t qmax = 0, L = 0;
  for (size_t i : which) {
    qmax = std::max(qmax, segments[i].length);
    L = std::max(L, segments[i].start + segments[i].length);
  }
  std::vector<int64_t> slots, gather, seen, real, rows;  // seen[s*qmax+i]: the last key query i of chunk s sees
  for (size_t c = 0; c < which.size(); ++c) {
    const auto& s = segments[which[c]];
    slots.push_back(s.slot);
    for (int64_t i = 0; i < qmax; ++i) {
      const int64_t r = std::min(i, s.length - 1);  // a pad acts as the chunk's last query
      gather.push_back(offsets[which[c]] + r);
      seen.push_back(s.start + r);
      if (i < s.length) real.push_back(static_cast<int64_t>(c) * qmax + i), rows.push_back(offsets[which[c]] + i);
    }
  }
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  const auto S = static_cast<int64_t>(which.size());
  ChunkBatch b;
  b.qmax = qmax;
  b.slots = to_device(slots, dev);
  b.gather = to_device(gather, dev);
  b.hidden = torch::arange(L, i64).view({1, 1, L}).gt(torch::tensor(seen, i64).view({S, qmax, 1})).to(dev);
  b.real = to_device(real, dev);
  b.rows = to_device(rows, dev);
  return b;
}

// Chunks go into padded batches in step order while the batch's score
// tensor (chunks x Hq x qmax x L) stays under kChunkScores elements.
// `fused`: decode rows go to the fused CPU kernel, which takes a lone row as
// well as many (the ATen path attends a lone row in place).
StepPlan step_plan(const std::vector<CacheSegment>& segments, int64_t num_heads, const torch::Device& dev,
                   int64_t kv_multiple, int64_t capacity, bool fused) {
  constexpr int64_t kChunkScores = int64_t{1} << 24;
  StepPlan p;
  std::vector<int64_t> slots, positions;
  std::vector<size_t> decode;
  std::vector<std::vector<size_t>> groups(1);
  int64_t qmax = 0, L = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    const auto& s = segments[i];
    p.offsets.push_back(static_cast<int64_t>(slots.size()));
    for (int64_t j = 0; j < s.length; ++j) slots.push_back(s.slot), positions.push_back(s.start + j);
    if (s.length == 1) {
      decode.push_back(i);
      continue;
    }
    const int64_t q2 = std::max(qmax, s.length), L2 = std::max(L, s.start + s.length);
    if (!groups.back().empty() && static_cast<int64_t>(groups.back().size() + 1) * num_heads * q2 * L2 > kChunkScores) {
      groups.emplace_back();
      qmax = s.length, L = s.start + s.length;
    } else {
      qmax = q2, L = L2;
    }
    groups.back().push_back(i);
  }
  if (!fused) {
    p.slots = to_device(slots, dev);
    p.positions = to_device(positions, dev);
  }
  p.host_slots = std::move(slots);
  p.host_positions = std::move(positions);
  if (decode.size() >= (fused ? 1u : 2u)) {
    p.dec = decode_batch(segments, decode, p.offsets, dev, kv_multiple, capacity, fused);
  } else {
    p.alone = decode;
  }
  for (const auto& g : groups) {
    if (g.size() >= 2) p.chunks.push_back(chunk_batch(segments, g, p.offsets, dev));
    else p.alone.insert(p.alone.end(), g.begin(), g.end());
  }
  return p;
}

// The attention of a cached step's rows, as the plan says, over keys and
// values that already hold the step's own. q [N, Hq, D] -> [N, Hq * D].
torch::Tensor attend_step(const torch::Tensor& q, const torch::Tensor& K, const torch::Tensor& V,
                          const std::vector<CacheSegment>& segments, const StepPlan& plan, AttentionKernel kernel,
                          bool fused) {
  const int64_t N = q.size(0), Hq = q.size(1), D = q.size(2), width = Hq * D;
  const auto& dec = plan.dec;
  auto attend_decode = [&](const torch::Tensor& qd) {
    return fused ? detail::decode_attention(qd, K, V, dec.host_slots, dec.lengths)
                 : decode_attention(qd, K, V, dec.slots, dec.hidden, kernel);
  };
  if (dec.all) return attend_decode(q).reshape({N, width});
  auto out = torch::empty({N, width}, q.options());
  if (!dec.empty()) {
    auto qd = q.index_select(0, dec.rows);
    auto o = attend_decode(qd);
    out.index_copy_(0, dec.rows, o.reshape({qd.size(0), width}));
  }
  for (const auto& c : plan.chunks) {
    const int64_t S = c.slots.size(0);
    auto o = chunk_attention(q.index_select(0, c.gather).view({S, c.qmax, Hq, D}), K, V, c.slots, c.hidden, kernel);
    out.index_copy_(0, c.rows, o.reshape({S * c.qmax, width}).index_select(0, c.real));
  }
  for (size_t i : plan.alone) {
    const auto& s = segments[i];
    const int64_t off = plan.offsets[i], L = s.start + s.length;
    auto o = cached_attention(q.narrow(0, off, s.length).transpose(0, 1).contiguous(),
                              K.select(0, s.slot).narrow(1, 0, L), V.select(0, s.slot).narrow(1, 0, L),
                              kernel);  // [Hq,len,D]
    out.narrow(0, off, s.length).copy_(o.transpose(0, 1).reshape({s.length, width}));
  }
  return out;
}

// One layer's attention of a cached step: the new keys and values go into
// the cache, then the rows attend as the plan says.
// q [N, Hq, D], k/v [N, Hkv, D] -> [N, Hq * D].
torch::Tensor cached_step_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                    torch::Tensor& K, torch::Tensor& V, const std::vector<CacheSegment>& segments,
                                    const StepPlan& plan, AttentionKernel kernel, bool fused) {
  using torch::indexing::Slice;
  if (fused) {
    detail::kv_write(K, V, k, v, plan.host_slots, plan.host_positions);
  } else {
    K.index_put_({plan.slots, Slice(), plan.positions}, k);
    V.index_put_({plan.slots, Slice(), plan.positions}, v);
  }
  return attend_step(q, K, V, segments, plan, kernel, fused);
}

// A Dense layer of a fused cached step: a step of few rows (decode) goes to
// the few-row kernel, which reads the weight once where sgemm packs it
// first; larger steps, and LoRA adapters not merged, take the layer itself.
torch::Tensor dense_fused(Dense& d, const torch::Tensor& x) {
  if (!d->lora.active() && detail::few_rows_linear_applies(x, d->weight, d->bias))
    return detail::few_rows_linear(x, d->weight, d->bias);
  return d(x);
}

// The fused CPU kernels' query, key and value projections of a cached step
// (AttentionImpl::project with rms_norm and rope_ from infer_kernels.h).
void project_fused(Attention& attn, const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                   torch::Tensor& q, torch::Tensor& k, torch::Tensor& v) {
  const int64_t N = x.size(0), D = attn->head_dim;
  auto heads = [&](const torch::Tensor& y, int64_t n) {  // [N, n*D] -> [N, n, D], contiguous for the kernels
    return y.view({N, n, D}).contiguous();
  };
  q = heads(dense_fused(attn->q_proj, x), attn->num_heads);
  k = heads(dense_fused(attn->k_proj, x), attn->num_kv_heads);
  v = heads(dense_fused(attn->v_proj, x), attn->num_kv_heads);
  if (attn->q_norm) q = detail::rms_norm(q, attn->q_norm->weight, attn->q_norm->eps);  // Qwen3, before RoPE
  if (attn->k_norm) k = detail::rms_norm(k, attn->k_norm->weight, attn->k_norm->eps);
  detail::rope_(q, cos, sin);
  detail::rope_(k, cos, sin);
}

// The first half of a decoder layer of a fused cached step, on rows of h:
// `pending`, when defined, is the previous layer's MLP output for these rows,
// not yet added to h: the add runs in the same pass as this layer's first
// norm. Sets q [n, Hq, D] and k/v [n, Hkv, D], RoPE applied.
void layer_first_half(DecoderLayer& layer, torch::Tensor& h, const torch::Tensor& pending, const torch::Tensor& cos,
                      const torch::Tensor& sin, torch::Tensor& q, torch::Tensor& k, torch::Tensor& v) {
  const auto& n1 = layer->input_layernorm;
  auto x = pending.defined() ? detail::add_rms_norm_(h, pending, n1->weight, n1->eps)
                             : detail::rms_norm(h, n1->weight, n1->eps);
  project_fused(layer->self_attn, x, cos, sin, q, k, v);
}

// The second half, on rows of h and their attention output `attended`
// [n, Hq * D] (contiguous): the output product added to h, the norm and the
// MLP. Returns the MLP output (added by the next layer or the final norm).
torch::Tensor layer_second_half(DecoderLayer& layer, torch::Tensor& h, const torch::Tensor& attended) {
  const auto& n2 = layer->post_attention_layernorm;
  auto x = detail::add_rms_norm_(h, dense_fused(layer->self_attn->o_proj, attended).contiguous(), n2->weight, n2->eps);
  auto& mlp = layer->mlp;
  return dense_fused(mlp->down_proj, detail::silu_mul(dense_fused(mlp->gate_proj, x).contiguous(),
                                                      dense_fused(mlp->up_proj, x).contiguous()));
}

// One decoder layer of a cached step on the fused CPU kernels, each op split
// over the intra-op threads. `pending` as for layer_first_half. Returns this
// layer's MLP output.
torch::Tensor cached_layer_fused(DecoderLayer& layer, torch::Tensor& h, const torch::Tensor& pending,
                                 const torch::Tensor& cos, const torch::Tensor& sin, KvCache& cache, int64_t l,
                                 const std::vector<CacheSegment>& segments, const StepPlan& plan) {
  torch::Tensor q, k, v;
  layer_first_half(layer, h, pending, cos, sin, q, k, v);
  auto attended =
      cached_step_attention(q, k, v, cache.keys(l), cache.values(l), segments, plan, layer->self_attn->kernel, true);
  return layer_second_half(layer, h, attended.contiguous());
}

// Rows per intra-op thread, at the least, for a fused CPU cached step to run
// its layers split by rows (cached_layer_rows); a step of fewer rows splits
// each product over its output features instead. See split_parts.
constexpr int64_t kRowSplitMinRows = 16;

// How many row ranges a fused CPU cached step of N rows runs its layers in:
// one per intra-op thread when each gets at least kRowSplitMinRows rows,
// else 1 (no split). Why: a step of tens of rows (the prefill of a prompt,
// a decode step of a large batch) is one parallel region per op on the
// column path, about ten per layer, and the second thread waited in
// libgomp for ~40% of a 64-token prefill (perf, docs/benchmarks.md
// "Engine: layers split by rows"); split by rows, each thread runs a layer
// half (norm, projections, rope and the key/value writes; or the output
// projection, norm and MLP) on its own rows with no barrier inside.
int64_t split_parts(int64_t N) {
  if (at::in_parallel_region()) return 1;
  return std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), N / kRowSplitMinRows));
}

// f(r0, r1) for N rows in `parts` contiguous ranges, one range per
// intra-op thread, each with grad mode off (a worker thread's own mode is
// on). The kernels f calls run inline (a parallel region inside another
// runs on the calling thread; OpenBLAS's sgemm too).
template <typename F>
void over_row_ranges(int64_t N, int64_t parts, const F& f) {
  at::parallel_for(0, parts, 1, [&](int64_t p0, int64_t p1) {
    torch::NoGradGuard no_grad;
    for (int64_t p = p0; p < p1; ++p) f(N * p / parts, N * (p + 1) / parts);
  });
}

// cached_layer_fused with the layer's row-wise work split by rows into
// `parts` ranges (split_parts): two parallel regions around the attention,
// which keeps its own split (heads and queries). Each row's result is the
// one a step of its range's rows alone would give (the few-row kernel's
// panel form or sgemm per range), not always the bits of the column path.
torch::Tensor cached_layer_rows(DecoderLayer& layer, torch::Tensor& h, const torch::Tensor& pending,
                                const torch::Tensor& cos, const torch::Tensor& sin, KvCache& cache, int64_t l,
                                const std::vector<CacheSegment>& segments, const StepPlan& plan, int64_t parts) {
  auto& attn = layer->self_attn;
  const int64_t N = h.size(0);
  auto q = torch::empty({N, attn->num_heads, attn->head_dim}, h.options());
  auto& K = cache.keys(l);
  auto& V = cache.values(l);
  over_row_ranges(N, parts, [&](int64_t r0, int64_t r1) {
    const int64_t n = r1 - r0;
    auto hr = h.narrow(0, r0, n);
    torch::Tensor qr, kr, vr;
    layer_first_half(layer, hr, pending.defined() ? pending.narrow(0, r0, n) : pending, cos.narrow(0, r0, n),
                     sin.narrow(0, r0, n), qr, kr, vr);
    q.narrow(0, r0, n).copy_(qr);
    const std::vector<int64_t> slots(plan.host_slots.begin() + r0, plan.host_slots.begin() + r1);
    const std::vector<int64_t> positions(plan.host_positions.begin() + r0, plan.host_positions.begin() + r1);
    detail::kv_write(K, V, kr, vr, slots, positions);
  });
  const auto attended = attend_step(q, K, V, segments, plan, attn->kernel, true).contiguous();
  auto out = torch::empty_like(h);  // this layer's MLP output
  over_row_ranges(N, parts, [&](int64_t r0, int64_t r1) {
    const int64_t n = r1 - r0;
    auto hr = h.narrow(0, r0, n);
    out.narrow(0, r0, n).copy_(layer_second_half(layer, hr, attended.narrow(0, r0, n)));
  });
  return out;
}

// Rows per block of a fused CPU cached step: a step of more rows (the
// prefill of many prompts, or of long ones) runs the whole layer stack on one
// block of at most this many rows after another, so that a layer's
// activations (the MLP's [rows, intermediate] products above all) stay in the
// cores' caches. Measured on the tiny shape (docs/benchmarks.md, "Engine
// prefill in blocks of rows"): the prefill step of 64 prompts of 64 tokens
// took 214 ms in blocks of 512 rows against 330-340 ms as one of 4096.
constexpr int64_t kCachedRowBlock = 512;

// forward_cached of a step in blocks of at most `block` rows, in segment
// order; a segment longer than the room left in a block is split into
// pieces, as chunked prefill splits a prompt (a later piece attends to the
// keys the earlier ones wrote). Returns the final hidden state at the last
// row of each segment, [S, H], as one call would. The caller has checked the
// segments against the tokens and the cache.
torch::Tensor forward_cached_in_blocks(TransformerLMImpl& m, const torch::Tensor& tokens,
                                       const std::vector<CacheSegment>& segments, KvCache& cache, int64_t block) {
  std::vector<torch::Tensor> parts;
  std::vector<CacheSegment> pieces;
  std::vector<int64_t> ends;  // pieces that end their segment
  int64_t first_row = 0, rows = 0;
  auto run_block = [&] {
    auto h = m.forward_cached(tokens.narrow(0, first_row, rows), pieces, cache, 1, true);  // [pieces, H]
    if (!ends.empty()) parts.push_back(h.index_select(0, torch::tensor(ends, torch::kInt64).to(h.device())));
    first_row += rows;
    rows = 0;
    pieces.clear();
    ends.clear();
  };
  for (const auto& s : segments) {
    for (int64_t done = 0; done < s.length;) {
      if (rows == block) run_block();
      const int64_t n = std::min(s.length - done, block - rows);
      pieces.push_back({s.slot, s.start + done, n});
      done += n;
      rows += n;
      if (done == s.length) ends.push_back(static_cast<int64_t>(pieces.size()) - 1);
    }
  }
  if (rows > 0) run_block();
  return parts.size() == 1 ? parts[0] : torch::cat(parts, 0);
}

}  // namespace

torch::Tensor TransformerLMImpl::forward_cached(const torch::Tensor& tokens, const std::vector<CacheSegment>& segments,
                                                KvCache& cache, int64_t decode_kv_multiple, bool fused_cpu) {
  torch::NoGradGuard no_grad;
  const auto dt = dtype();
  const auto dev = device();
  std::vector<int64_t> pos;
  std::vector<int64_t> last_rows;
  for (const auto& s : segments) {
    TORCH_CHECK(s.length >= 1 && s.start >= 0 && s.start + s.length <= cache.capacity(),
                "forward_cached: segment exceeds the KV slot capacity");
    for (int64_t i = 0; i < s.length; ++i) pos.push_back(s.start + i);
    last_rows.push_back(static_cast<int64_t>(pos.size()) - 1);
  }
  TORCH_CHECK(static_cast<int64_t>(pos.size()) == tokens.numel(), "forward_cached: token count != sum of lengths");
  // After the checks above: a bad step fails before any block writes the cache.
  if (fused_cpu && decode_kv_multiple == 1 && dt == torch::kFloat32 && dev.is_cpu() &&
      tokens.numel() > kCachedRowBlock)
    return forward_cached_in_blocks(*this, tokens, segments, cache, kCachedRowBlock);
  auto pos_t = torch::tensor(pos, torch::TensorOptions().dtype(torch::kInt64)).to(dev);
  auto inv = dt == torch::kFloat64 ? rope_inv_freq(args_, effective_head_dim(args_), torch::kFloat64).to(dev) : inv_freq_;
  auto [cos, sin] = rope_cos_sin(pos_t, inv, dt);  // [N,D]
  auto h = torch::embedding(model->embed_tokens->weight, tokens.to(dev, torch::kInt64));  // [N,H]
  TORCH_CHECK(decode_kv_multiple >= 1, "forward_cached: decode_kv_multiple must be >= 1");
  // The fused kernels are float32 CPU only; padded decode keys (static
  // shapes, for graph capture on a GPU) keep the ATen path.
  const bool fused = fused_cpu && decode_kv_multiple == 1 && !model->layers.empty() &&
                     detail::infer_kernels_apply({h, cos, cache.keys(0), cache.values(0)});
  const StepPlan plan =
      step_plan(segments, args_.num_attention_heads, dev, decode_kv_multiple, cache.capacity(), fused);
  if (fused) {
    torch::Tensor pending;
    const int64_t parts = split_parts(h.size(0));
    for (size_t l = 0; l < model->layers.size(); ++l) {
      const auto li = static_cast<int64_t>(l);
      pending = parts > 1 ? cached_layer_rows(model->layers[l], h, pending, cos, sin, cache, li, segments, plan, parts)
                          : cached_layer_fused(model->layers[l], h, pending, cos, sin, cache, li, segments, plan);
    }
    h.add_(pending);
    if (plan.dec.all) return detail::rms_norm(h, model->norm->weight, model->norm->eps);
    auto last = torch::tensor(last_rows, torch::TensorOptions().dtype(torch::kInt64));
    return detail::rms_norm(h.index_select(0, last), model->norm->weight, model->norm->eps);
  }
  for (size_t l = 0; l < model->layers.size(); ++l) {
    auto& layer = model->layers[l];
    auto& attn = layer->self_attn;
    torch::Tensor q, k, v;
    attn->project(layer->input_layernorm(h), cos, sin, q, k, v);  // [N,heads,D]
    auto attn_rows = cached_step_attention(q, k, v, cache.keys(static_cast<int64_t>(l)),
                                           cache.values(static_cast<int64_t>(l)), segments, plan, attn->kernel, false);
    h = h + attn->o_proj(attn_rows);
    h = h + layer->mlp(layer->post_attention_layernorm(h));
  }
  if (plan.dec.all) return model->norm(h);  // every row is its segment's last
  auto last = torch::tensor(last_rows, torch::TensorOptions().dtype(torch::kInt64)).to(dev);
  return model->norm(h.index_select(0, last));
}

void TransformerLMImpl::set_attention_kernel(AttentionKernel kernel) {
  attention_kernel_ = kernel;
  for (auto& layer : model->layers) layer->self_attn->kernel = kernel;
}

void TransformerLMImpl::init_weights(uint64_t seed, double std) {
  torch::NoGradGuard no_grad;
  Rng base(seed);
  for (auto& item : named_parameters()) {
    const std::string& name = item.key();
    auto& p = item.value();
    const bool is_norm = name.find("norm") != std::string::npos;
    const bool is_bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    if (is_norm) {
      p.fill_(1.0);
      continue;
    }
    if (is_bias) {
      p.zero_();
      continue;
    }
    // Stream per tensor, keyed by its name: independent of parameter order.
    uint64_t h = 1469598103934665603ULL;  // FNV-1a of the name: portable, unlike std::hash
    for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
    Rng rng = base.fork(h);
    auto host = torch::empty({p.numel()}, torch::TensorOptions().dtype(torch::kFloat32));
    float* d = host.data_ptr<float>();
    for (int64_t i = 0; i < p.numel(); ++i) d[i] = static_cast<float>(rng.normal() * std);
    p.copy_(host.view(p.sizes()));
  }
}

int64_t parameter_count(TransformerLM& model) {
  int64_t n = 0;
  for (const auto& p : model->parameters()) n += p.numel();
  return n;
}

double forward_flops_per_token(const ModelArgs& a, int64_t ctx) {
  const double H = a.hidden_size, I = a.intermediate_size, hd = effective_head_dim(a);
  const double q = a.num_attention_heads * hd, kv = a.num_key_value_heads * hd;
  const double per_layer = 2.0 * (H * q + 2 * H * kv + q * H + 3 * H * I) + 2.0 * 2.0 * q * ctx;
  return a.num_hidden_layers * per_layer + 2.0 * H * a.vocab_size;
}

}  // namespace agentrl::model
