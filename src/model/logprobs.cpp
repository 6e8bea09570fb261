#include "agentrl/model/logprobs.h"

#include <algorithm>

#include "token_stats_kernel.h"

namespace agentrl::model {
namespace {

torch::Dtype compute_dtype(const torch::Tensor& t) {
  return t.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
}

struct ChunkStats {
  torch::Tensor logp;  // [c,V] log-softmax
  torch::Tensor p;     // [c,V] softmax
  torch::Tensor ent;   // [c]
};

// Rows of a constrained chunk (LogprobOptions::allowed_offsets / _ids):
// which rows are constrained, and the (row, id) pairs they keep, relative to
// the chunk that starts at row `s`.
struct ChunkMask {
  std::vector<int64_t> constrained, rows, cols;
};

ChunkMask chunk_mask(const torch::Tensor& offsets, const torch::Tensor& ids, int64_t s, int64_t c, int64_t V) {
  ChunkMask m;
  if (ids.numel() == 0) return m;
  const int64_t* off = offsets.data_ptr<int64_t>();
  const int64_t* id = ids.data_ptr<int64_t>();
  for (int64_t i = 0; i < c; ++i) {
    if (off[s + i] == off[s + i + 1]) continue;
    m.constrained.push_back(i);
    for (int64_t k = off[s + i]; k < off[s + i + 1]; ++k) {
      if (id[k] < 0 || id[k] >= V) continue;
      m.rows.push_back(i);
      m.cols.push_back(id[k]);
    }
  }
  return m;
}

// The logits of rows [s, s+c) of `h`, `w` the lm-head weight already in
// compute_dtype(h): computed in fp32 (fp64 in gradient checks) from bf16/fp16
// hidden states, exactly as the engine's TransformerLM::logits_fp32, so that
// behaviour and trainer log-probs agree in low precision. Constrained rows
// get -1e30 outside their allowed ids (finite, as in the engine: p = 0 there
// and p * log p stays 0, where -inf would give NaN).
torch::Tensor chunk_logits(const torch::Tensor& h, const torch::Tensor& w, const torch::Tensor& offsets,
                           const torch::Tensor& ids, int64_t s) {
  auto z = torch::nn::functional::linear(h.to(w.scalar_type()), w).contiguous();
  const auto m = chunk_mask(offsets, ids, s, z.size(0), z.size(1));
  if (m.constrained.empty()) return z;
  auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  auto drop = torch::zeros({z.size(0), z.size(1)}, torch::TensorOptions().dtype(torch::kBool));
  drop.index_fill_(0, torch::tensor(m.constrained, i64), true);
  drop.index_put_({torch::tensor(m.rows, i64), torch::tensor(m.cols, i64)}, false);
  return z.masked_fill_(drop.to(z.device()), -1e30);
}

ChunkStats chunk_stats(const torch::Tensor& z) {
  auto logp = torch::log_softmax(z, -1);
  auto p = logp.exp();
  auto ent = -(p * logp).sum(-1);
  return {logp, p, ent};
}

// Gradient of the loss with respect to one block's logits z = h w^T, given
// the gradients g_lp [c] of the log-probs of `targets` and g_ent [c] of the
// entropies (either undefined when not in the loss). Without an entropy
// gradient only the softmax is needed: one op fewer over the [c, V] block
// and no log-softmax kept.
torch::Tensor chunk_logit_grad(const torch::Tensor& z, const torch::Tensor& targets, const torch::Tensor& g_lp,
                               const torch::Tensor& g_ent) {
  const auto cd = z.scalar_type();
  if (!g_ent.defined()) {
    auto p = torch::softmax(z, -1);
    if (!g_lp.defined()) return p.zero_();
    auto g = g_lp.to(cd).unsqueeze(1);
    auto gz = p.mul_(g.neg());  // -p g, in place over the softmax
    return gz.scatter_add_(1, targets.unsqueeze(1), g);
  }
  auto st = chunk_stats(z);
  auto gz = st.p * (st.logp + st.ent.unsqueeze(1)).mul_(g_ent.to(cd).unsqueeze(1).neg());  // -p (log p + H) g_ent
  if (g_lp.defined()) {
    auto g = g_lp.to(cd).unsqueeze(1);
    gz.sub_(st.p * g).scatter_add_(1, targets.unsqueeze(1), g);
  }
  return gz;
}

// Forward: logprob/entropy/prob_sq per row, one [chunk, V] block at a time.
// Backward recomputes each block and applies the closed-form gradients of the
// log-softmax (Bishop 2006, eq. 4.106-style) — with z the logits:
//   d logp_y / dz_j = 1[j = y] - p_j
//   d H / dz_j      = -p_j (log p_j + H)
// so neither pass keeps more than one block of logits alive. With `fused`
// (blocks on the CPU) the row statistics and the block's gradient come from
// token_stats_kernel.h: two read passes forward, one read-write pass backward
// from the saved log-sum-exp and entropy, no [chunk, V] temporaries.
struct ChunkedStatsFn : public torch::autograd::Function<ChunkedStatsFn> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& hidden,
                                                const torch::Tensor& weight, const torch::Tensor& targets,
                                                const torch::Tensor& allowed_offsets, const torch::Tensor& allowed_ids,
                                                int64_t chunk, bool want_prob_sq, bool fused) {
    const int64_t N = hidden.size(0);
    auto opts = torch::TensorOptions().dtype(compute_dtype(hidden)).device(hidden.device());
    auto lp = torch::zeros({N}, opts), ent = torch::zeros({N}, opts);
    auto psq = want_prob_sq ? torch::zeros({N}, opts) : torch::zeros({0}, opts);
    fused = fused && detail::fused_stats_supported(lp);
    auto lse = fused ? torch::zeros({N}, opts) : torch::zeros({0}, opts);
    const auto w = weight.to(compute_dtype(hidden));  // once per call, not per chunk
    for (int64_t s = 0; s < N; s += chunk) {
      const int64_t c = std::min(chunk, N - s);
      auto tg = targets.narrow(0, s, c);
      auto z = chunk_logits(hidden.narrow(0, s, c), w, allowed_offsets, allowed_ids, s);
      if (fused) {
        detail::fused_row_stats(z, tg, {lp.narrow(0, s, c), ent.narrow(0, s, c),
                                        want_prob_sq ? psq.narrow(0, s, c) : torch::Tensor(), lse.narrow(0, s, c)});
        continue;
      }
      auto st = chunk_stats(z);
      lp.narrow(0, s, c).copy_(st.logp.gather(1, tg.unsqueeze(1)).squeeze(1));
      ent.narrow(0, s, c).copy_(st.ent);
      if (want_prob_sq) psq.narrow(0, s, c).copy_((st.p * st.p).sum(-1));
    }
    // The fused backward needs each row's log-sum-exp and entropy (a copy:
    // the caller owns the returned entropy).
    ctx->save_for_backward({hidden, weight, targets, lse, fused ? ent.clone() : lse, allowed_offsets, allowed_ids});
    ctx->saved_data["chunk"] = chunk;
    ctx->saved_data["fused"] = fused;
    ctx->mark_non_differentiable({psq});
    // An output outside the loss gets no gradient (not zeros): the backward
    // then skips its term.
    ctx->set_materialize_grads(false);
    return {lp, ent, psq};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto& hidden = saved[0];
    const auto& weight = saved[1];
    const auto& targets = saved[2];
    const int64_t chunk = ctx->saved_data["chunk"].toInt();
    const bool fused = ctx->saved_data["fused"].toBool();
    const int64_t N = hidden.size(0);
    const auto cd = compute_dtype(hidden);
    const auto g_lp = grads[0].defined() ? grads[0].to(cd).contiguous() : grads[0];
    const auto g_ent = grads[1].defined() ? grads[1].to(cd).contiguous() : grads[1];
    auto part = [](const torch::Tensor& g, int64_t s, int64_t c) { return g.defined() ? g.narrow(0, s, c) : g; };
    auto grad_h = torch::empty_like(hidden);
    torch::Tensor grad_w;  // the first chunk's product, then accumulated in place (no [V,H] zeros, no temporaries)
    const auto w = weight.to(cd);
    for (int64_t s = 0; s < N; s += chunk) {
      const int64_t c = std::min(chunk, N - s);
      auto h = hidden.narrow(0, s, c);
      auto tg = targets.narrow(0, s, c);
      auto gz = chunk_logits(h, w, saved[5], saved[6], s);
      if (fused) {
        detail::fused_logit_grad_(gz, tg, saved[3].narrow(0, s, c), saved[4].narrow(0, s, c), part(g_lp, s, c),
                                  part(g_ent, s, c));
      } else {
        gz = chunk_logit_grad(gz, tg, part(g_lp, s, c), part(g_ent, s, c));
      }
      grad_h.narrow(0, s, c).copy_(torch::matmul(gz, w));  // fp32 product, rounded once into grad_h's dtype
      if (!weight.requires_grad()) continue;
      if (grad_w.defined()) {
        grad_w.addmm_(gz.transpose(0, 1), h.to(cd));
      } else {
        grad_w = torch::matmul(gz.transpose(0, 1), h.to(cd));
      }
    }
    const auto none = torch::Tensor();
    return {grad_h, grad_w.defined() ? grad_w.to(weight.scalar_type()) : none, none, none, none, none, none, none};
  }
};

}  // namespace

