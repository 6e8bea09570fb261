// Grouped-query causal self-attention (Ainslie et al. 2023, GQA) with RoPE,
// optional q/k/v bias (Qwen2) and per-head q/k RMSNorm before RoPE (Qwen3).
//
// Memory: scores are computed per block of queries against only the keys the
// block can see, with one boolean mask [B, Tq, Tk] shared by all heads; the
// G query heads that share a KV head are folded into the row dimension, so K
// and V are never repeated in memory (HF's repeat_kv is avoided).
//
// Three kernels compute softmax(q k^T / sqrt(D) + mask) v (AttentionKernel):
// the explicit one above, on every LibTorch; agentrl's fused CPU kernel
// (float32 on the CPU: query and key tiles with an online softmax, no score
// tensor in memory, src/model/fused_attention.h; grouped_attention,
// masked_attention and the engine's prefill (chunk_attention,
// cached_attention); other tensors and decode_attention take the explicit
// one); and LibTorch's fused scaled_dot_product_attention where
// the LibTorch has it (>= 2.1): where it picks a fused kernel (flash
// attention on CPU; on CUDA the memory-efficient one, as flash attention
// there takes no mask) the keys are tiled and no score tensor is in memory.
// All give the same outputs up to float rounding (tests/model/attention_test).
//
// Users: TransformerLM (model/transformer.h). Thread-safety: as torch modules.
#pragma once

#include <torch/torch.h>

#include <string>

#include "agentrl/model/dense.h"
#include "agentrl/model/model_args.h"
#include "agentrl/model/norm.h"

namespace agentrl::model {

enum class AttentionKernel {
  kEager,  // explicit matmul, mask bias, softmax (fp32), matmul: every LibTorch
  kSdpa,   // at::scaled_dot_product_attention: LibTorch >= 2.1 only
  kFused,  // agentrl's tiled CPU float32 kernel (explicit path elsewhere)
};

// True when this build's LibTorch has scaled_dot_product_attention with a
// `scale` argument (>= 2.1).
bool sdpa_available();
// model.attention: "auto" (sdpa where available, else fused) | "eager" |
// "fused" | "sdpa". Throws ConfigError for "sdpa" on a LibTorch without it
// (naming the version found) and for any other name.
AttentionKernel resolve_attention_kernel(const std::string& name);
// "eager" | "fused" | "sdpa".
const char* attention_kernel_name(AttentionKernel kernel);

// Every function below takes the kernel as its last argument (default
// eager); kSdpa on a build without it throws c10::Error.

// Core attention for full sequences.
//   q: [B, Hq, T, D], k/v: [B, Hkv, T, D] (Hq % Hkv == 0; query head h uses
//   KV head h / (Hq/Hkv), as HF's repeat_kv);
//   allowed: [B, T, T] bool, allowed[b,i,j] = query i may attend key j; it
//   must be causal (false for j > i: keys after a query block are skipped)
//   and every row must allow at least one key. Returns [B, Hq, T, D].
// query_block: queries per block (bounds the [B,Hq,block,T] score memory).
torch::Tensor grouped_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                const torch::Tensor& allowed, int64_t query_block = 256,
                                AttentionKernel kernel = AttentionKernel::kEager);

// Attention of Q queries at arbitrary positions against all T keys (no
// causal block skipping: allowed alone decides).
//   q: [B, Hq, Q, D]; k/v: [B, Hkv, T, D]; allowed: [B, Q, T] bool, every row
//   allowing at least one key. Returns [B, Hq, Q, D].
torch::Tensor masked_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& allowed, int64_t query_block = 256,
                               AttentionKernel kernel = AttentionKernel::kEager);

// Attention of n new queries of one sequence against its cache.
//   q: [Hq, n, D]; k/v: [Hkv, L, D] (cached keys incl. the n new ones at the
//   end, L >= n); query i sits at position L-n+i and sees keys [0, L-n+i].
// Returns [Hq, n, D].
torch::Tensor cached_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               AttentionKernel kernel = AttentionKernel::kEager);

// Attention of B single-token queries (a decode step), each against the
// first lengths[b] keys of its own cache slot, as one batched computation:
// the op count does not grow with B.
//   q: [B, Hq, D]; k_cache/v_cache: a layer's cache [S, Hkv, cap, D];
//   slots: int64 [B] (q's device); hidden: bool [B, max_len], true at key
//   positions >= lengths[b] (max_len = max lengths). Returns [B, Hq, D].
// Equal to cached_attention of each query against its slot's keys (the
// padding gets weight exactly 0).
torch::Tensor decode_attention(const torch::Tensor& q, const torch::Tensor& k_cache, const torch::Tensor& v_cache,
                               const torch::Tensor& slots, const torch::Tensor& hidden,
                               AttentionKernel kernel = AttentionKernel::kEager);

// Attention of S chunks of queries (a step's prefill chunks), each against
// the first keys of its own cache slot, as one batched computation.
//   q: [S, Qmax, Hq, D], chunks padded to the longest (pad rows may hold any
//   finite values; their outputs are to be dropped); k_cache/v_cache: a
//   layer's cache [slots, Hkv, cap, D]; slots: int64 [S] (q's device);
//   hidden: bool [S, Qmax, L], true where query i of chunk s may not see key
//   j; every row must see at least one key. Keys hidden from every query of
//   a chunk may be unwritten (any value, NaN included): they add nothing.
// Returns [S, Qmax, Hq, D]; the rows of a real chunk equal cached_attention
// of that chunk against its slot's keys (up to float rounding).
torch::Tensor chunk_attention(const torch::Tensor& q, const torch::Tensor& k_cache, const torch::Tensor& v_cache,
                              const torch::Tensor& slots, const torch::Tensor& hidden,
                              AttentionKernel kernel = AttentionKernel::kEager);

class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const ModelArgs& args);

  // Projections + q/k norm + RoPE for x [..., H] -> q [..., Hq, D],
  // k,v [..., Hkv, D]; cos/sin [..., D] broadcast over heads.
  void project(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, torch::Tensor& q,
               torch::Tensor& k, torch::Tensor& v);
  // The two halves of project(): queries only, keys and values only.
  torch::Tensor project_q(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
  void project_kv(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, torch::Tensor& k,
                  torch::Tensor& v);

  // Full-sequence attention: x [B,T,H], cos/sin [B,T,D], allowed [B,T,T].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                        const torch::Tensor& allowed);

  // The same attention computed only for the queries at rows [B,Q] int64
  // (time indices into T): keys and values come from all T tokens of x
  // [B,T,H]; cos/sin [B,T,D] and allowed [B,T,T] are those of the full
  // sequence. Returns [B,Q,H], row (b,i) equal to forward()'s row
  // (b, rows[b,i]) up to float rounding.
  torch::Tensor forward_rows(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                             const torch::Tensor& allowed, const torch::Tensor& rows);

  Dense q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  RMSNorm q_norm{nullptr}, k_norm{nullptr};  // over head_dim, registered only when qk_norm

  int64_t num_heads, num_kv_heads, head_dim;
  double eps;
  AttentionKernel kernel = AttentionKernel::kEager;  // TransformerLM::set_attention_kernel
};
TORCH_MODULE(Attention);

}  // namespace agentrl::model
