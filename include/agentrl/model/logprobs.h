// Per-token log-probabilities and entropies of a TransformerLM, computed in
// chunks of tokens so that the [B,T,V] float32 logits tensor never exists at
// once (V = 151936 for Qwen): only [chunk_tokens, V] logits live at a time, in
// the forward and in the backward, which recomputes each chunk's logits (the
// same trick as fused linear + cross-entropy kernels).
//
// Definitions (aligned with input_ids, as rollout/train_batch.h expects):
//   logprobs[b,t]    = log p(input_ids[b,t] | input_ids[b,<t])
//   entropy[b,t]     = -sum_j p_j log p_j of the distribution that predicted t
//   prob_sq_sum[b,t] = sum_j p_j^2 of that distribution (no gradient)
// with p = softmax(float32(logits at t-1)). All three are 0 at t = 0, where
// attention_mask[b,t] or attention_mask[b,t-1] is false (padding, the first
// real token under left padding) and at the first token of a packed segment
// (position_ids[t] != position_ids[t-1] + 1): no prediction exists there.
//
// Gradients flow into the model through logprobs, and through entropy when
// opts.entropy_grad (otherwise entropy is returned detached).
//
// Thread-safety: as the model's forward.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <vector>

#include "agentrl/model/transformer.h"

namespace agentrl::model {

struct LogprobOptions {
  int64_t chunk_tokens = 1024;  // rows of logits materialised at once
  bool entropy_grad = false;    // let gradients flow through entropy
  bool want_prob_sq = false;    // fill prob_sq_sum (else it is undefined)
  // CPU blocks: the fused row kernels (one pass per statistic group instead
  // of ATen's log_softmax / exp / p log p chain, same values within float
  // rounding). false: the ATen ops on every device (the reference in tests
  // and benchmarks). Other devices always take the ATen ops.
  bool fused = true;
  // [B,T] bool (optional): compute the stats only where true (and a
  // prediction exists); they are 0 elsewhere. The model's last layer and the
  // logits then run for those positions only (forward_hidden_rows): the
  // trainer passes the loss mask, ~15% of a multi-turn episode's tokens.
  torch::Tensor only;
  // Constrained positions (choice-mode rollouts, rollout/generator.h's
  // allowed_texts): the stats of such a position are those of the
  // distribution masked to the token ids its step allowed (the other logits
  // set to -1e30, as the engine does), so that they equal the engine's.
  // logprobs_and_entropy: `allowed` (optional) holds per batch row a map
  // column t -> ids; positions without an entry are free. chunked_token_stats:
  // row i of `hidden` keeps allowed_ids[allowed_offsets[i] ..
  // allowed_offsets[i+1]) (CPU int64 tensors of N+1 and M entries; an empty
  // range leaves the row free; undefined: no row is constrained).
  const std::vector<std::map<int64_t, std::vector<int32_t>>>* allowed = nullptr;
  torch::Tensor allowed_offsets, allowed_ids;
  // logprobs_and_entropy only: also fill TokenStats::free_logprobs, each
  // target's log-prob under the unmasked distribution (a second lm-head pass
  // over the constrained rows only, differentiable like logprobs). The
  // trainer's actor.choice_mass_coef term reads it.
  bool want_free_logprobs = false;
};

struct TokenStats {
  torch::Tensor logprobs;     // [B,T] float32
  torch::Tensor entropy;      // [B,T] float32
  torch::Tensor prob_sq_sum;  // [B,T] float32, only when want_prob_sq
  // [B,T] float32, only when want_free_logprobs: the unmasked log-prob of the
  // target; equals logprobs at free positions, and logprobs - free_logprobs =
  // -log(the unmasked mass of the allowed ids) >= 0 at constrained ones.
  torch::Tensor free_logprobs;
};

TokenStats logprobs_and_entropy(TransformerLM& model, const torch::Tensor& input_ids,
                                const torch::Tensor& attention_mask, const torch::Tensor& position_ids,
                                const LogprobOptions& opts = {});

// The lower-level piece: hidden [N,H] rows, lm-head weight [V,H], targets [N]
// int64 -> (logprob [N], entropy [N], prob_sq [N] (if want_prob_sq)), float32,
// chunked with recomputing backward. Differentiable w.r.t. hidden and weight.
TokenStats chunked_token_stats(const torch::Tensor& hidden, const torch::Tensor& weight,
                               const torch::Tensor& targets, const LogprobOptions& opts = {});

// The mask of positions that have a prediction (see above): [B,T] bool.
torch::Tensor prediction_mask(const torch::Tensor& attention_mask, const torch::Tensor& position_ids);

// HF-style position ids for a padded batch: cumsum(mask) - 1, 0 at padding. [B,T] int64.
torch::Tensor position_ids_from_mask(const torch::Tensor& attention_mask);

}  // namespace agentrl::model
