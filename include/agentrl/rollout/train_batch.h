// TrainBatch: the padded tensors one PPO update runs on.
//
// Built from trajectories by rollout/batch_builder.*. Row n is one training
// sequence (a whole episode in full context mode, one step in window mode).
// Every per-token tensor is aligned with input_ids: entry [n, t] describes
// token input_ids[n, t]. Log-probs at t are log p(input_ids[t] | input_ids[<t]),
// so column 0 never carries loss (loss_mask[n, 0] == 0).
//
// Shapes: N rows, T = longest row (right padding).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <vector>

namespace agentrl::rollout {

struct TrainBatch {
  torch::Tensor input_ids;       // [N, T] int64, pad = 0
  torch::Tensor attention_mask;  // [N, T] bool, true on real tokens
  torch::Tensor position_ids;    // [N, T] int64
  torch::Tensor loss_mask;       // [N, T] float32, 1 on model-generated tokens only
  torch::Tensor old_logprobs;    // [N, T] float32, pi_old (recomputed) or behaviour log-probs
  torch::Tensor behaviour_logprobs;  // [N, T] float32, engine's log-probs at rollout time
  torch::Tensor ref_logprobs;    // [N, T] float32, frozen reference policy (undefined when KL off)
  torch::Tensor rollout_entropies;  // [N, T] float32, engine's entropies at rollout time
  torch::Tensor advantages;      // [N, T] float32
  torch::Tensor turn_index;      // [N, T] int64, turn of each generated token, -1 elsewhere
  std::vector<int64_t> trajectory_of_row;  // row -> index into the trajectory vector
  std::vector<int64_t> turn_of_row;        // window mode: row -> turn index; full mode: -1
  // Choice-mode rollouts (rollout.constrain_actions): per row, column t ->
  // the token ids the engine sampled input_ids[n, t] among. The trainer
  // scores those positions under the same mask (model::LogprobOptions::
  // allowed). Empty when no turn of the batch was constrained.
  using AllowedTokens = std::map<int64_t, std::vector<int32_t>>;
  std::vector<AllowedTokens> allowed_tokens;

  int64_t rows() const { return input_ids.defined() ? input_ids.size(0) : 0; }
  int64_t num_loss_tokens() const { return loss_mask.defined() ? loss_mask.sum().item<float>() : 0; }
};

}  // namespace agentrl::rollout