TokenStats chunked_token_stats(const torch::Tensor& hidden, const torch::Tensor& weight, const torch::Tensor& targets,
                               const LogprobOptions& opts) {
  TORCH_CHECK(opts.chunk_tokens >= 1, "chunk_tokens must be >= 1");
  const auto none = torch::zeros({0}, torch::kInt64);
  auto offsets = opts.allowed_ids.defined() ? opts.allowed_offsets.to(torch::kCPU, torch::kInt64).contiguous() : none;
  auto ids = opts.allowed_ids.defined() ? opts.allowed_ids.to(torch::kCPU, torch::kInt64).contiguous() : none;
  TORCH_CHECK(ids.numel() == 0 || offsets.numel() == hidden.size(0) + 1,
              "chunked_token_stats: allowed_offsets needs one entry per row plus one");
  auto out = ChunkedStatsFn::apply(hidden, weight, targets.to(torch::kInt64).contiguous(), offsets, ids,
                                   opts.chunk_tokens, opts.want_prob_sq, opts.fused);
  TokenStats r;
  r.logprobs = out[0].to(torch::kFloat32);
  r.entropy = opts.entropy_grad ? out[1].to(torch::kFloat32) : out[1].detach().to(torch::kFloat32);
  if (opts.want_prob_sq) r.prob_sq_sum = out[2].to(torch::kFloat32);
  if (hidden.scalar_type() == torch::kFloat64) {  // keep float64 for gradient checks
    r.logprobs = out[0];
    r.entropy = opts.entropy_grad ? out[1] : out[1].detach();
    if (opts.want_prob_sq) r.prob_sq_sum = out[2];
  }
  return r;
}

