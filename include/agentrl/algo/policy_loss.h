// PPO-family policy losses, loss aggregation, KL to a reference policy and
// the adaptive KL controller.
//
// Used by the trainer's update step: one call per micro-batch, gradients
// accumulated over the micro-batches of a mini-batch. To make the sum of the
// micro-batch losses equal the loss of the whole mini-batch, pass the
// mini-batch's totals as normalisers (PolicyLossInputs::global_tokens /
// global_sequences); left at 0 they default to this call's own counts.
//
// Shapes: every tensor is [N, T], aligned with TrainBatch::input_ids; entries
// with loss_mask == 0 never contribute. Computation runs in the dtype of
// `logprobs` (float32 in training, float64 in the gradient tests).
//
// Thread-safety: pure functions of their inputs; AdaptiveKlController is a
// plain value (not synchronised).
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "agentrl/algo/algo_config.h"
#include "agentrl/rollout/train_batch.h"
#include "agentrl/rollout/trajectory.h"

namespace agentrl::algo {

struct PolicyLossInputs {
  torch::Tensor logprobs;            // pi_theta, requires grad
  torch::Tensor old_logprobs;        // pi_old (recomputed before the update)
  torch::Tensor behaviour_logprobs;  // engine's log-probs at rollout time; needed when actor.tis_cap > 0
  torch::Tensor advantages;
  torch::Tensor loss_mask;           // 1 on trained tokens
  torch::Tensor ref_logprobs;        // frozen reference; needed when KL is a loss term
  torch::Tensor entropy;             // per-token entropy of pi_theta (with grad); needed when entropy_coef != 0
  // pi_theta's log-prob of each token under the unmasked distribution (with
  // grad; = logprobs at unconstrained tokens); needed when choice_mass_coef != 0.
  torch::Tensor free_logprobs;
  double global_tokens = 0;          // token-mean normaliser (loss tokens of the mini-batch); 0 = sum(loss_mask)
  double global_sequences = 0;       // seq-mean-* normaliser (rows of the mini-batch); 0 = N
  double kl_coef = -1;               // KL coefficient override (adaptive controller); < 0 = actor.kl.coef
  // false: fill only PolicyLossOutput::metric_tensors, so that the call makes
  // no device -> host copy (the trainer reads its metrics once per update).
  bool host_metrics = true;
};

// A loss token is "low-probability" when pi_old gave it less than this.
inline constexpr double kLowProbThreshold = 0.01;

struct PolicyLossOutput {
  // scalar: pg_loss + kl_coef * kl_loss - entropy_coef * entropy_loss + choice_mass_coef * choice_mass_loss
  torch::Tensor loss;
  torch::Tensor pg_loss;  // scalar
  // Diagnostics over loss tokens of this call (plain numbers):
  // pg_loss, clip_frac_high (A > 0, ratio > 1 + eps_high), clip_frac_low
  // (A < 0, ratio < 1 - eps_low), dual_clip_frac (A < 0, ratio > c),
  // approx_kl (mean of log pi_old - log pi_theta), ratio_mean, ratio_max,
  // low_prob_frac (share of tokens with pi_old < kLowProbThreshold),
  // kl (mean reference KL, when computed), entropy (mean, when given),
  // tis_weight_mean and tis_clip_frac (when TIS is on), choice_mass_loss (the
  // aggregated term) and choice_mass_nll (its per-token mean) when
  // choice_mass_coef != 0, tokens.
  // metric_tensors holds them as float64 0-d tensors on the inputs' device;
  // metrics (host numbers) is filled from them when in.host_metrics.
  std::map<std::string, double> metrics;
  std::map<std::string, torch::Tensor> metric_tensors;
};

// How a metric of PolicyLossOutput combines over the micro-batches of a
// mini-batch and over data-parallel ranks, so that the logged value is that
// of the whole mini-batch: kSum for the loss terms (already divided by the
// mini-batch's global normalisers) and `tokens`; kTokenMean for means over
// the call's loss tokens (weighted by the call's share of the mini-batch's
// tokens); kMax for ratio_max; kValue for kl_coef (the same everywhere).
enum class MetricCombine { kSum, kTokenMean, kMax, kValue };

// Metric tensors (0-d, any device) as host numbers, in one device -> host copy.
std::map<std::string, double> metrics_to_host(const std::map<std::string, torch::Tensor>& metrics);
MetricCombine metric_combine(const std::string& name);

// The metric names compute_policy_loss produces under `cfg` (with
// `with_entropy` when PolicyLossInputs::entropy is given): the same on every
// rank, whatever its data.
std::vector<std::string> policy_loss_metric_names(const ActorConfig& cfg, bool with_entropy);

// actor.loss == "ppo_clip" (Schulman et al. 2017, arXiv 1707.06347, eq. 7),
// with clip-higher (DAPO eq. 10: separate eps_low / eps_high), dual clip
// (Ye et al. 2020, arXiv 1912.09729, eq. 5: for A < 0 the loss is bounded by
// -c * A) and truncated importance sampling between the behaviour policy and
// pi_old (Yao et al. 2025, "Your efficient RL framework secretly brings you
// off-policy RL training": w = min(pi_old / pi_behaviour, cap), detached).
// Throws ConfigError on an unknown loss or aggregation mode, and
// agentrl::Error on missing or mis-shaped inputs.
PolicyLossOutput compute_policy_loss(const PolicyLossInputs& inputs, const ActorConfig& config);

// Aggregates a per-token loss matrix as verl's core_algos.agg_loss does:
//  token-mean:              sum(L * m) / tokens           (tokens default sum(m))
//  seq-mean-token-sum:      sum_n (sum_t L * m) / sequences        (default N)
//  seq-mean-token-mean:     sum_n (sum_t L*m / sum_t m) / sequences; rows with
//                           no loss token contribute 0 (verl would give NaN)
//  seq-mean-token-sum-norm: sum(L * m) / norm_length (default T = L.size(1));
//                           Dr.GRPO's constant normaliser (arXiv 2503.20783)
// Note that seq-mean-token-sum-norm, as in verl, does not divide by N.
// compute_policy_loss refuses it without actor.loss_agg_norm_length
// (ConfigError): T of a micro-batch varies with the rows it holds.
torch::Tensor aggregate_loss(const torch::Tensor& loss, const torch::Tensor& mask, const std::string& mode,
                             double tokens = 0, double sequences = 0, double norm_length = 0);

// Per-token KL estimate between pi (logprobs) and pi_ref (ref_logprobs),
// J. Schulman, "Approximating KL divergence" (2020), as verl's kl_penalty:
//  k1: log pi - log pi_ref;  k2: 0.5 (log pi - log pi_ref)^2;
//  k3 / low_var_kl: exp(d) - d - 1 with d = clamp(log pi_ref - log pi, -20, 20),
//  result clamped to [-10, 10].
torch::Tensor kl_estimate(const torch::Tensor& logprobs, const torch::Tensor& ref_logprobs, const std::string& type);

// Sum over each row's loss tokens of the KL estimate: [N] (no grad). For
// actor.kl.use_as == reward: the trainer subtracts coef * (sum over the
// trajectory's rows) from Trajectory::reward before estimating advantages
// (outcome-level form of verl's apply_kl_penalty).
torch::Tensor kl_per_row(const torch::Tensor& logprobs, const torch::Tensor& ref_logprobs,
                         const torch::Tensor& loss_mask, const std::string& type);

// actor.kl.use_as == reward: subtracts coef * (sum of the per-token KL
// estimate of pi_old vs pi_ref over the trajectory's loss tokens, all its
// rows) from each Trajectory::reward, using batch.old_logprobs,
// batch.ref_logprobs, batch.loss_mask and batch.trajectory_of_row. Call before
// the estimator. Returns the mean per-token KL of the batch (the adaptive
// controller's input; 0 without loss tokens). Throws agentrl::Error when
// ref_logprobs is undefined or a row names no trajectory.
double apply_kl_reward_penalty(std::vector<rollout::Trajectory>& trajectories, const rollout::TrainBatch& batch,
                               double coef, const std::string& type);

// Adaptive KL coefficient of Ziegler et al. 2019 (arXiv 1909.08593, sec. 2.2):
// e = clip(kl / target - 1, -0.2, 0.2); coef *= 1 + e * n_steps / horizon.
// With adaptive.enabled false, value() stays at the initial coefficient.
class KlController {
 public:
  explicit KlController(const KlConfig& config);
  double value() const { return value_; }
  void update(double current_kl, double n_steps);
  void set_value(double v) { value_ = v; }  // checkpoint restore

 private:
  KlConfig config_;
  double value_;
};

}  // namespace agentrl::algo
