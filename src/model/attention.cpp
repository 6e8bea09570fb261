#include "agentrl/model/attention.h"

#include <torch/version.h>

#include <cmath>
#include <limits>
#include <vector>

#include "agentrl/core/error.h"
#include "agentrl/model/rope.h"
#include "agentrl/model/transformer.h"
#include "fused_attention.h"

// scaled_dot_product_attention came in LibTorch 2.0, its `scale` argument in
// 2.1: it is passed so that both kernels scale by the same double
// 1/sqrt(head_dim).
#if defined(TORCH_VERSION_MAJOR) && (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1))
#define AGENTRL_HAVE_SDPA 1
#else
#define AGENTRL_HAVE_SDPA 0
#endif

namespace agentrl::model {

bool sdpa_available() { return AGENTRL_HAVE_SDPA != 0; }

AttentionKernel resolve_attention_kernel(const std::string& name) {
  if (name == "auto") return sdpa_available() ? AttentionKernel::kSdpa : AttentionKernel::kFused;
  if (name == "eager") return AttentionKernel::kEager;
  if (name == "fused") return AttentionKernel::kFused;
  if (name == "sdpa") {
    if (!sdpa_available())
      throw ConfigError(std::string("model.attention: sdpa needs LibTorch >= 2.1 (scaled_dot_product_attention); "
                                    "this build has LibTorch ") + TORCH_VERSION + ": use auto or eager");
    return AttentionKernel::kSdpa;
  }
  throw ConfigError("model.attention: unknown kernel '" + name + "' (expected auto, eager, fused or sdpa)");
}

const char* attention_kernel_name(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kSdpa: return "sdpa";
    case AttentionKernel::kFused: return "fused";
    default: return "eager";
  }
}

namespace {

// softmax(q k^T * scale + mask) v by LibTorch's fused kernel: q [..., M, D],
// k/v [..., N, D], allowed a bool mask broadcastable to [..., M, N] (true =
// may attend; every row allows a key). No dropout.
torch::Tensor sdpa(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                   const torch::Tensor& allowed, double scale) {
#if AGENTRL_HAVE_SDPA
  c10::optional<torch::Tensor> mask;
  if (allowed.defined()) mask = allowed;
  return at::scaled_dot_product_attention(q, k, v, mask, 0.0, false, scale);
#else
  (void)q, (void)k, (void)v, (void)allowed, (void)scale;
  TORCH_CHECK(false, "attention kernel sdpa: this LibTorch (", TORCH_VERSION, ") has no scaled_dot_product_attention");
  return torch::Tensor();
#endif
}

// softmax over the last dim in float32 (float64 stays float64), cast back to
// the activation dtype, as HF's eager attention does.
torch::Tensor softmax_like_hf(const torch::Tensor& scores) {
  const auto compute = scores.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
  return torch::softmax(scores, -1, compute).to(scores.scalar_type());
}

// 0 where a key may be seen, -inf where not, in the scores' dtype.
torch::Tensor mask_bias(const torch::Tensor& allowed, torch::Dtype dtype) {
  auto zero = torch::zeros({}, torch::TensorOptions().dtype(dtype).device(allowed.device()));
  return zero.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
}

}  // namespace