torch::Tensor prediction_mask(const torch::Tensor& attention_mask, const torch::Tensor& position_ids) {
  auto mask = attention_mask.to(torch::kBool);
  const int64_t T = mask.size(1);
  auto out = torch::zeros_like(mask);
  if (T < 2) return out;
  auto cur = mask.narrow(1, 1, T - 1), prev = mask.narrow(1, 0, T - 1);
  auto pos = position_ids.to(mask.device(), torch::kInt64);
  auto cont = pos.narrow(1, 1, T - 1) == pos.narrow(1, 0, T - 1) + 1;
  out.narrow(1, 1, T - 1).copy_(cur.logical_and(prev).logical_and(cont));
  return out;
}

torch::Tensor position_ids_from_mask(const torch::Tensor& attention_mask) {
  auto m = attention_mask.to(torch::kInt64);
  return (m.cumsum(1) - 1).clamp_min(0).mul(m);
}

namespace {

// For each row b, the time indices t-1 of its wanted positions t (ascending),
// padded with 0 to the longest row's count (at least 1, so that the graph
// exists for an empty selection): rows [B,Q] int64 and valid [B,Q] bool.
std::pair<torch::Tensor, torch::Tensor> wanted_rows(const torch::Tensor& wanted) {
  const int64_t B = wanted.size(0), T = wanted.size(1);
  TORCH_CHECK(T >= 1, "logprobs_and_entropy: empty sequence");
  auto counts = wanted.sum(1);
  const int64_t Q = std::max<int64_t>(1, counts.max().item<int64_t>());  // <= T
  auto t = torch::arange(T, torch::TensorOptions().dtype(torch::kInt64).device(wanted.device())).expand({B, T});
  auto key = torch::where(wanted, t, t + T);  // wanted positions first, in time order
  auto first = std::get<0>(key.sort(1)).narrow(1, 0, Q);
  auto valid = torch::arange(Q, first.options()).unsqueeze(0) < counts.unsqueeze(1);
  auto rows = torch::where(valid, first - 1, torch::zeros_like(first));
  return {rows, valid};
}

// `opts` with allowed_offsets / allowed_ids for the rows at flat positions
// `where` (b * T + t, ascending) from opts.allowed; unchanged without it.
LogprobOptions with_row_constraints(const LogprobOptions& opts, const torch::Tensor& where, int64_t T) {
  if (opts.allowed == nullptr || opts.allowed->empty()) return opts;
  const auto& allowed = *opts.allowed;
  auto flat = where.to(torch::kCPU, torch::kInt64).contiguous();
  const int64_t N = flat.numel();
  const int64_t* f = flat.data_ptr<int64_t>();
  std::vector<int64_t> offsets(static_cast<size_t>(N) + 1, 0), ids;
  for (int64_t i = 0; i < N; ++i) {
    const auto b = static_cast<size_t>(f[i] / T);
    TORCH_CHECK(b < allowed.size(), "logprobs_and_entropy: `allowed` has ", allowed.size(), " rows, the batch more");
    const auto it = allowed[b].find(f[i] % T);
    if (it != allowed[b].end()) ids.insert(ids.end(), it->second.begin(), it->second.end());
    offsets[static_cast<size_t>(i) + 1] = static_cast<int64_t>(ids.size());
  }
  LogprobOptions o = opts;
  o.allowed = nullptr;
  o.allowed_offsets = torch::tensor(offsets, torch::kInt64);
  o.allowed_ids = torch::tensor(ids, torch::kInt64);
  return o;
}

// The targets' log-probs under the unmasked distributions: `masked` (the
// constrained pass's) with the constrained rows' entries recomputed without
// their masks. Only those rows take a second lm-head pass.
torch::Tensor unmasked_logprobs(const torch::Tensor& rows, const torch::Tensor& weight, const torch::Tensor& targets,
                                const torch::Tensor& masked, const LogprobOptions& constrained) {
  if (!constrained.allowed_offsets.defined()) return masked;
  const auto off = constrained.allowed_offsets;
  auto which = (off.slice(0, 1) > off.slice(0, 0, -1)).nonzero().squeeze(1).to(rows.device());
  if (which.numel() == 0) return masked;
  LogprobOptions free;
  free.chunk_tokens = constrained.chunk_tokens;
  free.fused = constrained.fused;
  auto st = chunked_token_stats(rows.index_select(0, which), weight, targets.index_select(0, which), free);
  return masked.index_copy(0, which, st.logprobs);
}

}  // namespace

