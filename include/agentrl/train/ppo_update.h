// The policy update of one RL iteration, written to be read against the
// equations (CleanRL style): recompute pi_old (and pi_ref), then PPO epochs
// over mini-batches, each an accumulation of token-budgeted micro-batches,
// one AdamW step per mini-batch with gradient clipping and a non-finite
// guard.
//
// Thread-safety: trainer thread only; optimizer steps take the engine's
// weight lock so that no generation runs on half-updated weights.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "agentrl/algo/policy_loss.h"
#include "agentrl/core/rng.h"
#include "agentrl/model/transformer.h"
#include "agentrl/rollout/train_batch.h"
#include "agentrl/train/experiment_config.h"
#include "agentrl/train/master_weights.h"
#include "agentrl/train/trainer_state.h"

namespace agentrl::train {

// Per-token log p(token | prefix) of `model` for every row of `batch`,
// computed without gradients in micro-batches of `token_budget` padded tokens.
// Optionally also the prediction entropies and sum_j p_j^2. Computed at the
// batch's loss-mask positions only (0 elsewhere): every user reads them there.
struct TokenStatsCpu {
  torch::Tensor logprobs, entropy, prob_sq_sum;  // [N,T]
};
TokenStatsCpu score_batch(model::TransformerLM& model, const rollout::TrainBatch& batch, int64_t token_budget,
                          int64_t chunk_tokens, bool want_prob_sq);

using WeightLock = std::function<std::unique_lock<std::shared_mutex>()>;

// Data-parallel hooks (identity in a single process): sum a scalar over
// ranks, sum the gradients over ranks before clipping/stepping, and combine
// the squared gradient norms of the optimizer's parameters into the global
// one (identity when every rank holds all reduced gradients; a sum over ranks
// with ZeRO-1, where each rank holds those of its own parameters).
struct DistHooks {
  std::function<double(double)> sum = [](double x) { return x; };
  std::function<double(double)> min = [](double x) { return x; };
  std::function<double(double)> max = [](double x) { return x; };
  std::function<void()> sync_gradients = [] {};
  std::function<double(double)> sum_grad_sq = [](double x) { return x; };
};

// Runs actor.ppo_epochs x actor.mini_batches optimizer steps on `batch`
// (whose old_logprobs/ref_logprobs/advantages are filled). `optimizer` steps
// masters.params(); gradients are accumulated into them after every
// micro-batch and the stepped masters are copied into `model`'s weights
// under the weight lock. Returns metrics ("actor/pg_loss",
// "actor/clip_frac_high", "actor/grad_norm", ...): each that of the whole
// mini-batch over all ranks (see algo::metric_combine), averaged over the
// optimizer steps taken; actor/ratio_max is the largest ratio of the update.
// Throws Error when trainer.max_nonfinite_steps consecutive steps were
// non-finite.
std::map<std::string, double> ppo_update(model::TransformerLM& model, MasterWeights& masters,
                                         torch::optim::Optimizer& optimizer, const rollout::TrainBatch& batch,
                                         const ExperimentConfig& cfg,
                                         int64_t total_optimizer_steps, UpdateCounters& counters, Rng& rng,
                                         const WeightLock& lock_weights, const DistHooks& dist = {});

}  // namespace agentrl::train