namespace {

// One block of queries against its keys: qb [B, Hkv, G*n, D] (the G query
// heads of a KV head folded into the rows, g-major), kb/vb [B, Hkv, e, D],
// allowed [B, n, e]. Returns [B, Hkv, G, n, D].
torch::Tensor attend_block(const torch::Tensor& qb, const torch::Tensor& kb, const torch::Tensor& vb,
                           const torch::Tensor& allowed, int64_t G, AttentionKernel kernel) {
  const int64_t B = qb.size(0), Hkv = qb.size(1), D = qb.size(3);
  const int64_t n = allowed.size(1), e = allowed.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  if (kernel == AttentionKernel::kSdpa) {
    // Row g*n + i of a KV head's queries is query i: its mask row is
    // allowed[b, i] (one copy of the mask per query head of the group).
    auto mask = G == 1 ? allowed.unsqueeze(1) : allowed.unsqueeze(1).expand({B, G, n, e}).reshape({B, 1, G * n, e});
    return sdpa(qb, kb, vb, mask, scale).view({B, Hkv, G, n, D});
  }
  auto scores = torch::matmul(qb, kb.transpose(-1, -2)).view({B, Hkv, G, n, e});
  // bias + scale * scores in one pass, the mask as an additive bias built
  // once for all heads: on the score tensor, the largest of the step, that
  // leaves one matmul, one add and the softmax, where scale + masked_fill
  // cost two passes each way. Where a key is allowed the bias is 0, so each
  // score is rounded once from scale * s, exactly as HF's and the engine's
  // separate scaling rounds it (bf16 log-probs of trainer and engine agree).
  // Out of place: an in-place add on this view of the matmul output would
  // make autograd copy the whole score tensor back (CopySlices).
  scores = torch::add(mask_bias(allowed, scores.scalar_type()).reshape({B, 1, 1, n, e}), scores, scale);
  auto probs = softmax_like_hf(scores).view({B, Hkv, G * n, e});
  return torch::matmul(probs, vb).view({B, Hkv, G, n, D});
}

// agentrl's fused kernel where it is chosen and handles q's dtype and
// device (CPU float32); elsewhere the explicit path.
bool runs_fused(AttentionKernel kernel, const torch::Tensor& q) {
  return kernel == AttentionKernel::kFused && detail::fused_attention_supported(q);
}

// Attention in blocks of queries; `causal`: query i sits at position i, so
// block [s, s+n) sees keys [0, s+n) only and the later keys are skipped.
torch::Tensor blocked_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                const torch::Tensor& allowed, int64_t query_block, bool causal,
                                AttentionKernel kernel) {
  // agentrl's fused kernel tiles the keys itself and skips the tiles the
  // mask leaves out, causal or not; elsewhere (not CPU float32) the explicit path.
  if (runs_fused(kernel, q)) return detail::fused_attention(q, k, v, allowed);
  const int64_t B = q.size(0), Hq = q.size(1), Q = q.size(2), D = q.size(3);
  const int64_t Hkv = k.size(1), G = Hq / Hkv;
  auto qg = q.reshape({B, Hkv, G, Q, D});
  std::vector<torch::Tensor> outs;
  for (int64_t s = 0; s < Q; s += query_block) {
    const int64_t n = std::min(query_block, Q - s), e = causal ? s + n : k.size(2);
    auto qb = qg.narrow(3, s, n).reshape({B, Hkv, G * n, D});
    outs.push_back(attend_block(qb, k.narrow(2, 0, e), v.narrow(2, 0, e), allowed.narrow(1, s, n).narrow(2, 0, e), G,
                                kernel));
  }
  auto out = outs.size() == 1 ? outs[0] : torch::cat(outs, 3);
  return out.reshape({B, Hq, Q, D});
}

}  // namespace

torch::Tensor grouped_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                const torch::Tensor& allowed, int64_t query_block, AttentionKernel kernel) {
  return blocked_attention(q, k, v, allowed, query_block, /*causal=*/true, kernel);
}

torch::Tensor masked_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& allowed, int64_t query_block, AttentionKernel kernel) {
  return blocked_attention(q, k, v, allowed, query_block, /*causal=*/false, kernel);
}

torch::Tensor cached_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               AttentionKernel kernel) {
  const int64_t Hq = q.size(0), n = q.size(1), D = q.size(2);
  const int64_t Hkv = k.size(0), L = k.size(1), G = Hq / Hkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  const int64_t past = L - n;
  // One block: query i (position past+i) sees keys j <= past+i.
  auto causal_mask = [&] {
    const auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(q.device());
    return torch::arange(L, i64).unsqueeze(0) <= torch::arange(past, L, i64).unsqueeze(1);  // [n, L]
  };
  if (auto q4 = q.unsqueeze(0); runs_fused(kernel, q4))
    return detail::fused_attention(q4, k.unsqueeze(0), v.unsqueeze(0), causal_mask().unsqueeze(0)).squeeze(0);
  if (kernel == AttentionKernel::kSdpa) {
    auto allowed = causal_mask();
    auto out = attend_block(q.reshape({1, Hkv, G * n, D}), k.unsqueeze(0), v.unsqueeze(0), allowed.unsqueeze(0), G,
                            kernel);  // [1, Hkv, G, n, D]
    return out.reshape({Hq, n, D});
  }
  auto qg = q.reshape({Hkv, G, n, D});
  constexpr int64_t kBlock = 256;
  std::vector<torch::Tensor> outs;
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s), e = past + s + m;  // keys [0, e)
    auto qb = qg.narrow(2, s, m).reshape({Hkv, G * m, D});
    auto kb = k.narrow(1, 0, e), vb = v.narrow(1, 0, e);
    auto scores = torch::matmul(qb, kb.transpose(-1, -2)).mul_(scale);
    if (m > 1) {
      // query s+i sits at position past+s+i and sees keys j <= past+s+i.
      auto qpos = torch::arange(past + s, past + s + m, torch::TensorOptions().dtype(torch::kInt64).device(q.device()));
      auto kpos = torch::arange(e, torch::TensorOptions().dtype(torch::kInt64).device(q.device()));
      auto future = kpos.unsqueeze(0) > qpos.unsqueeze(1);  // [m, e]
      scores = scores.view({Hkv, G, m, e}).masked_fill(future, -std::numeric_limits<double>::infinity());
      scores = scores.view({Hkv, G * m, e});
    }
    auto probs = softmax_like_hf(scores);
    outs.push_back(torch::matmul(probs, vb).view({Hkv, G, m, D}));
  }
  auto out = outs.size() == 1 ? outs[0] : torch::cat(outs, 2);
  return out.reshape({Hq, n, D});
}