TokenStats logprobs_and_entropy(TransformerLM& model, const torch::Tensor& input_ids,
                                const torch::Tensor& attention_mask, const torch::Tensor& position_ids,
                                const LogprobOptions& opts) {
  const int64_t B = input_ids.size(0), T = input_ids.size(1);
  const auto dev = model->device();
  auto pm = prediction_mask(attention_mask.to(dev), position_ids.to(dev));
  if (opts.only.defined()) pm.logical_and_(opts.only.to(dev, torch::kBool));
  auto where = pm.flatten().nonzero().squeeze(1);  // flat indices b*T+t with a prediction
  torch::Tensor rows;  // [N,H]: the hidden state that predicts each of them
  if (opts.only.defined()) {
    auto [idx, valid] = wanted_rows(pm);
    auto hidden = model->forward_hidden_rows(input_ids, position_ids, attention_mask, idx);  // [B,Q,H]
    rows = hidden.reshape({-1, hidden.size(2)}).index_select(0, valid.flatten().nonzero().squeeze(1));
  } else {
    auto hidden = model->forward_hidden(input_ids, position_ids, attention_mask);  // [B,T,H]
    rows = hidden.reshape({B * T, hidden.size(2)}).index_select(0, where - 1);
  }
  auto targets = input_ids.to(dev, torch::kInt64).flatten().index_select(0, where);
  const auto constrained = with_row_constraints(opts, where, T);
  auto st = chunked_token_stats(rows, model->lm_head_weight(), targets, constrained);
  auto place = [&](const torch::Tensor& v) {
    if (!v.defined()) return v;
    return torch::zeros({B * T}, v.options()).index_copy(0, where, v).view({B, T});
  };
  TokenStats r;
  r.logprobs = place(st.logprobs);
  r.entropy = place(st.entropy);
  r.prob_sq_sum = place(st.prob_sq_sum);
  if (opts.want_free_logprobs)
    r.free_logprobs = place(unmasked_logprobs(rows, model->lm_head_weight(), targets, st.logprobs, constrained));
  return r;
}

}  // namespace agentrl::model
