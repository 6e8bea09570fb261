// Update diagnostics that are not produced by the loss itself: advantage
// statistics, Li's logit-update norm, and filter rates.
//
// Used by the trainer's metrics logging. Batch statistics go through a
// Collective so multi-rank values equal single-process ones.
//
// Thread-safety: pure functions; all ranks must call the collective ones
// together.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "agentrl/algo/filter.h"
#include "agentrl/core/collective.h"

namespace agentrl::algo {

// mean / std (unbiased) / min / max of `values` over entries with mask != 0,
// across ranks. Keys: "<prefix>mean", "<prefix>std", "<prefix>min",
// "<prefix>max", "<prefix>count". Empty selection: all 0.
std::map<std::string, double> masked_stats(const torch::Tensor& values, const torch::Tensor& mask,
                                           Collective& collective, const std::string& prefix);

// Logit-update norm of Li (arXiv 2506.12912): for the softmax policy, the
// norm of the change of the logit vector that one policy-gradient step on
// token c induces is proportional to |A| * ||e_c - p||_2, and
// ||e_c - p||^2 = 1 - 2 P_c + sum_j P_j^2. Returns the mean over loss tokens
// (across ranks) of |A| * sqrt(1 - 2 P_c + sum_j P_j^2), with
// P_c = exp(logprobs) and prob_sq_sum = sum_j P_j^2 per token (from the same
// chunked pass as the entropy). All tensors [N, T].
double logit_update_norm(const torch::Tensor& logprobs, const torch::Tensor& prob_sq_sum,
                         const torch::Tensor& advantages, const torch::Tensor& loss_mask, Collective& collective);
// The per-token terms of that mean, float64 [N, T], 0 where loss_mask is 0
// (the PPO update logs their token mean as actor/logit_update_norm).
torch::Tensor logit_update_norm_per_token(const torch::Tensor& logprobs, const torch::Tensor& prob_sq_sum,
                                          const torch::Tensor& advantages, const torch::Tensor& loss_mask);

// Rates from filter reports, relative to the batch the first filter saw:
// filter/dropped_group_rate, filter/dropped_trajectory_rate,
// filter/masked_trajectory_rate, and per filter "<filter>/flagged_rate"
// (void_turn/flagged_rate is the void-turn rate).
std::map<std::string, double> filter_metrics(const std::vector<FilterReport>& reports);

}  // namespace agentrl::algo