torch::Tensor decode_attention(const torch::Tensor& q, const torch::Tensor& k_cache, const torch::Tensor& v_cache,
                               const torch::Tensor& slots, const torch::Tensor& hidden, AttentionKernel kernel) {
  const int64_t B = q.size(0), Hq = q.size(1), D = q.size(2);
  const int64_t Hkv = k_cache.size(1), G = Hq / Hkv, L = hidden.size(1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  // Narrow before gathering: only the first L positions of each slot move.
  // Advanced indexing, not index_select: on the CPU, index_select of a
  // non-contiguous tensor copies index by index (ops growing with B).
  auto k = k_cache.narrow(2, 0, L).index({slots});  // [B, Hkv, L, D]
  auto v = v_cache.narrow(2, 0, L).index({slots});
  // Unwritten cache positions may hold anything (even NaN): their scores are
  // replaced by -inf and their values by 0, so they add exactly nothing.
  v.masked_fill_(hidden.view({B, 1, L, 1}), 0);
  if (kernel == AttentionKernel::kSdpa) {
    // The fused kernel adds the mask to the scores: a NaN key would stay NaN.
    k.masked_fill_(hidden.view({B, 1, L, 1}), 0);
    auto out = sdpa(q.view({B, Hkv, G, D}), k, v, hidden.logical_not().view({B, 1, 1, L}), scale);
    return out.reshape({B, Hq, D});
  }
  // On the CPU a batched matmul of many small matrices loops over them (a
  // select and an mm call each, B * Hkv per product); below a size limit an
  // elementwise product and a sum do the same work in one op each. Not in
  // bf16/fp16: the products would be rounded before the sum (matmul
  // accumulates in fp32), which moves log-probs away from the trainer's.
  constexpr int64_t kElementwiseLimit = int64_t{1} << 22;
  const bool full_precision = q.scalar_type() == torch::kFloat32 || q.scalar_type() == torch::kFloat64;
  const bool elementwise = !q.is_cuda() && full_precision && B * Hkv * G * L * D <= kElementwiseLimit;
  auto qg = q.view({B, Hkv, G, D});
  auto scores = elementwise ? (qg.unsqueeze(3) * k.unsqueeze(2)).sum(-1) : torch::matmul(qg, k.transpose(-1, -2));
  scores.mul_(scale).masked_fill_(hidden.view({B, 1, 1, L}), -std::numeric_limits<double>::infinity());  // [B,Hkv,G,L]
  auto probs = softmax_like_hf(scores);
  auto out = elementwise ? (probs.unsqueeze(-1) * v.unsqueeze(2)).sum(-2) : torch::matmul(probs, v);  // [B,Hkv,G,D]
  return out.reshape({B, Hq, D});
}

torch::Tensor chunk_attention(const torch::Tensor& q, const torch::Tensor& k_cache, const torch::Tensor& v_cache,
                              const torch::Tensor& slots, const torch::Tensor& hidden, AttentionKernel kernel) {
  const int64_t S = q.size(0), Q = q.size(1), Hq = q.size(2), D = q.size(3);
  const int64_t Hkv = k_cache.size(1), G = Hq / Hkv, L = hidden.size(2);
  auto k = k_cache.narrow(2, 0, L).index({slots});  // [S, Hkv, L, D]
  auto v = v_cache.narrow(2, 0, L).index({slots});
  // Keys no query of a chunk sees may be unwritten (even NaN): zeroed, so
  // that their -inf-biased scores and zero weights add exactly nothing.
  auto unseen = hidden.all(1).view({S, 1, L, 1});
  k.masked_fill_(unseen, 0);
  v.masked_fill_(unseen, 0);
  // agentrl's fused kernel, as the trainer's forward runs it: no [Q, L]
  // score tensor, and key tiles no query of a chunk's row block sees (the
  // cache beyond the chunk's end) are skipped.
  if (runs_fused(kernel, q)) {
    auto out = detail::fused_attention(q.permute({0, 2, 1, 3}), k, v, hidden.logical_not());  // [S, Hq, Q, D]
    return out.permute({0, 2, 1, 3}).reshape({S, Q, Hq, D});
  }
  // [S, Q, Hq, D] -> [S, Hkv, G*Q, D] (g-major rows, as attend_block wants):
  // the same kernel as the trainer's forward, so both round alike.
  auto qb = q.view({S, Q, Hkv, G, D}).permute({0, 2, 3, 1, 4}).reshape({S, Hkv, G * Q, D});
  auto out = attend_block(qb, k, v, hidden.logical_not(), G, kernel);  // [S, Hkv, G, Q, D]
  return out.permute({0, 3, 1, 2, 4}).reshape({S, Q, Hq, D});
}

AttentionImpl::AttentionImpl(const ModelArgs& args)
    : num_heads(args.num_attention_heads),
      num_kv_heads(args.num_key_value_heads),
      head_dim(effective_head_dim(args)),
      eps(args.rms_norm_eps) {
  const int64_t H = args.hidden_size;
  q_proj = register_module("q_proj", Dense(H, num_heads * head_dim, args.attention_bias));
  k_proj = register_module("k_proj", Dense(H, num_kv_heads * head_dim, args.attention_bias));
  v_proj = register_module("v_proj", Dense(H, num_kv_heads * head_dim, args.attention_bias));
  o_proj = register_module("o_proj", Dense(num_heads * head_dim, H, false));
  if (args.qk_norm) {
    q_norm = register_module("q_norm", RMSNorm(head_dim, eps));
    k_norm = register_module("k_norm", RMSNorm(head_dim, eps));
  }
}

namespace {

// [..., H] activations' leading dims + (heads, head_dim).
std::vector<int64_t> head_shape(const torch::Tensor& x, int64_t heads, int64_t head_dim) {
  auto s = x.sizes().vec();
  s.pop_back();
  s.push_back(heads);
  s.push_back(head_dim);
  return s;
}

}  // namespace

torch::Tensor AttentionImpl::project_q(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  auto q = q_proj(x).view(head_shape(x, num_heads, head_dim));
  if (q_norm) q = q_norm(q);  // Qwen3: per-head RMSNorm before RoPE
  // cos/sin [..., D] -> [..., 1, D] to broadcast over heads.
  return apply_rope(q, cos.unsqueeze(-2), sin.unsqueeze(-2));
}

void AttentionImpl::project_kv(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                               torch::Tensor& k, torch::Tensor& v) {
  k = k_proj(x).view(head_shape(x, num_kv_heads, head_dim));
  v = v_proj(x).view(head_shape(x, num_kv_heads, head_dim));
  if (k_norm) k = k_norm(k);
  k = apply_rope(k, cos.unsqueeze(-2), sin.unsqueeze(-2));
}

void AttentionImpl::project(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                            torch::Tensor& q, torch::Tensor& k, torch::Tensor& v) {
  q = project_q(x, cos, sin);
  project_kv(x, cos, sin, k, v);
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                     const torch::Tensor& allowed) {
  const int64_t B = x.size(0), T = x.size(1);
  torch::Tensor q, k, v;
  project(x, cos, sin, q, k, v);  // [B,T,heads,D]
  auto out = grouped_attention(q.transpose(1, 2), k.transpose(1, 2).contiguous(), v.transpose(1, 2).contiguous(),
                               allowed, 256, kernel);  // [B,Hq,T,D]
  out = out.transpose(1, 2).reshape({B, T, num_heads * head_dim});
  return o_proj(out);
}

torch::Tensor AttentionImpl::forward_rows(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                          const torch::Tensor& allowed, const torch::Tensor& rows) {
  const int64_t B = x.size(0), Q = rows.size(1);
  torch::Tensor k, v;
  project_kv(x, cos, sin, k, v);  // every token's keys and values: the rows attend to them
  auto take = [&](const torch::Tensor& t) {  // [B,T,C] -> [B,Q,C]
    return t.gather(1, rows.unsqueeze(-1).expand({B, Q, t.size(2)}));
  };
  auto q = project_q(take(x), take(cos), take(sin));  // [B,Q,Hq,D]
  auto out = masked_attention(q.transpose(1, 2), k.transpose(1, 2).contiguous(), v.transpose(1, 2).contiguous(),
                              take(allowed), 256, kernel);  // [B,Hq,Q,D]
  out = out.transpose(1, 2).reshape({B, Q, num_heads * head_dim});
  return o_proj(out);
}

}  // namespace agentrl::model
